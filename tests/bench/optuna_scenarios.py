"""optuna_scenarios.py - the Optuna baseline of the scenario benchmark:
the real optuna library (TPESampler + HyperbandPruner) driven on virtual
time over the same cluster and the same learning curves as sweep's side
(tests/bench/scenario_curve.awk, called once per attempt).

The cluster is bench_scenarios.sh's: 8 GPUs of 80 GiB, two of them in
MIG mode, 4g.40gb + 3g.40gb each: devices 0-5 are whole GPUs, 6 and 8
4g slices, 7 and 9 3g slices (the awk's --mig_from=6). Two setups:
  --workers-per-gpu 1: one Optuna worker per device, 10 trials at once,
      each holding its whole device (what `optuna` users on a shared
      study do: one process per CUDA_VISIBLE_DEVICES);
  --workers-per-gpu 4: 4 workers per whole GPU and 2 per slice, 32 at
      once, the curves run with --share=0.25 --share_slice=0.5 (the
      awk's compute model makes packed trials slower).
Every worker loops as `study.optimize` does with n_jobs workers on one
storage: `study.ask()`, suggest the parameters, walk the curve (after
each epoch's `_seconds` of virtual time `trial.report(value, step)`,
then `trial.should_prune()`), and `study.tell`. Workers interleave in
virtual-time order (a heap of next-event times; ties by the order they
were scheduled), so the pruner and the sampler see exactly what they
would see on a real cluster at that instant.

Optuna's settings, and why they are its strongest documented setup:
  - TPESampler + HyperbandPruner: Optuna's tutorial "Efficient
    Optimization Algorithms", section "Which Sampler and Pruner Should
    be Used?": "For TPESampler, HyperbandPruner is the best" (its
    Kurobako benchmarks); its table for deep learning recommends TPE
    when parallel resources are limited or the space has categorical
    parameters (both hold here).
  - TPESampler(multivariate=True): "The multivariate TPE is reported to
    outperform the independent TPE" (TPESampler's docs, citing BOHB).
  - TPESampler(constant_liar=True): "recommended ... during distributed
    optimization to avoid having multiple workers evaluating similar
    parameter configurations ... if each objective function evaluation
    is costly and the durations of the running states are significant,
    and/or the number of workers is high" (TPESampler's docs): 10 or 32
    workers on trials of hours.
  - n_startup_trials=10, n_ei_candidates=24, the rest at their defaults.
    With HyperbandPruner the sampler sees only its bracket's trials, as
    Optuna does (pruners._filter_study): each bracket pays its own 10
    random start-up trials, as HyperbandPruner's docs warn.
  - HyperbandPruner(min_resource=1, max_resource=EPOCHS,
    reduction_factor=3): the docs' example (min_resource=1,
    max_resource=n_train_iter, reduction_factor=3), max_resource given
    (81 synthetic, 40 recorded epochs) rather than "auto", which would
    prune nothing until the first trial completed. --min-resource 3
    puts its first rung where sweep's ASHA has its min_iter.
  - The objective returns the last epoch's value (what the examples do);
    a completed configuration suggested again is not rerun: its value is
    returned (Optuna's FAQ "How can I ignore duplicated samples?";
    --no-dedupe turns it off). A worker given 100 such duplicates in a
    row stops (the space is spent as far as TPE is concerned).
  - Failures (--fail-rate P, bench_scenarios.sh uses 0.1): an attempt
    dies at a uniformly drawn instant of its whole curve with
    probability P, drawn as sweep's simulator draws it; the trial is
    told FAIL and Optuna's RetryFailedTrialCallback(max_retry=2) (the
    real one) queues a WAITING copy that the next ask takes: rerun from
    scratch (no checkpoints), as a new trial number, so possibly in
    another Hyperband bracket. Its heartbeat delay is not charged.

Accounting, as sweep's side counts it (sweep_engine__gpus_held):
GPU-seconds busy = each attempt's duration times the share of a
physical GPU it held: 1 (a whole GPU), 0.25 (packed 4 to a GPU), 4/7 or
3/7 (a 4g or 3g slice of a 7-slot GPU), times 0.5 when packed 2 to a
slice. A budget (--budget-gpu-hours) works as sweep's `budget:` does:
once the GPU-hours of ended and running attempts reach it no new trial
starts, the running ones finish and queued retries still run; --trials
N stops after N configurations were started (retries and deduplicated
duplicates not counted). A --target is reached when any trial first
reports a value at least that good (as bench_scenarios.sh's reach():
intermediate values count); "best" is the best value reported at all.

  /usr/bin/python3 tests/bench/optuna_scenarios.py [--family synthetic|recorded]
      [--seed N] [--workers-per-gpu 1|4] [--budget-gpu-hours H] [--trials N]
      [--target VALUE|best]... [--fail-rate P] [--min-resource R]
      [--no-pruner] [--no-dedupe] [--no-multivariate] [--no-constant-liar]
      [--startup-s S] [--json]
  /usr/bin/python3 tests/bench/optuna_scenarios.py --check

--check replays a few trials on one worker with the pruner off and
prints each attempt's simulated duration and GPU-seconds beside the sum
of the awk's `_seconds` (and the held share); exit 1 on a mismatch.
Needs Debian's python3-optuna (3.1 here). Not a test: prints figures.
"""

