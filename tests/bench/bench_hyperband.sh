#!/usr/bin/env bash
# What Hyperband saves on a real sweep: examples/sweeps/mlp-hyperband.yaml
# (20 PyTorch MLP trainings of 27 epochs on scikit-learn's digits), run
# with its early_terminate and, as the reference, the same grid without
# it, side by side. Prints the best val_loss each finds, the runs stopped,
# and the trial time spent (the sum of the runs' durations).
#
#   bash tests/bench/bench_hyperband.sh [PARALLEL]     (default 2)
#
# Target (issue "Live metrics over HTTP and early stopping"): most runs
# stopped early, best within 1% of the full grid's.
set -euo pipefail
cd "$(dirname "$0")/../.."
parallel=${1:-2}
sweep=$PWD/build/release/orchestrator/sweep
[ -x "$sweep" ] || { echo "build the release preset first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -v -e '^early_terminate:' -e '^  type: hyperband' -e '^  min_iter:' \
  -e '^  eta:' examples/sweeps/mlp-hyperband.yaml >"$work/full.yaml"
export SWEEP_INTERPRETER=${SWEEP_INTERPRETER:-/usr/bin/python3}
run() { # NAME FILE
  SWEEP_HOME="$work/$1" "$sweep" run "$2" --parallel "$parallel" --quiet \
    >"$work/$1.log" 2>&1 || { cat "$work/$1.log" >&2; exit 1; }
  SWEEP_HOME="$work/$1" "$sweep" query --csv \
    "select min(value), sum(ended_at - started_at),
            sum(state = 'stopped'), count(*),
            (select count(*) from metrics where name = 'val_loss')
     from runs" | tail -1
}
t0=$(date +%s.%N)
hb=$(run hyperband examples/sweeps/mlp-hyperband.yaml)
t1=$(date +%s.%N)
full=$(run full "$work/full.yaml")
t2=$(date +%s.%N)
IFS=, read -r hb_best hb_secs hb_stopped hb_runs hb_epochs <<<"$hb"
IFS=, read -r full_best full_secs _ full_runs full_epochs <<<"$full"
printf '%-26s %10s %8s %12s %10s %9s\n' "" "best" "stopped" "trial-time" "epochs" "wall"
printf '%-26s %10.5f %5s/%-2s %11.1fs %10s %8.1fs\n' "hyperband (min_iter 3)" \
  "$hb_best" "$hb_stopped" "$hb_runs" "$hb_secs" "$hb_epochs" "$(echo "$t1 - $t0" | bc)"
printf '%-26s %10.5f %5s/%-2s %11.1fs %10s %8.1fs\n' "the same grid, no stopping" \
  "$full_best" 0 "$full_runs" "$full_secs" "$full_epochs" "$(echo "$t2 - $t1" | bc)"
echo "best: $(echo "scale=6; r = 100 * ($hb_best - $full_best) / $full_best; scale=2; r / 1" | bc)% worse;" \
  "trial time saved: $(echo "scale=4; r = 100 * (1 - $hb_secs / $full_secs); scale=1; r / 1" | bc)%, epochs saved: $(echo "scale=4; r = 100 * (1 - $hb_epochs / $full_epochs); scale=1; r / 1" | bc)%"
echo "target: most runs stopped, best within 1% of the full grid's"
