#!/bin/sh
# gpu_packing.sh - on a machine with an NVIDIA GPU: what sweep sees through
# NVML, then the same TRIALS small PyTorch trials (gpu_trial.py) run one at
# a time and packed by `gpu_memory: auto`, their wall time, throughput and
# the GPUs' mean utilisation (from gpu_samples) side by side.
#
# usage: tests/bench/gpu_packing.sh [SWEEP_BINARY] [TRIALS]
#   (default: build/release/orchestrator/sweep, 8 trials)
#
# It only reads the GPUs: no setting of theirs (MIG mode included) is
# changed. Trials run on the GPUs CUDA_VISIBLE_DEVICES leaves to sweep.
set -eu
bin=${1:-build/release/orchestrator/sweep}
n=${2:-8}
here=$(cd "$(dirname "$0")" && pwd)
if ! python3 -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' \
    2>/dev/null; then
    echo "gpu_packing: needs python3 with a CUDA build of torch" >&2
    exit 2
fi
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
export SWEEP_HOME="$work/home" SWEEP_GIT=off
"$bin" gpus
cat >"$work/sweep.yaml" <<YAML
method: grid
command: [python3, "$here/gpu_trial.py", "\${args}"]
parameters:
  seed: {values: [$(seq -s ', ' 1 "$n")]}
resources:
  gpu_memory: auto
YAML

q() { "$bin" query "$1" --csv | tail -n 1; }

run() {
    label=$1
    shift
    t0=$(date +%s.%N)
    "$bin" run "$work/sweep.yaml" --name "$label" "$@" >"$work/$label.out" 2>&1
    t1=$(date +%s.%N)
    id=$(q "select id from sweeps where name = '$label'")
    util=$(q "select round(avg(utilization), 1) from gpu_samples
              where sweep_id = '$id' and trials > 0")
    mem=$(q "select max(memory_used) >> 20 from gpu_samples
             where sweep_id = '$id'")
    ok=$(q "select count(*) from runs where sweep_id = '$id'
            and state = 'finished'")
    awk -v l="$label" -v t0="$t0" -v t1="$t1" -v n="$n" -v u="$util" \
        -v m="$mem" -v ok="$ok" 'BEGIN {
        printf "%-16s %6d/%-3d %8.1f %11.2f %8s%% %10s MiB\n",
               l, ok, n, t1 - t0, n * 60 / (t1 - t0), u, m }'
}

printf '%-16s %10s %8s %11s %9s %14s\n' sweep finished wall_s trials/min \
    util peak_memory
run one-at-a-time --parallel 1
run packed-auto
grep -h 'gpu_memory: auto\|GPU device' "$work"/*.out || true
