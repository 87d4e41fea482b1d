#!/usr/bin/env bash
# Records the learning curves that bench_scenarios.sh replays as its
# "recorded" surrogate: examples/train_mlp.py (an MLP on scikit-learn's
# digits, real PyTorch training) for 216 configurations (6 learning
# rates x 3 widths x 2 optimizers x 3 dropouts x 2 batch sizes), 40
# epochs each, val_loss after every epoch. Run once; it writes
# tests/bench/mlp_curves.csv
# (lr,hidden,optimizer,dropout,batch_size,epoch,val_loss), which is
# committed, so the benchmark needs neither PyTorch nor minutes.
#
#   bash tests/bench/record_mlp_curves.sh [PYTHON [JOBS]]   (default
#   python3, 2 at a time; needs torch and sklearn: Debian's python3-torch
#   python3-sklearn)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
jobs=${2:-2}
out=tests/bench/mlp_curves.csv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

one() { # LR HIDDEN OPTIMIZER DROPOUT BATCH -> that configuration's rows
  local dir="$work/$1-$2-$3-$4-$5"
  mkdir -p "$dir"
  SWEEP_CHECKPOINT_DIR=$dir "$py" examples/train_mlp.py --lr "$1" --hidden "$2" \
    --epochs 40 --batch_size "$5" --dropout "$4" \
    --optimizer "{'name': '$3', 'momentum': 0.9}" |
    sed -n 's/^@metrics //p' |
    "$py" -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    print("%s,%d,%.6f" % (sys.argv[1], m["step"], m["val_loss"]))
' "$1,$2,$3,$4,$5" >"$dir.csv"
}
export -f one
export py work
for lr in 0.1 0.03 0.01 0.003 0.001 0.0003; do
  for hidden in 32 128 256; do
    for opt in sgd adam; do
      for dropout in 0.0 0.25 0.5; do
        for batch in 32 128; do
          echo "$lr $hidden $opt $dropout $batch"
        done
      done
    done
  done
done | xargs -P "$jobs" -L 1 bash -c 'one "$@"' one
{
  echo "lr,hidden,optimizer,dropout,batch_size,epoch,val_loss"
  sort -t, -k1,1gr -k2,2n -k3,3 -k4,4g -k5,5n -k6,6n "$work"/*.csv
} >"$out.tmp"
[ "$(($(wc -l <"$out.tmp") - 1))" -eq $((216 * 40)) ] || { echo "record: missing rows" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "$out: $(($(wc -l <"$out") - 1)) points"
