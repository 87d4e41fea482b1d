"""A trial that posts as fast as it can, to catch a resumed `sweep`
answering before it knows its adopted attempts' tokens.

It posts {"step": N, "loss": N} over and over, re-reading
$SWEEP_METRICS_URL_FILE after each failure to connect, and retrying
after a millisecond, so its first post after a restart reaches the
server the instant it listens (a 503 is retried after 10 ms: six trials
retrying with no pause at all starved the resumed sweep of the CPU on a
2-core machine until their deadline). Every status other than 200 (and 503, which says
retry) is appended to the file named by its `ledger` parameter with its
run id, and the trial exits 3. Once it has seen the server go away and
come back, and 20 posts after that were answered 200, it exits 0. The
test also writes the file named by its `killed` parameter once the old
`sweep` is dead and before it resumes: a resumed `sweep` that listens
within a few milliseconds can come back while a trial sleeps between
posts, and that trial, seeing no outage, would post until its deadline.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request


def main():
    params = json.load(open(os.environ["SWEEP_PARAMS"]))
    token = os.environ["SWEEP_TOKEN"]
    run = os.environ["SWEEP_RUN_ID"]
    acked = open(os.path.join(os.environ["SWEEP_RUN_DIR"], "acked"), "a")
    step, outage, after = 0, False, 0
    deadline = time.time() + 120
    while time.time() < deadline:
        if not outage and os.path.exists(params["killed"]):
            outage = True
        url = open(os.environ["SWEEP_METRICS_URL_FILE"]).read().strip()
        body = json.dumps({"step": step, "loss": step}).encode()
        req = urllib.request.Request(
            url, data=body,
            headers={"Authorization": "Bearer " + token,
                     "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as answer:
                json.load(answer)
        except urllib.error.HTTPError as e:
            if e.code == 503:  # retry, as told; not in a busy loop, which
                time.sleep(0.01)  # on 2 cores starved the sweep it waits on
                continue
            with open(params["ledger"], "a") as f:
                f.write("%s %d after outage %s\n" % (run, e.code, outage))
            return 3
        except (urllib.error.URLError, ConnectionError, OSError):
            outage = True
            time.sleep(0.001)  # still there the millisecond it listens
            continue
        acked.write("%d\n" % step)
        acked.flush()
        step += 1
        if outage:
            after += 1
            if after >= 20:
                return 0
        else:
            time.sleep(0.01)
    return 4


if __name__ == "__main__":
    sys.exit(main())
