#!/usr/bin/env bash
# The seeds' scenarios, played on the simulated cluster (`--backend sim`),
# each beside its reference, in one run of a few minutes at most.
#
# Two families of learning curves feed the surrogates (scenario_curve.awk):
#   - synthetic: loss(t) = a + b t^-c + noise, with a, b, c from the
#     parameters (lr, dropout, batch_size, model); "small" models train
#     81 epochs of 300 s, "large" ones 81 epochs of 900 s; the noise is a
#     seeded function of the parameters and t;
#   - recorded: val_loss per epoch of examples/train_mlp.py (real PyTorch
#     training on scikit-learn's digits), 216 configurations (learning
#     rate, width, optimizer, dropout, batch size) x 40 epochs, recorded
#     once by record_mlp_curves.sh into mlp_curves.csv and replayed, each
#     epoch stretched to 900 s (hidden 32, "small"), 1800 s (128) or
#     2700 s (256, "large").
#
# Scenario 1: 12 configurations of 3 virtual days each on 6 GPUs, one at
# a time (parallel 1) against six at a time (parallel 6); the same grid.
#
# Scenario 2: a mixed workload (small and large models) on 8 GPUs, two
# of them split into MIG slices (4g.40gb + 3g.40gb each), with failures
# injected (--sim-fail-rate 0.1: an attempt dies at a uniformly drawn
# point with probability 0.1), on each family:
#   - baseline, what W&B agents do: one agent per device (the 6 GPUs and
#     the 4 slices: 10 trials at once, each holding a whole device:
#     resources {gpus: 1, gpu_memory: 20GiB}), random search, no early
#     stopping, and a failed trial rerun from scratch (retries: 2, the
#     surrogate ignores its checkpoint, as a trainer without resume does);
#     TRIALS trials (40 on the recorded curves);
#   - sweep: memory-aware packing (resources: {gpu_memory: 20GiB}: a
#     quarter of an 80 GiB GPU, half of a 40 GiB slice; 4 trials per GPU,
#     2 per slice, 32 at once), ASHA (min_iter 3, eta 3), Bayesian search
#     (bayes), and retries: 2 that resume from the last epoch reported (a
#     checkpoint per epoch: the surrogate reads its run's stdout.log for
#     the last step an earlier attempt reported); it spends what the
#     baseline spent: `budget: {gpu_hours: H}`, H the baseline's busy
#     GPU-hours, so both sides cost the same (on the recorded curves the
#     search runs out first: 216 configurations are all there are);
#   - sweep, capped: the same, with run_cap 5 x TRIALS (200 on the
#     recorded curves) instead of the budget: a sweep that ends while
#     the GPUs are still paid for, whose last survivors of ASHA finish
#     alone (the drain), beside the budgeted one.
#   The figures "to the baseline's best" do not depend on the budget or
#   the cap as long as sweep's side gets there before its last trial.
#
# The compute model, the same on both sides: a small model keeps at most
# a quarter of a GPU busy, a large one 40 % (a medium one 32.5 %; they are too small to fill
# a GPU: the reason to pack them). A trial's epoch takes its base time
# times max(1, demand / (device compute x share)), a MIG slice's compute
# counted as 3/7 of a GPU (the smaller slice, for both), and packed
# trials (share < 1) 10 % longer for interference. So a large model
# packed 4 to a GPU runs 1.76x slower than alone, 2.05x on half a slice:
# packing is not free here.
#
# Figures: wall-clock and GPU-hours (busy: each attempt's duration times
# the GPU share it held) until the sweep first reported a value at least
# as good as the baseline's final best, from the store (sweep query);
# occupancy, busy GPU-hours, GPU-hours lost to failures and the whole
# sweep's wall time from `sweep report --json`; occupancy until the last
# trial started and GPU-hours in failed attempts from the store.
#
#   bash tests/bench/bench_scenarios.sh [TRIALS [SEED]]   (default 100 1;
#   about 3 minutes on 2 cores, most of it Bayesian search over 4,000
#   synthetic trials)
#
# The sweep binary: $SWEEP_BIN, else build/release, else build/debug.
# SVG=FILE also writes `sweep report --plot` of scenario 2's sweep side.
set -euo pipefail
cd "$(dirname "$0")/../.."
cap=${1:-100}
seed=${2:-1}
sweep=${SWEEP_BIN:-}
for b in build/release build/debug; do
  [ -n "$sweep" ] || [ ! -x "$b/orchestrator/sweep" ] || sweep=$PWD/$b/orchestrator/sweep
