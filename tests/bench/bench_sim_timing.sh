#!/usr/bin/env bash
# What the simulator's defaults stand for, measured on this machine: a
# real local sweep of trials that print their own clock, beside the
# simulator's constants (backends/sim.c, STARTUP_S and READ_DELAY_S):
#
#   - launch cost: from an attempt's start (attempts.started_at) to the
#     trial's first instruction, plus from its last line to the
#     attempt's end (the exit seen and recorded);
#   - reading delay: from a line's print to the value in the store
#     (metrics.time);
# medians over RUNS trials (default 32) of 10 lines at 0.1 s, at
# --parallel 4. The trial is Debian's python (15 ms of its own start-up,
# not counted: it reads its clock first thing).
#
#   bash tests/bench/bench_sim_timing.sh [RUNS]
#
# The sweep binary: $SWEEP_BIN, else build/release, else build/debug.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-32}
sweep=${SWEEP_BIN:-}
for b in build/release build/debug; do
  [ -n "$sweep" ] || [ ! -x "$b/orchestrator/sweep" ] || sweep=$PWD/$b/orchestrator/sweep
done
[ -x "${sweep:-}" ] || { echo "build sweep first (cmake --build --preset release)" >&2; exit 1; }
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/t.py" <<'PY'
import time
t0 = time.time()
import json
for i in range(1, 11):
    time.sleep(0.1)
    print("@metrics " + json.dumps({"step": i, "loss": 1.0 / i,
                                    "printed": time.time(), "t0": t0}),
          flush=True)
PY
cat >"$work/m.yaml" <<YAML
method: random
run_cap: $runs
parallel: 4
metric: {name: loss, goal: minimize}
command: [$py, $work/t.py]
parameters:
  x: {min: 0.0, max: 1.0}
YAML
SWEEP_GIT=off SWEEP_HOME=$work/h "$sweep" run "$work/m.yaml" --quiet >"$work/log" 2>&1 ||
  { cat "$work/log" >&2; exit 1; }
SWEEP_HOME=$work/h "$sweep" query --csv "
  select (select value from metrics t where t.run_id = a.run_id and t.name = 't0') - a.started_at,
         a.ended_at - (select max(value) from metrics p where p.run_id = a.run_id and p.name = 'printed'),
         null from attempts a
  union all
  select null, null, m.time - p.value from metrics m join metrics p
    on p.run_id = m.run_id and p.step = m.step and p.name = 'printed'
  where m.name = 'loss'" | tail -n +2 >"$work/d.csv"
consts=$(sed -n 's/^#define \(STARTUP_S\|READ_DELAY_S\) \([0-9.]*\).*/\2/p' backends/sim.c | tr '\n' ' ')
"$py" - "$work/d.csv" $consts <<'PY'
import statistics as st, sys
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[1])]
col = lambda i: [float(r[i]) for r in rows if r[i] != ""]
start, end, read = col(0), col(1), col(2)
startup, delay = float(sys.argv[2]), float(sys.argv[3])
print("%-44s %10s %10s" % ("", "measured", "simulator"))
print("%-44s %9.1f ms" % ("launch to the trial's first instruction", 1e3 * st.median(start)))
print("%-44s %9.1f ms" % ("last line to the attempt's end", 1e3 * st.median(end)))
print("%-44s %9.1f ms %7.1f ms" % ("launch cost (the two)", 1e3 * (st.median(start) + st.median(end)), 1e3 * startup))
print("%-44s %9.2f ms %7.2f ms" % ("reading delay: print to store", 1e3 * st.median(read), 1e3 * delay))
print("(medians of %d attempts and %d lines)" % (len(start), len(read)))
PY
