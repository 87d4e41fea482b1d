#!/usr/bin/env bash
# Multi-fidelity bayes against plain bayes, both under promotion ASHA, on
# the simulated cluster (`--backend sim`), side by side in one run.
#
# The curves are the scenario benchmarks' synthetic family
# (scenario_curve.awk): loss(t) = a + b t^-c + noise, a, b and c from the
# parameters (lr log-uniform over 1e-4..0.1, dropout uniform over 0..0.5,
# batch_size one of 32..256, model small or large); small models train
# 81 epochs of 300 s, large ones 81 of 900 s, so the best final loss (a
# little above 0.40) costs between 7 and 20 GPU-hours to train, and the
# early epochs rank runs only roughly (the large models start slower and
# end lower; lr sets how fast a run converges as well as where).
#
# Both sides: method bayes (METHOD=tpe: tpe), early_terminate {type: asha, promote: true,
# min_iter: 3, eta: 3, max_iter: 81} (rungs 3, 9, 27, 81), 8 GPUs, one
# trial per GPU, run_cap TRIALS, the same seed. The one difference:
# `multi_fidelity: false` on the plain side, whose GP takes each run's
# latest value as its result (a paused run's at its rung: values of
# epoch 3 beside values of epoch 81); the multi-fidelity side fits it on
# the values at the highest rung with enough of them, the runs below
# estimated there (docs/search.md).
#
# Figures, from the store (sweep query): the GPU-hours (attempts' held
# time until then; one GPU each) and trials (runs made) until the first
# run finished with a loss of at most TARGET; the best final loss of the
# whole sweep and its GPU-hours.
#
# The default target, 0.405, is within 1.2 % of the family's best final
# loss (about 0.4003, a large model at lr 0.0037, dropout 0.15, batch
# 64; small models reach about 0.4036).
#
#   bash tests/bench/bench_mfbo.sh [TRIALS [TARGET [SEEDS]]]
#   (default 200 0.405 "1 2 3"; under a minute on 2 cores)
#   METHOD=tpe bash tests/bench/bench_mfbo.sh   (the same with tpe)
#
# The sweep binary: $SWEEP_BIN, else build/release, else build/debug.
set -euo pipefail
cd "$(dirname "$0")/../.."
cap=${1:-200}
target=${2:-0.405}
seeds=${3:-1 2 3}
sweep=${SWEEP_BIN:-}
for b in build/release build/debug; do
  [ -n "$sweep" ] || [ ! -x "$b/orchestrator/sweep" ] || sweep=$PWD/$b/orchestrator/sweep
done
[ -x "${sweep:-}" ] || { echo "build sweep first (cmake --build --preset release)" >&2; exit 1; }
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cp tests/bench/scenario_curve.awk "$work/curve.awk"

sweep_file() { # EXTRA -> the sweep file, EXTRA one more top-level line
  cat <<EOF
method: ${METHOD:-bayes}
metric: {name: loss, goal: minimize}
command: [awk, -f, $work/curve.awk, --, --resume=1, "\${args}"]
early_terminate: {type: asha, promote: true, min_iter: 3, eta: 3, max_iter: 81}
resources: {gpus: 1}
run_cap: $cap
$1
parameters:
  lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
  dropout: {distribution: uniform, min: 0.0, max: 0.5}
  batch_size: {values: [32, 64, 128, 256]}
  model: {values: [small, large]}
EOF
}
run() { # HOME FILE SEED
  (cd "$work" && SWEEP_HOME="$1" SWEEP_GIT=off "$sweep" run "$2" --backend sim \
    --gpus 8 --seed "$3" --quiet) >"$1.log" 2>&1 || { cat "$1.log" >&2; exit 1; }
}
# GPU-hours and trials until the first finished loss <= TARGET (empty
# when never), the best final loss, the whole sweep's GPU-hours.
figures() { # HOME
  SWEEP_HOME="$1" "$sweep" query --csv "
    with hit as (select min(time) as t from metrics
                 where name = 'loss' and step = 81 and value <= $target)
    select (select sum(max(0, min(ended_at, (select t from hit)) - started_at) * gpu)
            from attempts) / 3600,
           (select count(*) from runs where created_at <= (select t from hit)),
           (select min(value) from metrics where name = 'loss' and step = 81),
           (select sum((ended_at - started_at) * gpu) from attempts) / 3600" | tail -1
}
ratio() { if [ -z "$1" ] || [ -z "$2" ]; then echo "-"; else printf '%.2fx' "$(echo "$1 / $2" | bc -l)"; fi; }
num() { if [ -z "$1" ]; then echo "never"; else printf "%.${2}f" "$1"; fi; }

sweep_file "multi_fidelity: false" >"$work/plain.yaml"
sweep_file "" >"$work/mf.yaml"
echo "${METHOD:-bayes} under promotion ASHA (rungs 3, 9, 27, 81), 8 GPUs, $cap trials, synthetic curves"
echo "until the first run finished with loss <= $target:"
printf '%-6s %13s %13s %7s  %8s %8s %7s  %10s %10s  %9s %9s\n' "seed" \
  "GPU-h plain" "GPU-h mf" "ratio" "trials" "trials" "ratio" "best plain" "best mf" \
  "GPU-h all" "GPU-h all"
printf '%-6s %13s %13s %7s  %8s %8s %7s  %10s %10s  %9s %9s\n' "" "" "" "" "plain" "mf" "" \
  "" "" "plain" "mf"
for seed in $seeds; do
  run "$work/plain-$seed" "$work/plain.yaml" "$seed"
  run "$work/mf-$seed" "$work/mf.yaml" "$seed"
  IFS=, read -r pg pt pbest pall <<<"$(figures "$work/plain-$seed")"
  IFS=, read -r mg mt mbest mall <<<"$(figures "$work/mf-$seed")"
  [ -n "$pg" ] || pt=
  [ -n "$mg" ] || mt=
  printf '%-6s %13s %13s %7s  %8s %8s %7s  %10s %10s  %9s %9s\n' "$seed" \
    "$(num "$pg" 1)" "$(num "$mg" 1)" "$(ratio "$pg" "$mg")" \
    "${pt:-never}" "${mt:-never}" "$(ratio "$pt" "$mt")" \
    "$(num "$pbest" 5)" "$(num "$mbest" 5)" "$(num "$pall" 1)" "$(num "$mall" 1)"
done