import argparse
import heapq
import json
import math
import os
import random
import subprocess
import sys
import time
import warnings

import optuna
from optuna.storages import RetryFailedTrialCallback
from optuna.trial import TrialState

HERE = os.path.dirname(os.path.abspath(__file__))
AWK = os.path.join(HERE, "scenario_curve.awk")
CURVES = os.path.join(HERE, "mlp_curves.csv")
MIG_FROM = 6
N_GPUS = 8  # physical GPUs: the capacity occupancy is counted against
# device index -> the share of a physical GPU it is: 6 whole GPUs, then
# 4g.40gb + 3g.40gb on each of two GPUs in MIG mode
DEVICE_GPU = [1.0] * 6 + [4 / 7, 3 / 7, 4 / 7, 3 / 7]
EPOCHS = {"synthetic": 81, "recorded": 40}
METRIC = {"synthetic": "loss", "recorded": "val_loss"}
DUPLICATES_IN_A_ROW = 100


def suggest(trial, family):
    """The sweep's space, in Optuna's words (bench_scenarios.sh's)."""
    if family == "synthetic":
        return {
            "lr": trial.suggest_float("lr", 1e-4, 0.1, log=True),
            "dropout": trial.suggest_float("dropout", 0.0, 0.5),
            "batch_size": trial.suggest_categorical("batch_size", [32, 64, 128, 256]),
            "model": trial.suggest_categorical("model", ["small", "large"]),
        }
    return {
        "lr": trial.suggest_categorical("lr", [0.1, 0.03, 0.01, 0.003, 0.001, 0.0003]),
        "hidden": trial.suggest_categorical("hidden", [32, 128, 256]),
        "optimizer": trial.suggest_categorical("optimizer", ["sgd", "adam"]),
        "dropout": trial.suggest_categorical("dropout", [0.0, 0.25, 0.5]),
        "batch_size": trial.suggest_categorical("batch_size", [32, 128]),
    }


class Curves:
    """The awk surrogate, one subprocess per attempt."""

    def __init__(self, family):
        self.family = family
        self.metric = METRIC[family]
        self.calls = 0
        self.seconds = 0.0

    def run(self, params, device, packed):
        argv = ["awk", "-f", AWK, "--", "--mig_from=%d" % MIG_FROM]
        if self.family == "recorded":
            argv += ["--family=recorded", "--curves=" + CURVES]
        if packed:
            argv += ["--share=0.25", "--share_slice=0.5"]
        for k, v in params.items():
            argv.append("--%s=%s" % (k, repr(v) if isinstance(v, float) else v))
        env = dict(os.environ, SWEEP_SIMULATE="1", CUDA_VISIBLE_DEVICES=str(device))
        t0 = time.perf_counter()
        out = subprocess.run(argv, env=env, check=True, capture_output=True,
                             text=True).stdout
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        steps = []
        for line in out.splitlines():
            if line.startswith("@metrics "):
                m = json.loads(line[len("@metrics "):])
                steps.append((m["step"], m[self.metric], m["_seconds"]))
        if not steps:
            raise RuntimeError("no curve for %s" % params)
        return steps


