"""A trial for the flood test: with `role` flood it prints `lines`
@metrics lines (steps 0, 1, ...) as fast as it can and exits 0; with
`role` calm it sleeps `sleep` seconds, reports one value, writes the time
it exits to $SWEEP_RUN_DIR/exited_at and exits 0."""
import json
import os
import sys
import time

params = json.load(open(os.environ["SWEEP_PARAMS"]))
if params["role"] == "flood":
    n = int(params["lines"])
    for start in range(0, n, 10000):
        sys.stdout.write("".join('@metrics {"step": %d, "loss": 0.5}\n' % i
                                 for i in range(start, min(n, start + 10000))))
    sys.stdout.flush()
else:
    time.sleep(float(params["sleep"]))
    print("@metrics " + json.dumps({"step": 1, "loss": 0.1}), flush=True)
    with open(os.path.join(os.environ["SWEEP_RUN_DIR"], "exited_at"), "w") as f:
        f.write("%.6f\n" % time.time())
