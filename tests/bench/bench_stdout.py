#!/usr/bin/env python3
"""bench_stdout.py - stdout metrics beside HTTP reports: how long a value
takes to reach the store, and a stop to reach the trial.

Through the real `sweep` binary, each figure beside its reference (the
same trial reporting over HTTP), in one run:
  - latency: 4 trials at --parallel 4 each report 300 values at 100 a
    second, as `@metrics` lines on stdout, then as POSTs; a value's time
    from the trial's clock when it reported it to the store's time for it
    (median, p99, max). Target for stdout: median under 5 ms;
  - stop: a grid of 9 runs at --parallel 1 under Hyperband (min_iter 3,
    eta 3), the first the best, so that each later one is stopped at
    step 3; on stdout the stop reaches the trial as SIGTERM, whose
    arrival the trial records: the time from printing step 3 to the
    signal (median, max). Over HTTP the stop is the answer to the post
    of step 3: that post's round trip. Target for stdout: median under
    10 ms.

  /usr/bin/python3 tests/bench/bench_stdout.py build/release/orchestrator/sweep [ROUNDS]

ROUNDS (default 3) repeats each scenario; the figures pool all rounds.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

TRIAL = r'''
import json, os, signal, sys, time, urllib.request
p = json.load(open(os.environ["SWEEP_PARAMS"]))
d = os.environ["SWEEP_RUN_DIR"]
sent = {}
def on_term(sig, frame):
    now = time.time()
    json.dump({"term": now, "sent": sent}, open(os.path.join(d, "term.json"), "w"))
    os._exit(0)
signal.signal(signal.SIGTERM, on_term)
http = p["via"] == "http"
if http:
    url, token = os.environ["SWEEP_METRICS_URL"], os.environ["SWEEP_TOKEN"]
rtt = {}
t0 = time.time()
for i in range(1, p["steps"] + 1):
    due = t0 + i * p["every"]
    time.sleep(max(0, due - time.time()))
    now = time.time()
    sent[i] = now
    values = {"step": i, "loss": p["x"] + 1.0 / i, "sent": now}
    if http:
        req = urllib.request.Request(url, data=json.dumps(values).encode(), headers={
            "Authorization": "Bearer " + token, "Content-Type": "application/json"})
        answer = json.load(urllib.request.urlopen(req, timeout=60))
        rtt[i] = time.time() - now
        if answer.get("stop"):
            json.dump({"stop_rtt": rtt[i], "step": i},
                      open(os.path.join(d, "stop.json"), "w"))
            sys.exit(0)
    else:
        print("@metrics " + json.dumps(values), flush=True)
'''


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def sweep_run(sweep, tmp, trial, via, parallel, xs, steps, rule=""):
    """Runs a grid over x in `xs` of the trial reporting `via` stdout or
    HTTP, `steps` values 10 ms apart each; its home."""
    home = tempfile.mkdtemp(dir=tmp)
    spec = os.path.join(home, "sweep.yaml")
    open(spec, "w").write(
        "method: grid\nparallel: %d\n"
        "metric: {name: loss, goal: minimize}\n%s"
        "command: [/usr/bin/python3, -S, %s]\n"
        "parameters:\n  x: {values: %s}\n"
        "  via: {value: %s}\n  steps: {value: %d}\n"
        "  every: {value: 0.01}\n" % (parallel, rule, trial, xs, via, steps))
    env = dict(os.environ, SWEEP_HOME=os.path.join(home, "h"), SWEEP_GIT="off")
    subprocess.run([sweep, "run", spec, "--quiet"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return os.path.join(home, "h")


def latency(sweep, tmp, trial, via):
    h = sweep_run(sweep, tmp, trial, via, 4, [1, 2, 3, 4], 300)
    db = sqlite3.connect(os.path.join(h, "sweep.db"))
    return [t - v for t, v in db.execute(
        "select time, value from metrics where name = 'sent'")]


def stop(sweep, tmp, trial, via):
    h = sweep_run(sweep, tmp, trial, via, 1, list(range(9)), 30,
                  "early_terminate: {type: hyperband, min_iter: 3, eta: 3}\n")
    db = sqlite3.connect(os.path.join(h, "sweep.db"))
    out = []
    for (run_id,) in db.execute("select id from runs where state = 'stopped'"):
        d = os.path.join(h, "runs", run_id)
        if via == "http":
            s = json.load(open(os.path.join(d, "stop.json")))
            if s["step"] == 3:
                out.append(s["stop_rtt"])
        else:
            t = json.load(open(os.path.join(d, "term.json")))
            out.append(t["term"] - t["sent"]["3"])
    return out


def ms(x):
    return "%8.2f ms" % (x * 1000)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sweep = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as tmp:
        trial = os.path.join(tmp, "trial.py")
        open(trial, "w").write(TRIAL)
        lat = {"stdout": [], "http": []}
        stops = {"stdout": [], "http": []}
        for _ in range(rounds):
            for via in ("stdout", "http"):
                lat[via] += latency(sweep, tmp, trial, via)
                stops[via] += stop(sweep, tmp, trial, via)
    print("%s, %d rounds: stdout | HTTP (the reference)" % (sweep, rounds))
    print("  value to store, 100 values/s x 4 trials (%d | %d values)"
          % (len(lat["stdout"]), len(lat["http"])))
    for name, q in (("median", .5), ("p99", .99), ("max", 1.0)):
        print("    %-8s %s | %s" % (name, ms(pct(lat["stdout"], q)),
                                    ms(pct(lat["http"], q))))
    print("  stop at step 3 to the trial: SIGTERM | the post's answer"
          " (%d | %d stops)" % (len(stops["stdout"]), len(stops["http"])))
    for name, q in (("median", .5), ("max", 1.0)):
        print("    %-8s %s | %s" % (name, ms(pct(stops["stdout"], q)),
                                    ms(pct(stops["http"], q))))
    print("  targets (stdout): value to store median < 5 ms; stop median"
          " < 10 ms")


if __name__ == "__main__":
    main()
