#!/usr/bin/env bash
# Installs what is needed (build tools, libraries, PyTorch and scikit-learn
# from Debian), builds sweep and installs it (in $SWEEP_PREFIX, default
# ~/.local: bin/sweep, its manual page and bash completion), and runs a
# real sweep: a small MLP on the digits data set, 8 random trials two at
# a time; then shows the best runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps --examples
cmake --preset release >/dev/null
cmake --build --preset release
prefix="${SWEEP_PREFIX:-$HOME/.local}"
cmake --install build/release --prefix "$prefix" >/dev/null
echo "quickstart: installed $prefix/bin/sweep (man sweep; bash completion)"
# `man sweep` finds the page from PATH alone (man-db looks in
# PREFIX/share/man for PREFIX/bin), so PATH is all a shell needs
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "quickstart: $prefix/bin is not on your PATH; add it, e.g." \
       "echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.bashrc" ;;
esac
export PATH="$prefix/bin:$PATH"
export SWEEP_HOME="${SWEEP_HOME:-$PWD/.sweep}"
# The trainer needs the PyTorch and scikit-learn just installed, which are
# Debian's: when the `python` first on PATH (pyenv, conda, a venv) lacks
# them, the trials use Debian's interpreter instead.
if [ -z "${SWEEP_INTERPRETER:-}" ]; then
  py=$(command -v python || command -v python3 || true)
  if [ -z "$py" ] || ! "$py" -c "import torch, sklearn" 2>/dev/null; then
    export SWEEP_INTERPRETER=/usr/bin/python3
    echo "quickstart: $py has no torch/sklearn: trials use /usr/bin/python3"
  fi
fi
sweep=sweep
$sweep validate examples/sweeps/mlp-random.yaml
$sweep run examples/sweeps/mlp-random.yaml
$sweep best --top 3
