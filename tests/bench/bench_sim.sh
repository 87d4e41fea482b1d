#!/usr/bin/env bash
# The simulated cluster (`sweep run --backend sim`): how much real time a
# simulated sweep takes, and whether its virtual figures are what they
# must be. Each scenario prints its virtual wall time and GPU-hours busy
# beside its reference, and the real seconds it took:
#
#   - 16 one-hour trials on 4 devices: 4 h of wall time, 16 GPU-hours
#     busy (the issue's target: within 1 %, under 10 s of real time);
#   - 2,000 trials on 64 GPUs (random search over a seeded synthetic
#     family of learning curves, loss(t) = a + b t^-c + noise, small
#     trials of 100 x 36 s and large ones of 100 x 72 s): the reference
#     makespan is the busy time spread evenly over 64, a lower bound;
#   - the same 2,000 with Hyperband (min_iter 3, eta 3): what early
#     stopping saves, measured in the same run;
#   - BIG (default 10,000) random trials on 4,096 GPUs, without and with
#     Hyperband, in CPU seconds beside the same trials' surrogates run
#     alone (the target: at most twice their cost).
#
# The devices are declared (--gpus N): the trials are packed on them as
# for real, one whole GPU each.
#
#   [BIG=N] bash tests/bench/bench_sim.sh [TRIALS]        (default 2000)
#
# The sweep binary: $SWEEP_BIN, else build/release, else build/debug.
# Run folders go under $TMPDIR (each trial makes a few files: a file
# system slow to create inodes shows in the real time).
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-2000}
sweep=${SWEEP_BIN:-}
for b in build/release build/debug; do
  [ -n "$sweep" ] || [ ! -x "$b/orchestrator/sweep" ] || sweep=$PWD/$b/orchestrator/sweep
done
[ -x "${sweep:-}" ] || { echo "build sweep first (cmake --build --preset release)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The surrogate: one awk process, its curve from its parameters.
cat >"$work/curve.awk" <<'EOF'
BEGIN {
    if (ENVIRON["SWEEP_SIMULATE"] != "1") { print "not simulated" > "/dev/stderr"; exit 3 }
    for (i = 1; i < ARGC; i++) {
        split(ARGV[i], kv, "=")
        p[substr(kv[1], 3)] = kv[2]
    }
    steps = p["steps"] ? p["steps"] : 100
    if (p["fixed"]) { # the 16-trial case: one hour, 60 steps of 60 s
        for (t = 1; t <= steps; t++)
            printf "@metrics {\"step\": %d, \"loss\": %.6f, \"_seconds\": 60}\n", t, p["lr"] + 1 / t
        exit
    }
    x = log(p["lr"]) / log(10) + 2.5
    a = 0.05 + 0.1 * x * x; b = 2; c = 0.3 + 0.2 * (p["width"] == 512)
    secs = p["width"] == 512 ? 72 : 36
    srand(int(p["lr"] * 1e7) + p["width"])
    for (t = 1; t <= steps; t++)
        printf "@metrics {\"step\": %d, \"loss\": %.6f, \"_seconds\": %d}\n", t, a + b * t ^ -c + 0.01 * rand(), secs
    exit
}
EOF
cat >"$work/fixed.yaml" <<EOF
method: grid
metric: {name: loss, goal: minimize}
command: [awk, -f, $work/curve.awk, --, "\${args}"]
parameters:
  fixed: {value: 1}
  steps: {value: 60}
  lr: {values: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6]}
EOF
family() { # EXTRA
  cat <<EOF
method: random
run_cap: $trials
metric: {name: loss, goal: minimize}
command: [awk, -f, $work/curve.awk, --, "\${args}"]
$1
parameters:
  lr: {distribution: log_uniform_values, min: 0.0001, max: 0.1}
  width: {values: [128, 512]}
EOF
}
family "" >"$work/family.yaml"
family "early_terminate: {type: hyperband, min_iter: 3, eta: 3}" >"$work/hyperband.yaml"

