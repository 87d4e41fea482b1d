"""What sweep.mirror_wandb() costs a W&B training loop, against the fake
metrics server, beside the same loop unmirrored.

Prints, in one run, the time per wandb.log call of a W&B trainer (the
stand-in W&B SDK of tests/clients/fake_wandb_sdk/, which reads its config as
W&B's SDK does and keeps W&B's step): unmirrored (the reference), then
mirrored with the server answering, and mirrored with no server (the
values printed as @metrics lines); beside wandb.log followed by
sweep.report() by hand, what the mirror adds to (report() waits for the
server's answer, to return its stop); and the values the server stored
against those logged. Not a test: nothing is asserted.

Usage: /usr/bin/python3 tests/bench/bench_mirror.py [N]   (N logs, 2000)
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "clients"))

from fake_metrics_server import FakeMetricsServer  # noqa: E402
from test_wandb import FAKE_SDK  # noqa: E402

LOOP = '''
import sys, time
import wandb
import sweep
if sys.argv[1] == "mirror":
    sweep.mirror_wandb()
if sys.argv[1] == "report":  # what the mirror adds to: report() itself
    def log(d):
        wandb.log(d)
        sweep.report(**d)
n = int(sys.argv[2])
run = wandb.init()
t = time.perf_counter()
for i in range(n):
    (log if sys.argv[1] == "report" else wandb.log)(
        {"loss": 1.0 / (i + 1), "acc": i / n, "lr": 0.1})
dt = time.perf_counter() - t
run.finish()
print(dt / n * 1e6)
'''


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    d = tempfile.mkdtemp(prefix="bench-mirror-")
    with open(os.path.join(d, "loop.py"), "w") as f:
        f.write(LOOP)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SWEEP_", "WANDB_", "FAKE_WANDB"))}
    base["PYTHONPATH"] = os.pathsep.join(
        [FAKE_SDK, os.path.join(ROOT, "examples", "clients", "python")])

    def loop(mode, **env):
        e = dict(base, **env)
        p = subprocess.run([sys.executable, os.path.join(d, "loop.py"), mode,
                            str(n)], env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode:
            raise SystemExit(p.stderr)
        return float([l for l in p.stdout.splitlines()
                      if not l.startswith("@metrics")][-1])

    try:
        report(n, loop)
    finally:
        shutil.rmtree(d)


def report(n, loop):
    srv = FakeMetricsServer().start()
    plain = loop("plain")
    up = loop("mirror", SWEEP_METRICS_URL=srv.url, SWEEP_TOKEN=srv.token)
    stored = sum(len(r) - 1 for r in srv.records)
    srv.stop()
    srv = FakeMetricsServer().start()
    direct = loop("report", SWEEP_METRICS_URL=srv.url, SWEEP_TOKEN=srv.token)
    srv.stop()
    down = loop("mirror")
    print("%d wandb.log calls of 3 values each (stand-in wandb):" % n)
    print("  unmirrored (reference)           %8.1f us a call" % plain)
    print("  mirrored, server answering       %8.1f us a call  (%.1fx)"
          % (up, up / plain))
    print("  wandb.log + sweep.report by hand %8.1f us a call  (%.1fx)"
          % (direct, direct / plain))
    print("  mirrored, no server (stdout)     %8.1f us a call  (%.1fx)"
          % (down, down / plain))
    print("  values stored / logged: %d / %d" % (stored, 3 * n))


if __name__ == "__main__":
    main()
