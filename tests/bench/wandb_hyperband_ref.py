#!/usr/bin/env python3
"""Hyperband decisions of sweep beside W&B's own, on the same cases.

Runs hyperband_stop_runs from a checkout of github.com/wandb/sweeps (its
src/sweeps/hyperband_stopping.py, executed with its package imports
replaced by minimal stand-ins: the run states, SweepRun.metric_history
with filter_invalid, and the schema's defaults eta 3 and strict true)
and sweep's stopper (stopping_cases) on random cases: both band forms,
several eta, strict or not, minimize or maximize, NaN values, ties,
running, finished and crashed runs. Prints how many cases, how many
stopped something, how many W&B refused (no band: it raises, so it
stops nothing; sweep stops nothing either), and how many differ (must
be 0). With W&B's tests/data/hyper-data.yaml present, also prints the
counts of its relaxed test (W&B asserts 15, 10 and 5).

Needs Debian's /usr/bin/python3 with python3-numpy and python3-yaml.

  tests/bench/wandb_hyperband_ref.py WANDB_SWEEPS_DIR \\
      build/release/tests/bench/stopping_cases [SEED [CASES]]
"""
import os
import random
import subprocess
import sys
from enum import Enum
from numbers import Number

import numpy as np


class RunState(str, Enum):
    running = "running"
    finished = "finished"
    crashed = "crashed"


def is_number(x):
    try:
        return (np.isscalar(x) and np.isfinite(x) and isinstance(x, Number)
                and not isinstance(x, bool))
    except TypeError:
        return False


class SweepRun:
    def __init__(self, name, state, history):
        self.name, self.state, self.history = name, state, history
        self.early_terminate_info = None

    def metric_history(self, name, filter_invalid=False):
        return [d[name] for d in self.history if name in d and
                not (filter_invalid and not is_number(d[name]))]


def fill_defaults(config):
    config["early_terminate"].setdefault("eta", 3)
    config["early_terminate"].setdefault("strict", True)
    config["metric"].setdefault("goal", "minimize")
    return config


def load_wandb(root):
    path = os.path.join(root, "src", "sweeps", "hyperband_stopping.py")
    src = "\n".join(line for line in open(path).read().splitlines()
                    if not line.startswith("from ."))
    ns = {"RunState": RunState, "SweepRun": SweepRun, "SweepConfig": dict}
    exec(compile(src, path, "exec"), ns)
    ns["hyperband_baseline_validate_and_fill"] = fill_defaults
    return ns["hyperband_stop_runs"]


def value(rng):
    r = rng.random()
    if r < 0.05:
        return float("nan")
    return float(rng.randint(0, 6)) if r < 0.6 else round(rng.uniform(-5, 5), 3)


def random_case(rng):
    eta = rng.choice([2, 3, 1.5, 2.5, 4, 1.2])
    if rng.random() < 0.5:
        et = {"type": "hyperband", "min_iter": rng.randint(1, 5), "eta": eta}
        head = [et["min_iter"], 0, -1]
    else:
        et = {"type": "hyperband", "max_iter": rng.randint(1, 60),
              "s": rng.randint(0, 5), "eta": eta}
        head = [0, et["max_iter"], et["s"]]
    strict = True
    if rng.random() < 0.8:
        strict = et["strict"] = rng.random() < 0.5
    maximize = rng.random() < 0.5
    runs = []
    for i in range(rng.randint(1, 12)):
        vals = [value(rng) for _ in range(rng.randint(0, 40))]
        state = rng.choice([RunState.running, RunState.running,
                            RunState.finished, RunState.crashed])
        runs.append((state, vals))
    config = {"metric": {"name": "m",
                         "goal": "maximize" if maximize else "minimize"},
              "early_terminate": et}
    text = "%d %d %d %r %d %d %d\n" % (*head, float(eta), strict, maximize,
                                       len(runs))
    for state, vals in runs:
        text += "%d %d %s\n" % (state == RunState.running, len(vals),
                                " ".join(repr(x) for x in vals))
    return config, runs, text


def wandb_answer(stop_runs, config, runs):
    sruns = [SweepRun(str(i), state, [{"m": x} for x in vals])
             for i, (state, vals) in enumerate(runs)]
    try:
        return str(sorted(int(r.name) for r in stop_runs(sruns, config)))
    except ValueError:
        return "error"


def ours(binary, text):
    out = subprocess.run([binary], input=text, capture_output=True,
                         text=True, check=True)
    return out.stdout.splitlines()


def extensive(root, binary):
    path = os.path.join(root, "tests", "data", "hyper-data.yaml")
    if not os.path.exists(path):
        return
    import yaml
    data = yaml.safe_load(open(path))["data"]
    stopped, counts = set(), []
    for cut in (32, 47, None):
        alive = [i for i in range(len(data)) if i not in stopped]
        text = "30 0 -1 1.5 0 1 %d\n" % len(alive)
        for i in alive:
            h = data[i] if cut is None else data[i][:cut]
            text += "1 %d %s\n" % (len(h), " ".join(repr(float(x["metric"]))
                                                    for x in h))
        got = eval(ours(binary, text)[0])
        counts.append(len(got))
        stopped |= {alive[j] for j in got}
    print("W&B's relaxed test on its data: sweep stops %s (W&B asserts "
          "[15, 10, 5])" % counts)


def main():
    root, binary = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 10000
    stop_runs = load_wandb(root)
    rng = random.Random(seed)
    cases = [random_case(rng) for _ in range(n)]
    want = [wandb_answer(stop_runs, c, r) for c, r, _ in cases]
    got = ours(binary, "".join(t for _, _, t in cases))
    differ = 0
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g and not (w == "error" and g == "[]"):
            differ += 1
            if differ <= 5:
                print("case %d: W&B %s, sweep %s\n%s" % (i, w, g, cases[i][2]))
    print("cases %d, with runs stopped %d, refused by W&B %d, answers that "
          "differ %d" % (n, sum(w not in ("error", "[]") for w in want),
                         want.count("error"), differ + abs(len(want) - len(got))))
    extensive(root, binary)


if __name__ == "__main__":
    main()
