#!/usr/bin/env bash
# The whole test suite: installs what is needed, then builds and runs every
# test twice, in the Debug build and in the ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
echo "== clang-format"
unformatted=$(git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror 2>&1 | grep -o '^[^:]*\.[ch]' | sort -u || true)
if [ -n "$unformatted" ]; then
  echo "not clang-formatted (run: clang-format -i FILE):" >&2
  echo "$unformatted" >&2
  exit 1
fi
for preset in debug asan; do
  echo "== $preset build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j2
done
