"""What long-lived workers save: the same sweep of N runs through the real
binary, a trial per run beside sweep.agent serving run after run, with a
trainer whose start-up (imports, a CUDA context, data loading) costs
SETUP seconds, stood in for by a sleep.

Prints, in one run: the wall time of each, the processes started (from
the pids the runs logged), and the time per run. Not a test: nothing is
asserted.

Usage: /usr/bin/python3 tests/bench/bench_workers.py [SWEEP [N [SETUP]]]
(default: build/debug/orchestrator/sweep, 20 runs, 1.0 s), --parallel 2.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "examples", "clients", "python")

TRAINER = """
import os, sys, time
sys.path.insert(0, %r)
time.sleep(float(os.environ["BENCH_SETUP"]))  # imports, CUDA, data
import sweep


def train(config):
    print("pid", os.getpid(), flush=True)
    for step in range(3):
        sweep.report(step=step, loss=config["x"] + step)


if sys.argv[1] == "agent":
    sweep.agent(train)
else:
    train(sweep.params())
"""


def run(binary, d, mode, n, setup):
    home = os.path.join(d, mode)
    with open(os.path.join(d, mode + ".yaml"), "w") as f:
        f.write("method: grid\nmetric: {name: loss}\nparameters:\n"
                "  x: {values: %s}\ncommand: [%s, %s, %s]\n"
                % (json.dumps(list(range(n))), sys.executable,
                   os.path.join(d, "trainer.py"), mode))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWEEP_")}
    env.update(SWEEP_HOME=home, BENCH_SETUP=str(setup))
    t = time.monotonic()
    p = subprocess.run([binary, "run", mode + ".yaml", "--parallel", "2",
                        "--quiet"], cwd=d, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    wall = time.monotonic() - t
    if p.returncode:
        raise SystemExit(p.stderr)
    pids = set()
    runs = os.path.join(home, "runs")
    for r in os.listdir(runs):
        with open(os.path.join(runs, r, "stdout.log")) as f:
            pids.update(l.split()[1] for l in f if l.startswith("pid "))
    return wall, len(pids)


def main():
    binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else \
        os.path.join(ROOT, "build", "debug", "orchestrator", "sweep")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    setup = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    d = tempfile.mkdtemp(prefix="bench-workers-")
    try:
        with open(os.path.join(d, "trainer.py"), "w") as f:
            f.write(TRAINER % PACKAGE)
        one, p1 = run(binary, d, "trial", n, setup)
        agent, p2 = run(binary, d, "agent", n, setup)
    finally:
        shutil.rmtree(d)
    print("%d runs at --parallel 2, a trainer that takes %.1f s to start:"
          % (n, setup))
    print("  a process per run (reference)  %6.1f s  %3d processes  "
          "%5.2f s a run" % (one, p1, one / n))
    print("  sweep.agent, long-lived        %6.1f s  %3d processes  "
          "%5.2f s a run  (%.1fx faster)" % (agent, p2, agent / n,
                                             one / agent))


if __name__ == "__main__":
    main()