run() { # NAME FILE GPUS -> real seconds, then the store's figures
  local t0 t1
  t0=$(date +%s.%N)
  SWEEP_HOME="$work/$1" "$sweep" run "$2" --backend sim --gpus "$3" \
    --seed 1 --quiet >"$work/$1.log" 2>&1 || { cat "$work/$1.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  printf '%s,' "$(echo "$t1 - $t0" | bc)"
  SWEEP_HOME="$work/$1" "$sweep" query --csv \
    "select (max(ended_at) - min(started_at)) / 3600.0,
            sum(ended_at - started_at) / 3600.0, count(*),
            sum(state = 'stopped'), min(value)
     from runs" | tail -1
}

printf '%-30s %9s %9s %10s %10s %8s %9s %8s\n' "" "runs" "stopped" \
  "wall (h)" "ref (h)" "busy (h)" "occupancy" "real (s)"
row() { # LABEL GPUS FIGURES REF_WALL
  local real wall busy runs stopped best ref=$4
  IFS=, read -r real wall busy runs stopped best <<<"$3"
  [ "$ref" = "-" ] && ref=$(echo "scale=3; $busy / $2" | bc)
  printf '%-30s %9s %9s %10.3f %10.3f %8.1f %8.1f%% %8.2f\n' "$1" "$runs" \
    "$stopped" "$wall" "$ref" "$busy" "$(echo "100 * $busy / ($2 * $wall)" | bc -l)" "$real"
}
fixed=$(run fixed "$work/fixed.yaml" 4)
row "16 x 1 h on 4 (ref: 4 h, 16 h)" 4 "$fixed" 4
family_fig=$(run family "$work/family.yaml" 64)
row "$trials trials on 64" 64 "$family_fig" -
hb_fig=$(run hyperband "$work/hyperband.yaml" 64)
row "$trials trials on 64, hyperband" 64 "$hb_fig" -

# A cluster of 4,096 GPUs: BIG random trials (default 10,000), and the
# same trials' surrogates run alone, one after another (each spawned by a
# shell, its output thrown away): what the simulator costs beside what
# its surrogates cost, in CPU seconds (user + sys, children included).
big=${BIG:-10000}
family "" | sed "s/^run_cap: .*/run_cap: $big/" >"$work/big.yaml"
sed "s/^run_cap: .*/run_cap: $big/" "$work/hyperband.yaml" >"$work/bighb.yaml"
cpu() { # COMMAND... -> CPU seconds it and its children took
  /usr/bin/time -f '%U %S' -o "$work/cpu" "$@" >/dev/null 2>&1 || { cat "$work/cpu" >&2; exit 1; }
  awk '{ printf "%.2f", $1 + $2 }' "$work/cpu"
}
sim_cpu=$(SWEEP_HOME="$work/big" cpu "$sweep" run "$work/big.yaml" --backend sim --gpus 4096 --seed 1 --quiet)
hb_cpu=$(SWEEP_HOME="$work/bighb" cpu "$sweep" run "$work/bighb.yaml" --backend sim --gpus 4096 --seed 1 --quiet)
SWEEP_HOME="$work/big" "$sweep" plan "$work/big.yaml" -n "$big" --seed 1 --json 2>/dev/null |
  /usr/bin/python3 -c '
import json, shlex, sys
for line in sys.stdin:
    print(" ".join(shlex.quote(a) for a in json.loads(line)["argv"]) + " >/dev/null")
' >"$work/surrogates.sh"
alone_cpu=$(SWEEP_SIMULATE=1 cpu sh "$work/surrogates.sh")
printf '
%s random trials on 4096 GPUs: sweep --backend sim %s CPU-s, its surrogates alone %s CPU-s: %.1fx
' \
  "$big" "$sim_cpu" "$alone_cpu" "$(echo "$sim_cpu / $alone_cpu" | bc -l)"
# Hyperband's surrogates are the same commands (the same seed draws the
# same parameters, and each prints its whole curve whether stopped or not).
printf '%s trials on 4096 GPUs, hyperband: sweep --backend sim %s CPU-s, its surrogates alone %s CPU-s: %.1fx
' \
  "$big" "$hb_cpu" "$alone_cpu" "$(echo "$hb_cpu / $alone_cpu" | bc -l)"

IFS=, read -r _ _ busy_f _ _ best_f <<<"$family_fig"
IFS=, read -r _ _ busy_h _ _ best_h <<<"$hb_fig"
printf '\nbest loss: %.5f unstopped, %.5f with hyperband; GPU-hours saved by stopping: %.1f (%.0f%%)\n' \
  "$best_f" "$best_h" "$(echo "$busy_f - $busy_h" | bc)" \
  "$(echo "100 * ($busy_f - $busy_h) / $busy_f" | bc -l)"
echo "(ref for the 2,000: busy / 64, the makespan of a perfect packing; sweep: $sweep)"
