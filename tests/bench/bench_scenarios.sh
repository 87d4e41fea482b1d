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
# Scenario 2: the strongest setups each peer's users have, on the same
# cluster of 8 GPUs, two of them split into MIG slices (4g.40gb +
# 3g.40gb each: 10 devices), with failures injected (--sim-fail-rate
# 0.1: an attempt dies at a uniformly drawn point with probability 0.1),
# every side given the same GPU-hour budget (`budget: {gpu_hours: H}`:
# no trial starts once H is spent; those running finish), on each family:
#   - wandb1: W&B agents, one per device (10 trials at once, each holding
#     a whole device: resources {gpus: 1}), W&B's own `bayes` and
#     `early_terminate: {type: hyperband, min_iter: 3, eta: 3}` (sweep's
#     hyperband stops exactly the runs W&B's does, docs/stopping.md); a
#     crashed run is not retried, as W&B's agent does not;
#   - wandb4: the same with four agents per GPU and two per slice (32 at
#     once: resources {gpu_memory: 20GiB});
#   - ray: Ray Tune's defaults, random search and ASHAScheduler
#     (grace_period 1, reduction_factor 4: it stops trials at rungs),
#     fractional GPUs (4 a GPU, 2 a slice), FailureConfig(max_failures=2)
#     resuming from the trial's checkpoint: played by sweep's own
#     `asha` rule with the same settings;
#   - optuna1, optuna4: Optuna's TPESampler(multivariate, constant_liar)
#     and HyperbandPruner, as its docs recommend, the real optuna on
#     virtual time (optuna_scenarios.py: its header states the settings),
#     10 or 32 workers; when Debian's python has optuna;
#   - sweep_hb: sweep with bayes and hyperband, packing (4 a GPU, 2 a
#     slice) and retries resumed from the last epoch reported;
#   - sweep: sweep's full policy: bayes fitted on the rungs' values,
#     promotion ASHA (min_iter 3, eta 3, max_iter the curves' length:
#     runs pause at rungs, their GPU given to others, and resume from
#     their checkpoint when promoted), packing, resumed retries;
#   - capped: the same with run_cap C instead of the budget: a sweep that
#     ends while the GPUs are still paid for (the drain).
# The surrogate resumes from its checkpoint (--resume=1) on the sides
# whose users' trainers would (ray, sweep), and the simulator resumes a
# promoted run from the step it paused at.
#
# The compute model, the same on all sides: a small model keeps at most
# a quarter of a GPU busy, a large one 40 % (a medium one 32.5 %; they
# are too small to fill a GPU: the reason to pack them). A trial's epoch
# takes its base time times max(1, demand / (device compute x share)), a
# MIG slice's compute counted as 3/7 of a GPU (the smaller slice, for
# both), and packed trials (share < 1) 10 % longer for interference. So
# a large model packed 4 to a GPU runs 1.76x slower than alone, 2.05x on
# half a slice: packing is not free here.
#
# Figures, for each side: trials, its best value, GPU-hours busy and
# occupancy (`sweep report --json`; optuna_scenarios.py counts them the
# same way), occupancy until its last trial started (from the store);
# then the wall-clock and GPU-hours (each attempt's duration times the
# GPU share it held) until it first reported a value at least as good as
#   - the strongest baseline's best: the best value any baseline reached
#     within the budget (on the synthetic family each epoch's loss has
#     +-0.004 of seeded noise, so this best is partly a lucky epoch);
#   - a common target (0.405 synthetic, 0.075 recorded: within about 1 %
#     of what the space allows), beside the baseline first there;
# and the ratio: that baseline's GPU-hours over the side's. Beside them,
# the floor: the fewest GPU-hours any policy can spend to each value
# while it keeps 95 % of the 8 GPUs busy (0.95 x 8 x how soon the
# fastest configuration of the family first reports the value, alone on
# a whole GPU: scenario_curve.awk --floor), and its ratio, the most any
# such policy could reach against that baseline.
#
#   bash tests/bench/bench_scenarios.sh [_ [SEED]]    (default seed 1;
#   about 7 minutes on 2 cores, most of it bayes and TPE over thousands
#   of synthetic trials; tests/bench/scenarios_doc.sh runs seeds 1-3 and
#   writes the tables of docs/simulation.md)
#
# Environment: FAMILIES ("synthetic recorded"), SKIP1=1 (no scenario 1),
# SIDES (all of them: the sides to play; the strongest baseline is then
# the strongest of the baselines played, or of sweep's sides if none),
# BUDGET_SYNTHETIC (700), BUDGET_RECORDED (300), CAP_SYNTHETIC (1500),
# CAP_RECORDED (216), TARGET_SYNTHETIC (0.405), TARGET_RECORDED (0.075),
# MD=FILE (append each side's figures as a row for scenarios_doc.py),
# BRACKETS (1: Hyperband's brackets of the sweep and capped sides'
# promotion ASHA, early_terminate.brackets), EXTRAPOLATE (false: their
# early_terminate.extrapolate), DRAIN (true: their early_terminate.drain),
# METHOD (bayes: of those),
# KEEP=1 (keep the sweeps' homes), SVG=FILE (`sweep report --plot` of
# the synthetic sweep side).
# The sweep binary: $SWEEP_BIN, else build/release, else build/debug.
set -euo pipefail
cd "$(dirname "$0")/../.."
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

