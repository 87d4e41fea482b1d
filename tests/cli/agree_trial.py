"""A trainer with two modes, for test_sim_agrees.sh: for real it sleeps
--startup seconds, then trains --steps steps of --secs seconds, printing
`@metrics` lines, checkpointing its step (SWEEP_CHECKPOINT_DIR) and
training only to SWEEP_TRAIN_UNTIL when told; under SWEEP_SIMULATE=1 it
prints the same curve at once with `_seconds` and its `_startup`."""
import json
import os
import sys
import time

args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
x, startup = (float(v) for v in args["run"].split(":"))
steps, secs = int(args["steps"]), float(args["secs"])


def loss(t):
    # curves that cross: a low x starts worse and ends better
    return 0.5 + x * 0.1 + (1.5 - x * 0.2) / t


def line(values):
    print("@metrics " + json.dumps(values), flush=True)


if os.environ.get("SWEEP_SIMULATE") == "1":
    line({"_startup": startup})
    for t in range(1, steps + 1):
        line({"step": t, "loss": round(loss(t), 6), "_seconds": secs})
    sys.exit(0)

ckpt = os.path.join(os.environ["SWEEP_CHECKPOINT_DIR"], "step")
done = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
until = min(steps, int(os.environ.get("SWEEP_TRAIN_UNTIL") or steps))
time.sleep(startup)
for t in range(done + 1, until + 1):
    time.sleep(secs)
    line({"step": t, "loss": round(loss(t), 6)})
    with open(ckpt + ".tmp", "w") as f:
        f.write(str(t))
    os.replace(ckpt + ".tmp", ckpt)
