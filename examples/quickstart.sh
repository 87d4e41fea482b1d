#!/usr/bin/env bash
# Installs what is needed, builds sweep, and shows the first trials of the
# example sweep: its search space, then the command line of each trial.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
cmake --preset release >/dev/null
cmake --build --preset release
./build/release/orchestrator/sweep validate examples/sweeps/mlp-grid.yaml
./build/release/orchestrator/sweep plan examples/sweeps/mlp-grid.yaml -n 8
