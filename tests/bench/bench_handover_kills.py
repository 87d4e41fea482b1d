"""The hand-over of long-lived workers under SIGKILL: `sweep run` of N
short runs at --parallel 2, served by sweep.agent workers, is SIGKILLed
K times at random moments (each after a random 0.1 to 1.5 s of `sweep
run` or `sweep resume`), then resumed to its end. A kill that falls
between a worker's last run and its next one must leave a store the
resumed sweep can go on from: the worker adopted, its request answered.

Prints, in one run: the kills, the workers that quit early (a request
for the next run refused, 409 or 401: each one more process than the
two, from the pids the runs logged and the `served` line each worker
prints as it exits), the runs that ran more than one attempt, the runs
without their 3 values, and the wall time. With the fix, all but the
kills are 0; before it (main at c9c59d0), one kill in a few hit the
window. Not a test: nothing is asserted (the suite's test_package.py
kills once).

Usage: /usr/bin/python3 tests/bench/bench_handover_kills.py
       [SWEEP [KILLS [RUNS [SEED]]]]
(default: build/debug/orchestrator/sweep, 50 kills, 2000 runs, seed 1).
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "examples", "clients", "python")

WORKER = """
import os, sys, time
sys.path.insert(0, %r)
import sweep


def train(config):
    print("run", sweep.run_id(), "pid", os.getpid(), flush=True)
    for step in range(3):
        if sweep.report(step=step, loss=config["x"] * 10 + step):
            return
        time.sleep(0.01)


print("served", sweep.agent(train), "pid", os.getpid(), flush=True)
""" % PACKAGE


def main():
    args = sys.argv[1:]
    sw = os.path.abspath(args[0] if args else
                         os.path.join(ROOT, "build/debug/orchestrator/sweep"))
    kills = int(args[1]) if len(args) > 1 else 50
    n = int(args[2]) if len(args) > 2 else 2000
    rng = random.Random(int(args[3]) if len(args) > 3 else 1)
    work = tempfile.mkdtemp(prefix="bench-handover-")
    home = os.path.join(work, "home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWEEP_")}
    env.update(SWEEP_HOME=home, SWEEP_GIT="off")
    with open(os.path.join(work, "worker.py"), "w") as f:
        f.write(WORKER)
    with open(os.path.join(work, "s.yaml"), "w") as f:
        f.write("method: grid\nmetric: {name: loss}\nparameters:\n"
                "  x: {values: %s}\ncommand: [%s, worker.py]\n"
                % (json.dumps(list(range(n))), sys.executable))

    def sweep(*a, **kw):
        return subprocess.run([sw] + list(a), cwd=work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, **kw)

    t0 = time.monotonic()
    sweep_id, done = None, 0
    for k in range(kills):
        cmd = ["run", "s.yaml", "--parallel", "2", "--quiet"] if not sweep_id \
            else ["resume", sweep_id, "--quiet"]
        p = subprocess.Popen([sw] + cmd, cwd=work, env=env,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=rng.uniform(0.1, 1.5))
            done += 1  # it ended first: the sweep is over
            break
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
        if not sweep_id:
            q = sweep("query", "select id from sweeps", "--csv")
            lines = q.stdout.split()
            sweep_id = lines[1] if len(lines) > 1 else None
    made = k + 1 - done
    r = sweep("resume", sweep_id, "--quiet", timeout=600)
    wall = time.monotonic() - t0

    q = sweep("query", "select id, state, attempts, (select count(*) from "
              "metrics m where m.run_id = runs.id) as n from runs", "--json")
    runs = [json.loads(line) for line in q.stdout.splitlines()]
    pids, served = set(), 0
    for run in runs:
        try:
            with open(os.path.join(home, "runs", run["id"], "stdout.log")) as f:
                for line in f:
                    w = line.split()
                    if w[:1] == ["run"]:
                        pids.add(w[3])
                    elif w[:1] == ["served"]:
                        served += 1
        except OSError:
            pass
    twice = [x["id"] for x in runs if x["attempts"] != 1]
    short = [x["id"] for x in runs if x["n"] != 3]
    unfinished = [x["id"] for x in runs if x["state"] != "finished"]
    print("sweep %s: %d runs at --parallel 2, the last resume exit %d"
          % (sweep_id, len(runs), r.returncode))
    print("kills                      %d" % made)
    print("workers that quit early    %d  (processes %d, served lines %d; "
          "2 without)" % (max(len(pids), served) - 2, len(pids), served))
    print("runs with attempts > 1     %d  %s" % (len(twice), twice[:5]))
    print("runs without 3 values      %d  %s" % (len(short), short[:5]))
    print("runs not finished          %d  %s" % (len(unfinished),
                                                 unfinished[:5]))
    print("wall                       %.1f s" % wall)
    if twice:  # why: each attempt of those runs
        q = sweep("query", "select run_id, attempt, outcome from attempts "
                  "where run_id in (%s) order by run_id, attempt"
                  % ",".join("'%s'" % t for t in twice), "--csv")
        print(q.stdout.strip())
    if os.environ.get("BENCH_KEEP"):
        print("kept:", work)
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
