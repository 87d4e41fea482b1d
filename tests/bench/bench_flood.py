#!/usr/bin/env python3
"""bench_flood.py - what one flooding trial costs the others.

Runs, through the real `sweep` binary, four calm trials that each post 50
reports over HTTP and print 50 @metrics lines (20 ms apart) and then exit,
first alone and then beside one trial that prints 2,000,000 @metrics
lines as fast as it can. For each, side by side:
  - the calm trials' HTTP report round trip (median, p99), measured by
    the trials;
  - a @metrics line's time from print to store (median, p99): the store's
    time for the value minus the time the trial printed in it;
  - the time from a calm trial's exit to its recorded end (median, max).
Give one `sweep` or two (the second is measured the same way in the same
run, as a reference, e.g. an older build):

  python3 tests/bench/bench_flood.py build/release/orchestrator/sweep [OTHER_SWEEP]
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

TRIAL = r'''
import json, os, sys, time, urllib.request
p = json.load(open(os.environ["SWEEP_PARAMS"]))
if p["role"] == "flood":
    n = 2000000
    for s in range(0, n, 10000):
        sys.stdout.write("".join('@metrics {"step": %d, "x": 0.5}\n' % i
                                 for i in range(s, min(n, s + 10000))))
    sys.exit(0)
url, token = os.environ["SWEEP_METRICS_URL"], os.environ["SWEEP_TOKEN"]
rtt = []
for i in range(50):
    body = json.dumps({"step": i, "loss": 1.0 / (i + 1)}).encode()
    req = urllib.request.Request(url, data=body, headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    t0 = time.time()
    urllib.request.urlopen(req, timeout=60).read()
    rtt.append(time.time() - t0)
    print("@metrics " + json.dumps({"step": i, "sent": time.time()}), flush=True)
    time.sleep(0.02)
d = os.environ["SWEEP_RUN_DIR"]
json.dump(rtt, open(os.path.join(d, "rtt.json"), "w"))
open(os.path.join(d, "exited_at"), "w").write("%.6f" % time.time())
'''


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def scenario(sweep, flood, tmp):
    home = tempfile.mkdtemp(dir=tmp)
    trial = os.path.join(tmp, "trial.py")
    open(trial, "w").write(TRIAL)
    roles = "[calm1, calm2, calm3, calm4%s]" % (", flood" if flood else "")
    spec = os.path.join(home, "sweep.yaml")
    open(spec, "w").write(
        "method: grid\nparallel: 5\n"
        "metric: {name: loss, goal: minimize}\n"
        "command: [/usr/bin/python3, %s]\n"
        "parameters:\n  role: {values: %s}\n" % (trial, roles))
    env = dict(os.environ, SWEEP_HOME=os.path.join(home, "h"), SWEEP_GIT="off")
    subprocess.run([sweep, "run", spec, "--quiet"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = sqlite3.connect(os.path.join(home, "h", "sweep.db"))
    rtt, lat, end = [], [], []
    for run_id, ended in db.execute(
            "select id, ended_at from runs where params not like '%flood%'"):
        d = os.path.join(home, "h", "runs", run_id)
        rtt += json.load(open(os.path.join(d, "rtt.json")))
        end.append(ended - float(open(os.path.join(d, "exited_at")).read()))
    lat = [t - v for t, v in db.execute(
        "select time, value from metrics where name = 'sent'")]
    return rtt, lat, end


def line(label, a, b, unit=1000.0):
    return "  %-36s %10.2f ms %12.2f ms" % (label, a * unit, b * unit)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir(
            "/dev/shm") else None) as tmp:
        for sweep in sys.argv[1:]:
            alone = scenario(sweep, False, tmp)
            flooded = scenario(sweep, True, tmp)
            print("%s: 4 calm trials, alone | beside a 2,000,000-line flood"
                  % sweep)
            for name, i in (("HTTP report round trip", 0),
                            ("@metrics line, print to store", 1)):
                print(line(name + ", median", pct(alone[i], .5),
                           pct(flooded[i], .5)))
                print(line(name + ", p99", pct(alone[i], .99),
                           pct(flooded[i], .99)))
            print(line("exit to recorded end, median", pct(alone[2], .5),
                       pct(flooded[2], .5)))
            print(line("exit to recorded end, max", max(alone[2]),
                       max(flooded[2])))


if __name__ == "__main__":
    main()
