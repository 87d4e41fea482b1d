"""A trial for the token tests: it tries to post as the other run of its
sweep with what it can read of that run's folder.

It appends its own SWEEP_TOKEN to OUT/tokens (OUT: its `out` parameter,
outside the sweep home), posts one value with it (which must be
answered 200), then waits for the other run's folder to hold a
metrics_url and posts, with the contents of every file there as its
bearer token, to the other run's URL and to its own. Each answer's
status goes to OUT/codes as "RUN FILE WHERE STATUS". Exits 0.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request


def post(url, token):
    req = urllib.request.Request(
        url, data=json.dumps({"loss": 1}).encode(),
        headers={"Authorization": "Bearer " + token,
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as e:
        return e.code


def barrier(path, n, deadline):
    """Marks this trial in `path`, and waits until n trials have."""
    with open(path, "a") as f:
        f.write("x")
    while time.time() < deadline:
        if len(open(path).read()) >= n:
            return True
        time.sleep(0.05)
    return False


def main():
    params = json.load(open(os.environ["SWEEP_PARAMS"]))
    out = params["out"]
    me = os.environ["SWEEP_RUN_ID"]
    runs = os.path.dirname(os.environ["SWEEP_RUN_DIR"])
    mine = open(os.environ["SWEEP_METRICS_URL_FILE"]).read().strip()
    with open(os.path.join(out, "tokens"), "a") as f:
        f.write(os.environ["SWEEP_TOKEN"] + "\n")
    codes = open(os.path.join(out, "codes"), "a")
    codes.write("%s own own %d\n" % (me, post(mine, os.environ["SWEEP_TOKEN"])))
    codes.flush()
    deadline = time.time() + 20
    if not barrier(os.path.join(out, "started"), 2, deadline):
        return 1
    other = None
    while other is None and time.time() < deadline:
        for name in os.listdir(runs):
            if name != me and os.path.exists(
                    os.path.join(runs, name, "metrics_url")):
                other = os.path.join(runs, name)
        time.sleep(0.05)
    if other is None:
        return 1
    theirs = open(os.path.join(other, "metrics_url")).read().strip()
    for name in sorted(os.listdir(other)):
        path = os.path.join(other, name)
        if not os.path.isfile(path):
            continue
        try:
            text = open(path, errors="replace").read().strip()
        except OSError:
            continue
        if not text or "\n" in text or len(text) > 200:
            continue
        for where, url in (("theirs", theirs), ("own", mine)):
            codes.write("%s %s %s %d\n" % (me, name, where, post(url, text)))
            codes.flush()
    # both alive until both are done: each probes a running run
    return 0 if barrier(os.path.join(out, "probed"), 2, deadline) else 1


if __name__ == "__main__":
    sys.exit(main())
