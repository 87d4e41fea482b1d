#!/bin/sh
# A dependency-free trainer: minimises (x-3)^2 + (y+1)^2 + 1/step over
# --steps steps of --sleep seconds, reporting `@metrics` lines, and
# checkpoints its step in $SWEEP_CHECKPOINT_DIR so a rerun resumes.
# --fail=N exits 3 at step N on the first attempt (to exercise retries).
# Under promotion ASHA it trains only to $SWEEP_TRAIN_UNTIL, then exits;
# promoted, it resumes from its checkpoint.
x=0 y=0 steps=5 nap=0.05 fail=0
for a in "$@"; do
  case "$a" in
    --x=*) x=${a#--x=} ;;
    --y=*) y=${a#--y=} ;;
    --steps=*) steps=${a#--steps=} ;;
    --sleep=*) nap=${a#--sleep=} ;;
    --fail=*) fail=${a#--fail=} ;;
  esac
done
dir=${SWEEP_CHECKPOINT_DIR:-.}
i=0
[ -f "$dir/step" ] && i=$(cat "$dir/step")
until=$steps
[ -n "${SWEEP_TRAIN_UNTIL:-}" ] && [ "$SWEEP_TRAIN_UNTIL" -lt "$steps" ] && until=$SWEEP_TRAIN_UNTIL
while [ "$i" -lt "$until" ]; do
  i=$((i + 1))
  sleep "$nap"
  if [ "$i" -eq "$fail" ] && [ "${SWEEP_ATTEMPT:-1}" -eq 1 ]; then
    echo "failing at step $i, as asked" >&2
    exit 3
  fi
  loss=$(awk -v x="$x" -v y="$y" -v i="$i" \
    'BEGIN { printf "%.6f", (x - 3) ^ 2 + (y + 1) ^ 2 + 1 / i }')
  echo "@metrics {\"step\": $i, \"loss\": $loss}"
  echo "$i" > "$dir/step.tmp" && mv "$dir/step.tmp" "$dir/step"
done
