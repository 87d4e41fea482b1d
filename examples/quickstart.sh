#!/usr/bin/env bash
# Installs what is needed (build tools, libraries, PyTorch and scikit-learn
# from Debian), builds sweep, and runs a real sweep: a small MLP on the
# digits data set, 8 random trials two at a time; then shows the best runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps --examples
cmake --preset release >/dev/null
cmake --build --preset release
export SWEEP_HOME="${SWEEP_HOME:-$PWD/.sweep}"
sweep=./build/release/orchestrator/sweep
$sweep validate examples/sweeps/mlp-random.yaml
$sweep run examples/sweeps/mlp-random.yaml
$sweep best --top 3
