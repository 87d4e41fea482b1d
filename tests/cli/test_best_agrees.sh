#!/usr/bin/env bash
# test_best_agrees.sh - one value per run everywhere (docs/metrics.md, "A
# run's value"): a sweep whose runs log their best value at step 3 of 6
# (the curve dips, then rises again), and the progress line's best as
# `sweep run` printed it, `sweep best`, `sweep show` and the dashboard's
# API (`sweep ui`) all name the same run and the same value: the run's
# last. `sweep show` names the best logged value as a figure of its own.
#
#   bash tests/cli/test_best_agrees.sh SWEEP_BIN
set -euo pipefail
sweep=$1
work=$(mktemp -d)
ui_pid=
trap '[ -n "$ui_pid" ] && kill "$ui_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "test_best_agrees: $*" >&2; exit 1; }
export SWEEP_HOME=$work/home SWEEP_GIT=off
cat >"$work/trial.sh" <<'TRIAL'
#!/bin/sh
for a in "$@"; do case "$a" in --x=*) x=${a#--x=};; esac; done
for i in 1 2 3 4 5 6; do   # least at step 3; the last is not the best
  awk -v x="$x" -v i="$i" 'BEGIN { printf "@metrics {\"step\": %d, \"loss\": %.6f}\n", i, (i - 3) * (i - 3) / 10 + x / 7 }'
done
TRIAL
chmod +x "$work/trial.sh"
cat >"$work/sweep.yaml" <<YAML
method: grid
metric: {name: loss, goal: minimize}
command: [$work/trial.sh, "\${args}"]
parameters:
  x: {values: [3, 1, 2]}
YAML
cd "$work"
"$sweep" run sweep.yaml >"$work/run.out" 2>"$work/run.err" || fail "sweep run failed: $(cat "$work/run.err")"
line=$(grep ' finished, .* running' "$work/run.out" | tail -1)
[[ $line =~ best\ loss=([^ ]+)\ \(([0-9a-f]+-[0-9]+)\) ]] || fail "no best in the summary: $line"
status_value=${BASH_REMATCH[1]} status_run=${BASH_REMATCH[2]}
sweep_id=${status_run%-*}
"$sweep" best "$sweep_id" --json >"$work/best.json"
"$sweep" show "$status_run" --json >"$work/show.json"
("$sweep" ui "$sweep_id" >"$work/ui.out" 2>&1) &
ui_pid=$!
for _ in $(seq 1 100); do grep -q '^dashboard: ' "$work/ui.out" && break; sleep 0.1; done
url=$(sed -n 's/^dashboard: //p' "$work/ui.out")
[ -n "$url" ] || fail "sweep ui printed no URL: $(cat "$work/ui.out")"
base=${url%%/#*}
curl -sf "$base/api/v1/sweeps" >"$work/sweeps.json" || fail "no /api/v1/sweeps"
curl -sf "$base/api/v1/sweeps/$sweep_id" >"$work/sweep.json" || fail "no /api/v1/sweeps/$sweep_id"
curl -sf "$base/api/v1/runs/$status_run" >"$work/run.json" || fail "no /api/v1/runs/$status_run"
python3 - "$work" "$status_value" "$status_run" "$sweep_id" <<'PY' || fail "the figures disagree"
import json, sys, math
work, status_value, status_run, sweep_id = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
load = lambda n: json.load(open(f"{work}/{n}"))
best = json.loads(open(f"{work}/best.json").readline())  # JSON lines
show = load("show.json")
sweeps, one, run = load("sweeps.json"), load("sweep.json"), load("run.json")
def same(a, b, what):  # the progress line prints %g: 6 significant digits
    if not math.isclose(a, b, rel_tol=1e-5):
        sys.exit(f"{what}: {a} is not {b}")
assert best["run"] == status_run, (best["run"], status_run)
value = best["value"]
same(status_value, value, "the progress line against sweep best")
same(show["value"], value, "sweep show against sweep best")
# the run's value is its last, step 6; its best logged is at step 3
assert show["best_logged"]["step"] == 3, show["best_logged"]
assert show["best_logged"]["value"] < show["value"], show
assert show["metrics"]["loss"] == show["value"], show["metrics"]
s = [x for x in sweeps["sweeps"] if x["id"] == sweep_id][0]
assert s["best_run"] == status_run, s
same(s["best"], value, "the dashboard's sweep list against sweep best")
same(one["report"]["best_value"], value, "the dashboard's report against sweep best")
same(run["run"]["value"], value, "the dashboard's run against sweep best")
PY
grep -q 'best logged .* at step 3' < <("$sweep" show "$status_run") || fail "sweep show names no best logged value"
echo "test_best_agrees: ok (best loss=$status_value, $status_run)"