done
[ -x "${sweep:-}" ] || { echo "build sweep first (cmake --build --preset release)" >&2; exit 1; }
curves=$PWD/tests/bench/mlp_curves.csv
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

cp tests/bench/scenario_curve.awk "$work/curve.awk"

# ---- scenario 1: 12 x 3 days, serial against six at a time -------------
grid12() { # FAMILY -> a sweep file of 12 configurations of 3 days
  if [ "$1" = synthetic ]; then
    cat <<EOF
method: grid
metric: {name: loss, goal: minimize}
command: [awk, -f, $work/curve.awk, --, --epochs=72, --epoch_s=3600, "\${args}"]
parameters:
  lr: {values: [0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03]}
  model: {values: [small, large]}
  dropout: {value: 0.1}
  batch_size: {value: 64}
EOF
  else
    cat <<EOF
method: grid
metric: {name: val_loss, goal: minimize}
command: [awk, -f, $work/curve.awk, --, --family=recorded, --curves=$curves, --epoch_s=6480, "\${args}"]
parameters:
  lr: {values: [0.03, 0.01, 0.003]}
  hidden: {values: [32, 256]}
  optimizer: {values: [sgd, adam]}
  dropout: {value: 0.0}
  batch_size: {value: 32}
EOF
  fi
}

run() { # HOME FILE ARGS... : one simulated sweep
  local home=$1 file=$2
  shift 2
  (cd "$work" && SWEEP_HOME="$home" "$sweep" run "$file" --backend sim \
    --seed "$seed" --quiet "$@") >"$home.log" 2>&1 || { cat "$home.log" >&2; exit 1; }
}
report() { # HOME KEY... -> the keys of sweep report --json, comma-separated
  local home=$1
  shift
  SWEEP_HOME="$home" "$sweep" report --json >"$home.json"
  python3 - "$home.json" "$@" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(",".join(repr(r[k]) for k in sys.argv[2:]))
EOF
}

echo "scenario 1: 12 configurations of 3 virtual days each, on 6 GPUs"
printf '%-26s %12s %12s %14s %10s\n' "" "wall (days)" "ref (days)" "GPU-days busy" "occupancy"
for fam in synthetic recorded; do
  grid12 $fam >"$work/grid-$fam.yaml"
  for par in 1 6; do
    h="$work/g-$fam-$par"
    run "$h" "$work/grid-$fam.yaml" --gpus 6 --parallel $par
    IFS=, read -r wall busy occ <<<"$(report "$h" wall_seconds gpu_seconds_busy occupancy)"
    printf '%-26s %12.2f %12.2f %14.2f %9.1f%%\n' "$fam, $par at a time" \
      "$(echo "$wall / 86400" | bc -l)" "$((36 / par))" \
      "$(echo "$busy / 86400" | bc -l)" "$(echo "100 * $occ" | bc -l)"
  done
done