class Sim:
    def __init__(self, a, curves=None):
        self.a = a
        self.curves = curves or Curves(a.family)
        self.rng = random.Random(a.seed)
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(
            seed=a.seed, n_startup_trials=10, multivariate=a.multivariate,
            constant_liar=a.constant_liar)
        if a.pruner:
            pruner = optuna.pruners.HyperbandPruner(
                min_resource=a.min_resource, max_resource=EPOCHS[a.family],
                reduction_factor=3)
        else:
            pruner = optuna.pruners.NopPruner()
        self.study = optuna.create_study(
            study_name="scenario-%s-%d" % (a.family, a.seed), direction="minimize",
            sampler=sampler, pruner=pruner)
        self.retry = RetryFailedTrialCallback(max_retry=a.retries)
        # workers: (device index, share of a physical GPU held, packed)
        self.workers = []
        for d, g in enumerate(DEVICE_GPU[:a.devices]):
            n = 1 if a.workers_per_gpu == 1 else (4 if g == 1.0 else 2)
            for _ in range(n):
                self.workers.append((d, g / n, a.workers_per_gpu > 1))
        self.heap = []
        self.seq = 0
        self.now = 0.0
        self.running = {}  # worker -> attempt
        self.spent_ended = 0.0  # GPU-seconds of ended attempts
        self.lost = 0.0  # GPU-seconds of failed attempts
        self.attempts = []  # ended attempts, for --check
        self.started = 0  # configurations started (not retries)
        self.n_attempts = self.n_complete = self.n_pruned = self.n_failed = 0
        self.n_dupes = 0
        self.waiting = 0  # queued retries
        self.dupes_in_a_row = [0] * len(self.workers)
        self.best = math.inf
        self.best_at = None
        self.targets = [{"target": t, "reached": False} for t in a.targets
                        if t != "best"]
        self.time_ask = self.time_prune = 0.0
        self.last_end = 0.0

    def push(self, t, w, kind):
        heapq.heappush(self.heap, (t, self.seq, w, kind))
        self.seq += 1

    def spent(self):
        """GPU-seconds of ended and running attempts, now."""
        s = self.spent_ended
        for at in self.running.values():
            s += (self.now - at["start"]) * at["share"]
        return s

    def budget_spent(self):
        b = self.a.budget_gpu_hours
        return b is not None and self.spent() >= b * 3600

    def may_start_new(self):
        if self.a.trials is not None and self.started >= self.a.trials:
            return False
        return not self.budget_spent()

    def start(self, w):
        """Worker w asks for its next trial, or stops."""
        device, share, packed = self.workers[w]
        while True:
            if self.waiting == 0 and not self.may_start_new():
                return
            t0 = time.perf_counter()
            trial = self.study.ask()
            params = suggest(trial, self.a.family)
            self.time_ask += time.perf_counter() - t0
            with warnings.catch_warnings():  # system_attrs: deprecated in 3.1
                warnings.simplefilter("ignore", FutureWarning)
                retry = "failed_trial" in trial.system_attrs
            if retry:
                self.waiting -= 1
            elif self.a.dedupe:
                prev = self.duplicate_of(trial)
                if prev is not None:  # Optuna's FAQ: return the stored value
                    self.study.tell(trial, prev)
                    self.n_dupes += 1
                    self.dupes_in_a_row[w] += 1
                    if self.dupes_in_a_row[w] >= DUPLICATES_IN_A_ROW:
                        return
                    continue
            break
        self.dupes_in_a_row[w] = 0
        if not retry:
            self.started += 1
        steps = self.curves.run(params, device, packed)
        total = self.a.startup_s + sum(s for _, _, s in steps)
        u, v = self.rng.random(), self.rng.random()
        fail_at = self.now + v * total if u < self.a.fail_rate else None
        at = {"trial": trial, "params": params, "steps": steps, "k": 0,
              "start": self.now, "share": share, "device": device,
              "fail_at": fail_at, "next": self.now + self.a.startup_s}
        self.running[w] = at
        self.n_attempts += 1
        self.schedule(w)

    def duplicate_of(self, trial):
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            if t.params == trial.params:
                return t.value
        return None

    def schedule(self, w):
        at = self.running[w]
        t = at["next"] + at["steps"][at["k"]][2]
        if at["fail_at"] is not None and at["fail_at"] < t:
            self.push(at["fail_at"], w, "fail")
        else:
            self.push(t, w, "epoch")

    def end(self, w, outcome):
        at = self.running.pop(w)
        gpu_s = (self.now - at["start"]) * at["share"]
        self.spent_ended += gpu_s
        if outcome == "failed":
            self.lost += gpu_s
        self.last_end = max(self.last_end, self.now)
        self.attempts.append({"params": at["params"], "device": at["device"],
                              "share": at["share"], "outcome": outcome,
                              "seconds": self.now - at["start"], "gpu_s": gpu_s,
                              "epochs_s": at["next"] - at["start"],
                              "reported": at["k"] + (outcome != "failed"),
                              "trial": at["trial"].number,
                              "curve_s": self.a.startup_s +
                              sum(s for _, _, s in at["steps"])})
        self.push(self.now, w, "start")

    def epoch(self, w):
        at = self.running[w]
        step, value, secs = at["steps"][at["k"]]
        at["next"] += secs
        trial = at["trial"]
        t0 = time.perf_counter()
        trial.report(value, step)
        self.note(value, trial)
        last = at["k"] == len(at["steps"]) - 1
        # not asked after the last epoch: nothing is left to save, and
        # the trial then counts as complete
        prune = not last and trial.should_prune()
        self.time_prune += time.perf_counter() - t0
        if last:
            self.study.tell(trial, value)
            self.n_complete += 1
            self.end(w, "finished")
        elif prune:
            self.study.tell(trial, state=TrialState.PRUNED)
            self.n_pruned += 1
            self.end(w, "pruned")
        else:
            at["k"] += 1
            self.schedule(w)

    def fail(self, w):
        trial = self.running[w]["trial"]
        self.study.tell(trial, state=TrialState.FAIL)
        self.n_failed += 1
        before = len(self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))
        self.retry(self.study, self.study.get_trials(deepcopy=False)[trial.number])
        after = len(self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))
        self.waiting += after - before
        self.end(w, "failed")

    def note(self, value, trial):
        spent = None
        if value < self.best:
            spent = self.spent()
            self.best = value
            self.best_at = {"hours": self.now / 3600, "gpu_hours": spent / 3600,
                            "trial": trial.number}
        for tg in self.targets:
            if not tg["reached"] and value <= tg["target"]:
                spent = self.spent() if spent is None else spent
                tg.update(reached=True, hours=self.now / 3600,
                          gpu_hours=spent / 3600, trial=trial.number)

    def run(self):
        t0 = time.perf_counter()
        for w in range(len(self.workers)):
            self.push(0.0, w, "start")
        while self.heap:
            self.now, _, w, kind = heapq.heappop(self.heap)
            getattr(self, kind)(w)
        self.runtime = time.perf_counter() - t0
        return self

    def result(self):
        a = self.a
        busy = self.spent_ended
        wall = self.last_end
        try:
            best_complete = self.study.best_value
            best_params = self.study.best_params
        except ValueError:
            best_complete, best_params = None, None
        targets = list(self.targets)
        if "best" in a.targets and self.best_at:
            targets.append(dict(target=self.best, reached=True, **self.best_at))
        return {
            "side": "optuna",
            "optuna_version": optuna.__version__,
            "family": a.family, "metric": METRIC[a.family], "seed": a.seed,
            "workers_per_gpu": a.workers_per_gpu, "workers": len(self.workers),
            "settings": {
                "sampler": "TPESampler(multivariate=%s, constant_liar=%s, "
                           "n_startup_trials=10, seed=%d)"
                           % (a.multivariate, a.constant_liar, a.seed),
                "pruner": ("HyperbandPruner(min_resource=%d, max_resource=%d, "
                           "reduction_factor=3)" % (a.min_resource, EPOCHS[a.family])
                           if a.pruner else "NopPruner()"),
                "dedupe": a.dedupe, "fail_rate": a.fail_rate, "retries": a.retries,
                "startup_s": a.startup_s,
                "budget_gpu_hours": a.budget_gpu_hours, "trials_cap": a.trials,
            },
            "trials": self.started, "attempts": self.n_attempts,
            "completed": self.n_complete, "pruned": self.n_pruned,
            "failed_attempts": self.n_failed, "duplicates": self.n_dupes,
            "wall_hours": wall / 3600, "gpu_hours_busy": busy / 3600,
            "gpu_hours_lost_to_failures": self.lost / 3600,
            "occupancy": busy / (N_GPUS * wall) if wall > 0 else 0.0,
            "best": self.best if self.best < math.inf else None,
            "best_at": self.best_at,
            "best_complete": best_complete, "best_params": best_params,
            "targets": targets,
            "runtime_s": round(self.runtime, 2),
            "runtime_ask_s": round(self.time_ask, 2),
            "runtime_report_prune_s": round(self.time_prune, 2),
            "runtime_awk_s": round(self.curves.seconds, 2),
            "trials_per_runtime_hour": round(3600 * self.started / self.runtime)
            if self.runtime > 0 else None,
        }