if [ -z "${SKIP1:-}" ]; then
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

fi

# ---- scenario 2: the strongest setups, same cluster, same budget -----
inventory='6x80GiB,2x80GiB:mig=4g.40gb+3g.40gb'
# SIDE MAX_ITER -> its lines of a sweep file: what each side's users run
side_lines() {
  case $1 in
    wandb1) # W&B agents, one per device, W&B's own bayes and hyperband;
      # a crashed run is not retried (the agent moves on to the next)
      printf 'method: bayes\nresources: {gpus: 1}\nretries: 0\n'
      printf 'early_terminate: {type: hyperband, min_iter: 3, eta: 3}\n' ;;
    wandb4) # the same, four agents per GPU and two per MIG slice
      printf 'method: bayes\nresources: {gpu_memory: 20GiB}\nretries: 0\n'
      printf 'early_terminate: {type: hyperband, min_iter: 3, eta: 3}\n' ;;
    ray) # Ray Tune: random search (its default), ASHAScheduler with its
      # defaults (grace_period 1, reduction_factor 4; it stops trials at
      # rungs), fractional GPUs, FailureConfig(max_failures=2) resuming
      # from the trial's checkpoint
      printf 'method: random\nresources: {gpu_memory: 20GiB}\nretries: 2\n'
      printf 'early_terminate: {type: asha, min_iter: 1, eta: 4}\n' ;;
    sweep_hb) # sweep, stopping: bayes, Hyperband as W&B's, memory-aware
      # packing, retries resumed from checkpoints
      printf 'method: bayes\nresources: {gpu_memory: 20GiB}\nretries: 2\n'
      printf 'early_terminate: {type: hyperband, min_iter: 3, eta: 3}\n' ;;
    sweep | capped) # sweep's policy: bayes, promotion ASHA (runs pause at
      # rungs, their GPU given to others, and resume from their
      # checkpoint when promoted), memory-aware packing, retries resumed
      # from checkpoints
      printf 'method: %s\nresources: {gpu_memory: 20GiB}\nretries: 2\n' "${METHOD:-bayes}"
      printf 'early_terminate: {type: asha, promote: true, min_iter: 3, eta: 3, max_iter: %s, brackets: %s, extrapolate: %s, drain: %s}\n' \
        "$2" "${BRACKETS:-1}" "${EXTRAPOLATE:-false}" "${DRAIN:-true}" ;;
  esac
}
# FAMILY SIDE LIMIT -> a sweep file (LIMIT: a run_cap: or budget: line)
scenario_file() {
  local cmd="[awk, -f, $work/curve.awk, --, --mig_from=6"
  [ "$1" = synthetic ] || cmd="$cmd, --family=recorded, --curves=$curves"
  [ "$2" = wandb1 ] || cmd="$cmd, --share=0.25, --share_slice=0.5"
  [ "$2" = wandb1 ] || [ "$2" = wandb4 ] || cmd="$cmd, --resume=1"
  side_lines "$2" "$([ "$1" = synthetic ] && echo 81 || echo 40)"
  printf '%s\ncommand: %s, "${args}"]\n' "$3" "$cmd"
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
# Occupancy of HOME on GPUS from its first start until its last trial
# started (a run's first attempt: a promotion is not a new trial),
# before the cluster drains.
steady() { # HOME GPUS
  SWEEP_HOME="$1" "$sweep" query --csv "
    with w as (select min(started_at) as s,
                      max(case when attempt = 1 then started_at end) as t
               from attempts)
    select (select sum(max(0, min(ended_at, (select t from w)) - started_at) * gpu)
            from attempts) / ($2 * ((select t from w) - (select s from w)))" | tail -1
}
# The floor: how soon any configuration of FAMILY can first report
# VALUE (the fastest, alone on a whole GPU: curve.awk --floor), and so
# the fewest GPU-seconds any policy can spend to VALUE while it keeps
# 95 % of the 8 GPUs busy (the occupancy the benchmark asks of sweep):
# 0.95 x 8 x that time. Prints "SECONDS GPU_SECONDS WHAT", nan nan when
# no configuration reaches it.
floor_of() { # FAMILY VALUE
  local out secs
  if [ "$1" = synthetic ]; then
    out=$(awk -f "$work/curve.awk" -- --lr_min=0.0001 --lr_max=0.1 --floor="$2")
  else
    out=$(awk -f "$work/curve.awk" -- --family=recorded --curves="$curves" --floor="$2")
  fi
  secs=${out%% *}
  if [ "$secs" = -1 ]; then echo "nan nan ${out#* }"; else echo "$secs $(echo "0.95 * 8 * $secs" | bc -l) ${out#* }"; fi
}
h() { echo "$1 / 3600" | bc -l; }
pct() { echo "100 * $1" | bc -l; }
ratio() { if [ "$1" = nan ] || [ "$2" = nan ]; then echo nan; else echo "$1 / $2" | bc -l; fi; }

# Optuna's side, when Debian's python has optuna: TPESampler and
# HyperbandPruner in optuna_scenarios.py, on the same curves and cluster.
optuna_py=/usr/bin/python3
have_optuna() {
  [ -f tests/bench/optuna_scenarios.py ] && "$optuna_py" -c 'import optuna' 2>/dev/null
}
optuna() { # FAMILY WORKERS_PER_GPU BUDGET [ARGS...] -> its --json
  local fam=$1 per=$2 budget=$3
  shift 3
  "$optuna_py" tests/bench/optuna_scenarios.py --family "$fam" --seed "$seed" \
    --workers-per-gpu "$per" --budget-gpu-hours "$budget" --fail-rate 0.1 --json "$@"
}
json_keys() { # FILE KEY... -> the keys' values (a.b: b of a), comma-separated
  "$optuna_py" - "$@" <<'EOF'
import functools, json, sys
r = json.load(open(sys.argv[1]))
print(",".join(repr(functools.reduce(lambda o, k: o[k], k.split("."), r))
               for k in sys.argv[2:]))
EOF
}
json_targets() { # FILE -> wall and GPU-seconds to each --target, or nan
  "$optuna_py" - "$1" <<'EOF'
import json, sys
out = []
for t in json.load(open(sys.argv[1]))["targets"]:
    out += [repr(3600 * t["hours"]), repr(3600 * t["gpu_hours"])] if t["reached"] else ["nan", "nan"]
print(",".join(out))
EOF
}

want() { [[ " ${FAMILIES:-synthetic recorded} " == *" $1 "* ]]; }
played() { [[ " ${SIDES:-wandb1 wandb4 ray optuna1 optuna4 sweep_hb sweep capped} " == *" $1 "* ]]; }
declare -A best gpuh occ stead trials
scenario2() { # FAMILY METRIC BUDGET CAP TARGET
  local fam=$1 metric=$2 budget=$3 cap=$4 target=$5 side sides strongest="" fastest t g ft fg
  sides="" ours=""
  for side in wandb1 wandb4 ray; do played $side && sides="$sides $side"; done
  for side in sweep_hb sweep capped; do played $side && ours="$ours $side"; done
  echo
  echo "scenario 2, $fam curves, on 8 GPUs ($inventory), fail rate 0.1,"
  echo "  every side given budget: {gpu_hours: $budget}; capped: sweep with run_cap $cap instead"
  for side in $sides $ours; do
    if [ "$side" = capped ]; then lim="run_cap: $cap"; else lim="budget: {gpu_hours: $budget}"; fi
    scenario_file "$fam" "$side" "$lim" >"$work/$fam-$side.yaml"
    run "$work/h-$fam-$side" "$work/$fam-$side.yaml" --gpus "$inventory" --sim-fail-rate 0.1
    IFS=, read -r best[$side] gpuh[$side] occ[$side] trials[$side] <<<"$(report "$work/h-$fam-$side" best_value gpu_seconds_busy occupancy runs)"
    stead[$side]=$(steady "$work/h-$fam-$side" 8)
  done
  if have_optuna; then
    for side in optuna1 optuna4; do
      played $side || continue
      optuna "$fam" "${side#optuna}" "$budget" >"$work/$fam-$side.json"
      IFS=, read -r best[$side] gpuh[$side] occ[$side] trials[$side] <<<"$(json_keys "$work/$fam-$side.json" best gpu_hours_busy occupancy trials)"
      gpuh[$side]=$(echo "${gpuh[$side]} * 3600" | bc -l)
      stead[$side]=nan
      sides="$sides $side"
    done
  fi
  # the strongest baseline: the best value at the budget; of those that
  # reached the same, the one that spent the fewest GPU-hours to it
  declare -A own
  for side in ${sides:-$ours}; do
    if [ "${side#optuna}" != "$side" ]; then
      own[$side]=$(json_keys "$work/$fam-$side.json" best_at.gpu_hours)
      own[$side]=$(echo "${own[$side]} * 3600" | bc -l)
    else
      IFS=, read -r t own[$side] <<<"$(reach "$work/h-$fam-$side" "$metric" "${best[$side]}")"
    fi
    if [ -z "$strongest" ] || awk -v a="${best[$side]}" -v b="${best[$strongest]}" \
      -v g="${own[$side]}" -v h="${own[$strongest]}" 'BEGIN { exit !(a < b || (a == b && g < h)) }'; then
      strongest=$side
    fi
  done
  echo "  the strongest baseline: $strongest, best $metric ${best[$strongest]}"
  declare -A to_h to_g to_fh to_fg
  for side in $sides $ours; do
    if [ "${side#optuna}" != "$side" ]; then
      optuna "$fam" "${side#optuna}" "$budget" --target "${best[$strongest]}" --target "$target" >"$work/$fam-$side-t.json"
      IFS=, read -r t g ft fg <<<"$(json_targets "$work/$fam-$side-t.json")"
    else
      IFS=, read -r t g <<<"$(reach "$work/h-$fam-$side" "$metric" "${best[$strongest]}")"
      IFS=, read -r ft fg <<<"$(reach "$work/h-$fam-$side" "$metric" "$target")"
    fi
    [ -n "$ft" ] || { ft=nan; fg=nan; }
    to_fh[$side]=$ft to_fg[$side]=$fg
    [ -n "$t" ] || { t=nan; g=nan; }
    to_h[$side]=$t to_g[$side]=$g
  done
  # the strongest baseline at the common target: the fewest GPU-hours
  fastest=""
  for side in $sides; do
    [ "${to_fg[$side]}" != nan ] || continue
    if [ -z "$fastest" ] || awk -v a="${to_fg[$side]}" -v b="${to_fg[$fastest]}" 'BEGIN { exit !(a < b) }'; then
      fastest=$side
    fi
  done
  echo "  the strongest baseline to $metric $target: ${fastest:-none reached it}"
  local fb fbg fbw ftt ftg ftw
  read -r fb fbg fbw <<<"$(floor_of "$fam" "${best[$strongest]}")"
  read -r ftt ftg ftw <<<"$(floor_of "$fam" "$target")"
  echo "  the floor, the fewest GPU-hours any policy can spend to a value while it"
  echo "  keeps 95 % of the 8 GPUs busy: 0.95 x 8 x how soon the fastest configuration"
  echo "  reaches it alone on a whole GPU ($fbw; $ftw)"
  printf '  %-9s %6s %9s %7s %6s %6s | %-18s %7s | %-18s %7s\n' "" "" "" "GPU-h" "" "until" \
    "to ${best[$strongest]}" "" "to $target" ""
  printf '  %-9s %6s %9s %7s %6s %6s | %8s %9s %7s | %8s %9s %7s\n' side trials best busy occup. "last" \
    "wall h" "GPU-h" ratio "wall h" "GPU-h" ratio
  for side in $sides $ours; do
    printf '  %-9s %6d %9.5f %7.1f %5.1f%% %6s | %8s %9s %7s | %8s %9s %7s\n' "$side" "${trials[$side]}" "${best[$side]}" \
      "$(h "${gpuh[$side]}")" "$(pct "${occ[$side]}")" "$(fmt_pct "${stead[$side]}")" \
      "$(fmt_h "${to_h[$side]}")" "$(fmt_h "${to_g[$side]}")" "$(fmt_x "${to_g[$strongest]}" "${to_g[$side]}")" \
      "$(fmt_h "${to_fh[$side]}")" "$(fmt_h "${to_fg[$side]}")" "$(fmt_x "${to_fg[${fastest:-$strongest}]}" "${to_fg[$side]}")"
    [ -z "${MD:-}" ] || echo "$fam|$seed|$side|${trials[$side]}|${best[$side]}|${gpuh[$side]}|${occ[$side]}|${stead[$side]}|${to_h[$side]}|${to_g[$side]}|${to_fh[$side]}|${to_fg[$side]}|$strongest|${fastest:-}|$target|$budget" >>"$MD"
  done
  printf '  %-9s %6s %9s %7s %5.1f%% %6s | %8s %9s %7s | %8s %9s %7s\n' floor - - - 95 - \
    "$(fmt_h "$fb")" "$(fmt_h "$fbg")" "$(fmt_x "${to_g[$strongest]}" "$fbg")" \
    "$(fmt_h "$ftt")" "$(fmt_h "$ftg")" "$(fmt_x "${to_fg[${fastest:-$strongest}]}" "$ftg")"
  [ -z "${MD:-}" ] || echo "$fam|$seed|floor|-|nan|nan|0.95|nan|$fb|$fbg|$ftt|$ftg|$strongest|${fastest:-}|$target|$budget" >>"$MD"
}
fmt_h() { [ "$1" = nan ] && echo - || printf '%.1f' "$(h "$1")"; }
fmt_pct() { [ "$1" = nan ] && echo - || printf '%.1f%%' "$(pct "$1")"; }
fmt_x() { local r; r=$(ratio "$1" "$2"); [ "$r" = nan ] && echo - || printf '%.2fx' "$r"; }
! want synthetic || scenario2 synthetic loss "${BUDGET_SYNTHETIC:-700}" "${CAP_SYNTHETIC:-1500}" "${TARGET_SYNTHETIC:-0.405}"
! want recorded || scenario2 recorded val_loss "${BUDGET_RECORDED:-300}" "${CAP_RECORDED:-216}" "${TARGET_RECORDED:-0.075}"
echo
echo "(ratio: the strongest baseline's GPU-hours to the value over the side's: the"
echo " one with the best value, and the one first at the common target; target:"
echo " >= 2x to the strongest baseline's best on both families, at >= 95 % occupancy;"
echo " the floor's ratio: the most any policy at that occupancy could reach;"
echo " seed $seed; sweep: $sweep)"
if [ -n "${SVG:-}" ]; then
  SWEEP_HOME="$work/h-synthetic-sweep" "$sweep" report --plot "$SVG" >/dev/null
  echo "wrote $SVG"
fi
