"""A trial for the live-metrics tests: posts a scripted curve of val_loss
over HTTP, one value a report, and stops when an answer says so.

Its parameters ($SWEEP_PARAMS): `curve`, a comma-separated list of
values; `mode`, http (default: its own minimal client), client
(examples/clients/python/sweep.py) or stdout (@metrics lines); `pause`,
seconds between reports. Every acknowledged value is
appended to $SWEEP_RUN_DIR/acked ("iteration value"), so a test can check
that none was lost. While the server cannot be reached (a restarted
`sweep`), the report is retried, re-reading $SWEEP_METRICS_URL_FILE.
Exits 0; prints "stopped at N" when told to stop after its N-th report.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request


def post(body):
    token = os.environ["SWEEP_TOKEN"]
    deadline = time.time() + 60
    while True:
        url = open(os.environ["SWEEP_METRICS_URL_FILE"]).read().strip()
        req = urllib.request.Request(
            url, data=json.dumps(body).encode(),
            headers={"Authorization": "Bearer " + token,
                     "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as answer:
                return json.load(answer)["stop"]
        except urllib.error.HTTPError as e:
            if e.code != 503 or time.time() > deadline:
                raise
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.time() > deadline:
                raise
        time.sleep(0.05)


def main():
    params = json.load(open(os.environ["SWEEP_PARAMS"]))
    curve = [float(v) for v in params["curve"].split(",")]
    mode = params.get("mode", "http")
    pause = float(params.get("pause", 0))
    acked = open(os.path.join(os.environ["SWEEP_RUN_DIR"], "acked"), "a")
    if mode == "client":
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "..", "examples",
                                        "clients", "python"))
        import sweep
    for i, v in enumerate(curve, 1):
        if mode == "client":
            stop = sweep.report(step=i, val_loss=v)
            sweep.flush(30)
            acked.write("%d %r\n" % (i, v))
            acked.flush()
            if stop or sweep.should_stop():
                print("stopped at %d" % i, flush=True)
                return 0
            time.sleep(pause)
            continue
        if mode == "stdout":
            print("@metrics " + json.dumps({"step": i, "val_loss": v}), flush=True)
            time.sleep(pause)
            continue
        stop = post({"step": i, "val_loss": v})
        acked.write("%d %r\n" % (i, v))
        acked.flush()
        if stop:
            print("stopped at %d" % i, flush=True)
            return 0
        time.sleep(pause)
    return 0


if __name__ == "__main__":
    sys.exit(main())
