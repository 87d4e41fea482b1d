"""The same study in Optuna and in sweep: TPE with the median rule, 16
trials of a small PyTorch MLP on scikit-learn's bundled digits, one trial
at a time, each trained for EPOCHS epochs and reporting its validation
loss after each.

- Optuna, as its docs recommend: one process, TPESampler and
  MedianPruner (their defaults), trials in-process; the process is timed
  from its start, imports included.
- sweep: `method: tpe`, `early_terminate: {type: median}`, `run_cap: 16`,
  `parallel: 1`, the trials served by `sweep.agent` in one long-lived
  worker (imports and data paid once); `sweep run` is timed from its
  start.
- sweep.run: the same study from a script, `sweep.run(config,
  objective)` with its default long-lived workers, the script timed from
  its start (its own imports included).

With BENCH_ONCE=1, a fourth side: sweep.run(..., workers=False), a
process per trial, as sweep.run was before it used workers.

The sides run interleaved, REPEATS times (3). Prints, in one run:
each side's median wall time, its best validation loss, the
trials pruned or stopped, and the ratio. Not a test: nothing is asserted.

Usage: /usr/bin/python3 tests/bench/bench_optuna_agent.py [SWEEP [EPOCHS
[REPEATS]]]
(default: build/release/orchestrator/sweep, else build/debug, 10 epochs).
Needs Debian's python3-optuna, python3-torch and python3-sklearn.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "examples", "clients", "python")
TRIALS = 16

TRAIN = """
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

torch.set_num_threads(1)
_x, _y = load_digits(return_X_y=True)
_xtr, _xva, _ytr, _yva = train_test_split(_x / 16.0, _y, test_size=0.25,
                                          random_state=0)
XTR = torch.tensor(_xtr, dtype=torch.float32)
XVA = torch.tensor(_xva, dtype=torch.float32)
YTR, YVA = torch.tensor(_ytr), torch.tensor(_yva)


def train(lr, hidden, dropout, epochs, report):
    '''Trains; report(epoch, val_loss) returns True to stop.'''
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(),
                                torch.nn.Dropout(dropout),
                                torch.nn.Linear(hidden, 10))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    best = float("inf")
    for epoch in range(1, epochs + 1):
        model.train()
        perm = torch.randperm(len(XTR))
        for i in range(0, len(XTR), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss_fn(model(XTR[idx]), YTR[idx]).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = float(loss_fn(model(XVA), YVA))
        best = min(best, val)
        if report(epoch, val):
            return best, True
    return best, False
"""

OPTUNA = TRAIN + """
import sys, optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
EPOCHS = int(sys.argv[1])


def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    hidden = trial.suggest_categorical("hidden", [32, 64, 128])
    dropout = trial.suggest_float("dropout", 0.0, 0.5)

    def report(epoch, val):
        trial.report(val, epoch)
        return trial.should_prune()

    best, pruned = train(lr, hidden, dropout, EPOCHS, report)
    if pruned:
        raise optuna.TrialPruned()
    return best


study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=1),
                            pruner=optuna.pruners.MedianPruner())
study.optimize(objective, n_trials=%d)
pruned = sum(t.state == optuna.trial.TrialState.PRUNED for t in study.trials)
print("best", study.best_value, "pruned", pruned)
""" % TRIALS

WORKER = """
import os, sys
sys.path.insert(0, %r)
import sweep
""" + TRAIN + """
EPOCHS = int(os.environ["BENCH_EPOCHS"])


def run(config):
    train(config["lr"], config["hidden"], config["dropout"], EPOCHS,
          lambda epoch, val: sweep.report(step=epoch, val_loss=val))


sweep.agent(run)
"""

DRIVER = """
import json, os, sys
sys.path.insert(0, %r)
import sweep
""" + TRAIN + """
EPOCHS = int(os.environ["BENCH_EPOCHS"])


def objective(config):
    train(config["lr"], config["hidden"], config["dropout"], EPOCHS,
          lambda epoch, val: sweep.report(step=epoch, val_loss=val))


if __name__ == "__main__":
    sweep.run(json.loads(os.environ["BENCH_CONFIG"]), objective,
              sweep_bin=os.environ["BENCH_SWEEP"], quiet=True,
              workers=os.environ["BENCH_WORKERS"] == "1")
"""

CONFIG = {
    "method": "tpe", "run_cap": TRIALS, "parallel": 1, "seed": 1,
    "metric": {"name": "val_loss", "goal": "minimize"},
    "early_terminate": {"type": "median"},
    "parameters": {
        "lr": {"distribution": "log_uniform_values", "min": 0.0001,
               "max": 0.1},
        "hidden": {"values": [32, 64, 128]},
        "dropout": {"min": 0.0, "max": 0.5}}}

SWEEP_FILE = """method: tpe
metric: {name: val_loss, goal: minimize}
run_cap: %d
parallel: 1
seed: 1
early_terminate: {type: median}
parameters:
  lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
  hidden: {values: [32, 64, 128]}
  dropout: {min: 0.0, max: 0.5}