def table(r):
    s = r["settings"]
    print("optuna %s, %s curves, seed %d: %d workers (%d per GPU) on %d GPUs "
          "(6 whole, 2 as 4g.40gb+3g.40gb)" % (
              r["optuna_version"], r["family"], r["seed"], r["workers"],
              r["workers_per_gpu"], N_GPUS))
    print("  %s + %s; dedupe %s; fail rate %g, %d retries" % (
        s["sampler"], s["pruner"], "on" if s["dedupe"] else "off",
        s["fail_rate"], s["retries"]))
    lim = []
    if s["budget_gpu_hours"] is not None:
        lim.append("budget %g GPU-hours" % s["budget_gpu_hours"])
    if s["trials_cap"] is not None:
        lim.append("at most %d trials" % s["trials_cap"])
    print("  limit: " + (", ".join(lim) or "none"))
    rows = [
        ("trials (configurations run)", "%d" % r["trials"]),
        ("attempts / completed / pruned / failed",
         "%d / %d / %d / %d" % (r["attempts"], r["completed"], r["pruned"],
                                r["failed_attempts"])),
        ("duplicates answered from the study", "%d" % r["duplicates"]),
        ("wall-clock of the whole study (h)", "%.1f" % r["wall_hours"]),
        ("GPU-hours busy", "%.1f" % r["gpu_hours_busy"]),
        ("GPU-hours in failed attempts", "%.1f" % r["gpu_hours_lost_to_failures"]),
        ("occupancy", "%.1f%%" % (100 * r["occupancy"])),
        ("best %s reported" % r["metric"], "%.5f" % r["best"] if r["best"] is not None
         else "-"),
        ("best %s of a completed trial" % r["metric"],
         "%.5f" % r["best_complete"] if r["best_complete"] is not None else "-"),
    ]
    for tg in r["targets"]:
        if tg["reached"]:
            v = "%.1f h, %.1f GPU-h (trial %d)" % (tg["hours"], tg["gpu_hours"],
                                                   tg["trial"])
        else:
            v = "not reached"
        rows.append(("to %s <= %.5f" % (r["metric"], tg["target"]), v))
    rows.append(("runtime (s): all / ask / report+prune / awk",
                 "%.1f / %.1f / %.1f / %.1f" % (
                     r["runtime_s"], r["runtime_ask_s"], r["runtime_report_prune_s"],
                     r["runtime_awk_s"])))
    for k, v in rows:
        print("  %-44s %s" % (k, v))