# ---- scenario 2: the mixed workload on 8 GPUs --------------------------
inventory='6x80GiB,2x80GiB:mig=4g.40gb+3g.40gb'
mixed() { # FAMILY SIDE LIMIT (a run_cap: or budget: line)
  local cmd="[awk, -f, $work/curve.awk, --, --mig_from=6"
  [ "$1" = synthetic ] || cmd="$cmd, --family=recorded, --curves=$curves"
  if [ "$2" = baseline ]; then
    printf 'method: random\nresources: {gpus: 1, gpu_memory: 20GiB}\n'
    cmd="$cmd, \"\${args}\"]"
  else
    printf 'method: bayes\nresources: {gpu_memory: 20GiB}\n'
    printf 'early_terminate: {type: asha, min_iter: 3, eta: 3}\n'
    cmd="$cmd, --share=0.25, --share_slice=0.5, --resume=1, \"\${args}\"]"
  fi
  printf '%s\nretries: 2\ncommand: %s\n' "$3" "$cmd"
  if [ "$1" = synthetic ]; then
    cat <<EOF
metric: {name: loss, goal: minimize}
parameters:
  lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
  dropout: {distribution: uniform, min: 0.0, max: 0.5}
  batch_size: {values: [32, 64, 128, 256]}
  model: {values: [small, large]}
EOF
  else
    cat <<EOF
metric: {name: val_loss, goal: minimize}
parameters:
  lr: {values: [0.1, 0.03, 0.01, 0.003, 0.001, 0.0003]}
  hidden: {values: [32, 128, 256]}
  optimizer: {values: [sgd, adam]}
  dropout: {values: [0.0, 0.25, 0.5]}
  batch_size: {values: [32, 128]}
EOF
  fi
}
# When HOME's sweep first reported a METRIC of at most BEST, from its
# first start, and the GPU-seconds its attempts held until then.
reach() { # HOME METRIC BEST
  SWEEP_HOME="$1" "$sweep" query --csv "
    with t0 as (select min(started_at) as s from attempts),
         hit as (select min(time) as t from metrics
                 where name = '$2' and value <= $3)
    select (select t from hit) - (select s from t0),
           (select sum(max(0, min(ended_at, (select t from hit)) - started_at) * gpu)
            from attempts)" | tail -1
}
# The store's figures of HOME beside the report's: the GPU-seconds of its
# failed attempts, and its occupancy (on GPUS) until its last trial
# started, before the cluster drains.
store_figures() { # HOME GPUS
  SWEEP_HOME="$1" "$sweep" query --csv "
    with w as (select min(started_at) as s, max(started_at) as t from attempts)
    select (select coalesce(sum((ended_at - started_at) * gpu), 0) from attempts
            where outcome <> 'finished' and outcome <> 'stopped'),
           (select sum(max(0, min(ended_at, (select t from w)) - started_at) * gpu)
            from attempts) / ($2 * ((select t from w) - (select s from w)))" | tail -1
}
h() { echo "$1 / 3600" | bc -l; }
pct() { echo "100 * $1" | bc -l; }
ratio() { if [ "$2" = nan ]; then echo nan; else echo "$1 / $2" | bc -l; fi; }
scenario2() { # FAMILY METRIC BASELINE_RUNS CAPPED_RUNS
  local base="$work/m-$1-baseline" sw="$work/m-$1-sweep" capd="$work/m-$1-capped"
  local bwall bbusy bocc bbest blost bruns swall sbusy socc sbest slost sstop sruns
  local cwall cbusy cocc cbest clost cstop cruns bt bg st sg ct cg budget
  local bf bsteady sf ssteady cf csteady
  echo
  echo "scenario 2, $1 curves, on 8 GPUs ($inventory), fail rate 0.1:"
  echo "  baseline: $3 trials; sweep: the GPU-hours the baseline used (budget:);"
  echo "  sweep, capped: run_cap $4 instead of a budget"
  mixed "$1" baseline "run_cap: $3" >"$work/mixed-$1-baseline.yaml"
  run "$base" "$work/mixed-$1-baseline.yaml" --gpus "$inventory" --sim-fail-rate 0.1
  IFS=, read -r bwall bbusy bocc bbest blost bruns <<<"$(report "$base" wall_seconds gpu_seconds_busy occupancy best_value gpu_seconds_lost_to_failures runs)"
  budget=$(printf '%.1f' "$(h "$bbusy")")
  mixed "$1" sweep "budget: {gpu_hours: $budget}" >"$work/mixed-$1-sweep.yaml"
  mixed "$1" sweep "run_cap: $4" >"$work/mixed-$1-capped.yaml"
  run "$sw" "$work/mixed-$1-sweep.yaml" --gpus "$inventory" --sim-fail-rate 0.1
  run "$capd" "$work/mixed-$1-capped.yaml" --gpus "$inventory" --sim-fail-rate 0.1
  IFS=, read -r swall sbusy socc sbest slost sstop sruns <<<"$(report "$sw" wall_seconds gpu_seconds_busy occupancy best_value gpu_seconds_lost_to_failures stopped runs)"
  IFS=, read -r cwall cbusy cocc cbest clost cstop cruns <<<"$(report "$capd" wall_seconds gpu_seconds_busy occupancy best_value gpu_seconds_lost_to_failures stopped runs)"
  IFS=, read -r bt bg <<<"$(reach "$base" "$2" "$bbest")"
  IFS=, read -r st sg <<<"$(reach "$sw" "$2" "$bbest")"
  IFS=, read -r ct cg <<<"$(reach "$capd" "$2" "$bbest")"
  IFS=, read -r bf bsteady <<<"$(store_figures "$base" 8)"
  IFS=, read -r sf ssteady <<<"$(store_figures "$sw" 8)"
  IFS=, read -r cf csteady <<<"$(store_figures "$capd" 8)"
  [ -n "$st" ] || { st=nan; sg=nan; }
  [ -n "$ct" ] || { ct=nan; cg=nan; }
  printf '%-42s %9s %9s %7s  %9s %7s\n' "" "baseline" "sweep" "ratio" "capped" "ratio"
  printf '%-42s %9d %9d %7s  %9d\n' "trials" "$bruns" "$sruns" "" "$cruns"
  printf '%-42s %9.1f %9.1f %6.2fx  %9.1f %6.2fx\n' "wall-clock to the baseline's best (h)" "$(h "$bt")" "$(h "$st")" "$(ratio "$bt" "$st")" "$(h "$ct")" "$(ratio "$bt" "$ct")"
  printf '%-42s %9.1f %9.1f %6.2fx  %9.1f %6.2fx\n' "GPU-hours to the baseline's best" "$(h "$bg")" "$(h "$sg")" "$(ratio "$bg" "$sg")" "$(h "$cg")" "$(ratio "$bg" "$cg")"
  printf '%-42s %8.1f%% %8.1f%% %7s  %8.1f%%\n' "occupancy (sweep report)" "$(pct "$bocc")" "$(pct "$socc")" "" "$(pct "$cocc")"
  printf '%-42s %8.1f%% %8.1f%% %7s  %8.1f%%\n' "occupancy until the last trial started" "$(pct "$bsteady")" "$(pct "$ssteady")" "" "$(pct "$csteady")"
  printf '%-42s %9.1f %9.1f %7s  %9.1f\n' "wall-clock of the whole sweep (h)" "$(h "$bwall")" "$(h "$swall")" "" "$(h "$cwall")"
  printf '%-42s %9.1f %9.1f %7s  %9.1f\n' "GPU-hours busy, whole sweep" "$(h "$bbusy")" "$(h "$sbusy")" "" "$(h "$cbusy")"
  printf '%-42s %9.1f %9.1f %7s  %9.1f\n' "GPU-hours in failed attempts" "$(h "$bf")" "$(h "$sf")" "" "$(h "$cf")"
  printf '%-42s %9.1f %9.1f %7s  %9.1f\n' "  of which lost (sweep report)" "$(h "$blost")" "$(h "$slost")" "" "$(h "$clost")"
  printf '%-42s %9.5f %9.5f %7s  %9.5f\n' "best $2" "$bbest" "$sbest" "" "$cbest"
  printf '%-42s %9d %9d %7s  %9d\n' "runs stopped early" 0 "$sstop" "" "$cstop"
}
scenario2 synthetic loss "$cap" $((cap * 5))
scenario2 recorded val_loss 40 200
echo
echo "(targets: >= 4x less wall-clock and >= 3x fewer GPU-hours to the baseline's best,"
echo " >= 90 % occupancy; seed $seed; sweep: $sweep)"
if [ -n "${SVG:-}" ]; then
  SWEEP_HOME="$work/m-synthetic-sweep" "$sweep" report --plot "$SVG" >/dev/null
  echo "wrote $SVG"
fi
