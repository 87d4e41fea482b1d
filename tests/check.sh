#!/usr/bin/env bash
# The whole test suite: installs what is needed, then builds and runs every
# test twice, in the Debug build and in the ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
for preset in debug asan; do
  echo "== $preset build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j2
done