command: [%s, worker.py]
""" % (TRIALS, sys.executable)


def optuna_side(d, epochs):
    with open(os.path.join(d, "optuna_study.py"), "w") as f:
        f.write(OPTUNA)
    t = time.monotonic()
    p = subprocess.run([sys.executable, "optuna_study.py", str(epochs)],
                       cwd=d, stdout=subprocess.PIPE, universal_newlines=True,
                       check=True)
    wall = time.monotonic() - t
    words = p.stdout.split()
    return wall, float(words[1]), int(words[3])


def sweep_side(binary, d, epochs, how):
    """how: "agent" (`sweep run` of a sweep file whose program calls
    sweep.agent), "run" (a script calling sweep.run(config, objective),
    timed from the script's start) or "once" (the same, workers=False: a
    process per trial)."""
    with open(os.path.join(d, "worker.py"), "w") as f:
        f.write(WORKER % PACKAGE)
    with open(os.path.join(d, "driver.py"), "w") as f:
        f.write(DRIVER % PACKAGE)
    with open(os.path.join(d, "study.yaml"), "w") as f:
        f.write(SWEEP_FILE)
    home = os.path.join(d, "home-" + how)
    shutil.rmtree(home, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWEEP_")}
    env.update(SWEEP_HOME=home, SWEEP_GIT="off", BENCH_EPOCHS=str(epochs),
               BENCH_CONFIG=json.dumps(CONFIG), BENCH_SWEEP=binary,
               BENCH_WORKERS="0" if how == "once" else "1")
    argv = ([binary, "run", "study.yaml", "--quiet"] if how == "agent"
            else [sys.executable, "driver.py"])
    t = time.monotonic()
    subprocess.run(argv, cwd=d, env=env, stdout=subprocess.DEVNULL,
                   check=True)
    wall = time.monotonic() - t

    def q(sql):
        return subprocess.run([binary, "query", "--csv", sql], cwd=d, env=env,
                              stdout=subprocess.PIPE, universal_newlines=True,
                              check=True).stdout.splitlines()[-1]

    best = float(q("select min(value) from metrics where name = 'val_loss'"))
    stopped = int(q("select count(*) from runs where state = 'stopped'"))
    procs = int(q("select count(distinct json_extract(job, '$')) from "
                  "(select substr(job, 1, instr(job, ' ')) as job from "
                  "attempts)"))
    return wall, best, stopped, procs


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    if not binary:
        for preset in ("release", "debug"):
            binary = os.path.join(ROOT, "build", preset, "orchestrator",
                                  "sweep")
            if os.path.exists(binary):
                break
    binary = os.path.abspath(binary)
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    once = os.environ.get("BENCH_ONCE") == "1"
    d = tempfile.mkdtemp(prefix="bench-optuna-agent-")
    sides = {"optuna": [], "agent": [], "run": [], "once": []}
    try:
        for i in range(repeats):  # interleaved: the load hits each alike
            sides["optuna"].append(optuna_side(d, epochs))
            for how in ("agent", "run") + (("once",) if once else ()):
                sides[how].append(sweep_side(binary, d, epochs, how))
            print("repeat %d: Optuna %.1f s, sweep.agent %.1f s, sweep.run "
                  "%.1f s%s" % (i + 1, sides["optuna"][i][0],
                                sides["agent"][i][0], sides["run"][i][0],
                                ", sweep.run(workers=False) %.1f s"
                                % sides["once"][i][0] if once else ""),
                  flush=True)
    finally:
        shutil.rmtree(d)

    def med(side, k):
        return statistics.median(r[k] for r in sides[side])
    ow = med("optuna", 0)
    print("%d trials, TPE + the median rule, %d epochs of an MLP on digits,"
          " one at a time (medians of %d interleaved repeats):"
          % (TRIALS, epochs, repeats))
    print("  Optuna in-process (reference)  %6.1f s  best val_loss %.4f  "
          "%4.1f pruned" % (ow, med("optuna", 1), med("optuna", 2)))
    for side, label in (("agent", "sweep, sweep.agent          "),
                        ("run", "sweep, sweep.run(objective) "),
                        ("once", "sweep.run(workers=False)    ")):
        if not sides[side]:
            continue
        sw = med(side, 0)
        print("  %s   %6.1f s  best val_loss %.4f  %4.1f stopped  %d worker "
              "process(es)  (%.2fx Optuna's time)"
              % (label, sw, med(side, 1), med(side, 2), med(side, 3),
                 sw / ow))


if __name__ == "__main__":
    main()
