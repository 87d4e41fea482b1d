#!/usr/bin/env bash
# Records the learning curves that bench_scenarios.sh replays as its
# "recorded" surrogate: examples/train_mlp.py (an MLP on scikit-learn's
# digits, real PyTorch training) for 20 configurations, 40 epochs each,
# val_loss after every epoch. Run once; it writes
# tests/bench/mlp_curves.csv (lr,hidden,optimizer,epoch,val_loss), which
# is committed, so the benchmark needs neither PyTorch nor minutes.
#
#   bash tests/bench/record_mlp_curves.sh [PYTHON]   (default python3;
#   needs torch and sklearn: Debian's python3-torch python3-sklearn)
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${1:-python3}
out=tests/bench/mlp_curves.csv
ckpt=$(mktemp -d)
trap 'rm -rf "$ckpt"' EXIT
echo "lr,hidden,optimizer,epoch,val_loss" >"$out.tmp"
for lr in 0.1 0.03 0.01 0.003 0.001; do
  for hidden in 32 256; do
    for opt in sgd adam; do
      rm -f "$ckpt"/*
      SWEEP_CHECKPOINT_DIR=$ckpt "$py" examples/train_mlp.py --lr "$lr" \
        --hidden "$hidden" --epochs 40 --batch_size 64 \
        --optimizer "{'name': '$opt', 'momentum': 0.9}" |
        sed -n 's/^@metrics //p' |
        "$py" -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    print("%s,%s,%s,%d,%.6f" % (sys.argv[1], sys.argv[2], sys.argv[3], m["step"], m["val_loss"]))
' "$lr" "$hidden" "$opt" >>"$out.tmp"
    done
  done
done
mv "$out.tmp" "$out"
echo "$out: $(($(wc -l <"$out") - 1)) points"