def check():
    """One worker, no pruner, no failures: each attempt's simulated time
    is the sum of its curve's `_seconds`, its GPU-seconds that times
    the share it held; the whole study's wall time the sum of all."""
    ok = True
    print("%-9s %-4s %-6s %-42s %12s %12s %10s %10s" % (
        "family", "dev", "share", "params", "simulated s", "awk sum s",
        "GPU-s", "expected"))
    for family, devices, wpg in (("synthetic", 1, 1), ("recorded", 1, 1),
                                 ("synthetic", 10, 4), ("recorded", 10, 1)):
        a = parse([
            "--family", family, "--seed", "7", "--trials", "3" if devices == 1 else "40",
            "--no-pruner", "--workers-per-gpu", str(wpg)])
        a.devices = devices
        sim = Sim(a).run()
        if devices == 1:
            wall = sum(x["seconds"] for x in sim.attempts)
            if abs(sim.last_end - wall) > 1e-6:
                ok = False
        shown = sim.attempts if devices == 1 else [
            x for x in sim.attempts if x["device"] in (0, 6, 7)][:4]
        for x in shown:
            # the sum straight from a fresh run of the awk
            argv = ["awk", "-f", AWK, "--", "--mig_from=%d" % MIG_FROM]
            if family == "recorded":
                argv += ["--family=recorded", "--curves=" + CURVES]
            if wpg > 1:
                argv += ["--share=0.25", "--share_slice=0.5"]
            argv += ["--%s=%s" % (k, repr(v) if isinstance(v, float) else v)
                     for k, v in x["params"].items()]
            out = subprocess.run(argv, check=True, capture_output=True, text=True,
                                 env=dict(os.environ, SWEEP_SIMULATE="1",
                                          CUDA_VISIBLE_DEVICES=str(x["device"]))).stdout
            awk_s = sum(json.loads(l[9:])["_seconds"] for l in out.splitlines()
                        if l.startswith("@metrics "))
            n = 1 if wpg == 1 else (4 if x["device"] < 6 else 2)
            share = DEVICE_GPU[x["device"]] / n
            good = (abs(x["seconds"] - awk_s) < 1e-6 and
                    abs(x["gpu_s"] - awk_s * share) < 1e-6)
            ok = ok and good
            p = ",".join("%s=%s" % (k, ("%.3g" % v) if isinstance(v, float) else v)
                         for k, v in x["params"].items())
            print("%-9s %-4d %-6.4f %-42s %12.3f %12.3f %10.1f %10.1f %s" % (
                family, x["device"], share, p[:42], x["seconds"], awk_s, x["gpu_s"],
                awk_s * share, "ok" if good else "MISMATCH"))
        if devices == 1:
            print("%-9s whole study: wall %.3f s, sum of attempts %.3f s" % (
                family, sim.last_end, sum(x["seconds"] for x in sim.attempts)))
    # with the pruner and failures: a pruned or finished attempt lasts
    # exactly its reported epochs, a failed one dies inside its curve,
    # no trial is retried more than --retries times, and the busy
    # GPU-seconds are the attempts' sum
    for family in ("synthetic", "recorded"):
        a = parse(["--family", family, "--seed", "3", "--trials", "60",
                   "--fail-rate", "0.3", "--workers-per-gpu", "4"])
        sim = Sim(a).run()
        r = sim.result()
        bad = 0
        for x in sim.attempts:
            if x["outcome"] == "failed":
                good = x["epochs_s"] <= x["seconds"] < x["curve_s"]
            else:
                good = abs(x["seconds"] - x["epochs_s"]) < 1e-6
            bad += not good
        chain = max([len(RetryFailedTrialCallback.retry_history(t))
                     for t in sim.study.get_trials(deepcopy=False)] + [0])
        busy = sum(x["gpu_s"] for x in sim.attempts) / 3600
        good = (bad == 0 and r["attempts"] == len(sim.attempts) and
                r["attempts"] == r["completed"] + r["pruned"] + r["failed_attempts"] and
                chain <= a.retries and abs(busy - r["gpu_hours_busy"]) < 1e-9)
        ok = ok and good
        print("%-9s pruner on, fail rate 0.3: %d attempts (%d finished, %d pruned, "
              "%d failed), %d lasting other than their epochs, retries of one "
              "trial at most %d, busy %.3f GPU-h = sum %.3f: %s" % (
                  family, r["attempts"], r["completed"], r["pruned"],
                  r["failed_attempts"], bad, chain, r["gpu_hours_busy"], busy,
                  "ok" if good else "MISMATCH"))
    print("check: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--family", choices=("synthetic", "recorded"), default="synthetic")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers-per-gpu", type=int, choices=(1, 4), default=1)
    p.add_argument("--budget-gpu-hours", type=float)
    p.add_argument("--trials", type=int)
    p.add_argument("--target", dest="targets", action="append", default=[],
                   help="a value, or 'best' (when it first reported its best)")
    p.add_argument("--fail-rate", type=float, default=0.0)
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("--min-resource", type=int, default=1)
    p.add_argument("--startup-s", type=float, default=0.0,
                   help="virtual seconds an attempt holds its device before epoch 1")
    p.add_argument("--no-pruner", dest="pruner", action="store_false")
    p.add_argument("--no-dedupe", dest="dedupe", action="store_false")
    p.add_argument("--no-multivariate", dest="multivariate", action="store_false")
    p.add_argument("--no-constant-liar", dest="constant_liar", action="store_false")
    p.add_argument("--json", action="store_true")
    p.add_argument("--check", action="store_true")
    a = p.parse_args(argv)
    a.targets = [t if t == "best" else float(t) for t in a.targets]
    a.devices = len(DEVICE_GPU)
    if a.budget_gpu_hours is None and a.trials is None and not a.check:
        p.error("give --budget-gpu-hours or --trials")
    return a


def main(argv):
    a = parse(argv)
    if a.check:
        return check()
    r = Sim(a).run().result()
    if a.json:
        print(json.dumps(r))
    else:
        table(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
