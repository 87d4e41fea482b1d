"""A trial for the flood test: with `role` flood it prints `lines`
@metrics lines (steps 0, 1, ...) as fast as it can and exits 0 (with
`lines` -1: until it is killed, 60 s at most), its pid first written to
$SWEEP_RUN_DIR/trial_pid; with `role` calm it sleeps `sleep` seconds,
reports one value, writes the time it exits to $SWEEP_RUN_DIR/exited_at
and exits 0."""
import json
import os
import sys
import time

params = json.load(open(os.environ["SWEEP_PARAMS"]))
if params["role"] == "flood":
    with open(os.path.join(os.environ["SWEEP_RUN_DIR"], "trial_pid"), "w") as f:
        f.write("%d\n" % os.getpid())
    n = int(params["lines"])
    until = time.time() + 60
    start = 0
    while (n < 0 and time.time() < until) or start < n:
        end = start + 10000 if n < 0 else min(n, start + 10000)
        sys.stdout.write("".join('@metrics {"step": %d, "loss": 0.5}\n' % i
                                 for i in range(start, end)))
        start = end
    sys.stdout.flush()
else:
    time.sleep(float(params["sleep"]))
    print("@metrics " + json.dumps({"step": 1, "loss": 0.1}), flush=True)
    with open(os.path.join(os.environ["SWEEP_RUN_DIR"], "exited_at"), "w") as f:
        f.write("%.6f\n" % time.time())
