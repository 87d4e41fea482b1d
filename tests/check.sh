#!/usr/bin/env bash
# The whole test suite: installs what is needed, checks the formatting,
# gives the sweep-file fuzzer a short run (so it never stops building),
# runs the README's quickstart as a new user would (a python on PATH
# without torch), then builds and runs every test twice, in the Debug
# build and in the ASan+UBSan build, and the tests that run threads
# under ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps --browser

echo "== clang-format"
unformatted=$(git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror 2>&1 | grep -o '^[^:]*\.[ch]' | sort -u || true)
if [ -n "$unformatted" ]; then
  echo "not clang-formatted (run: clang-format -i FILE):" >&2
  echo "$unformatted" >&2
  exit 1
fi

echo "== fuzz: short runs (docs/testing.md has a real one)"
cmake -S . -B build/fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DSW_FUZZ=ON >/dev/null
cmake --build build/fuzz --target fuzz_load fuzz_metrics
# fuzz TARGET CORPUS SECONDS [ARGS...]
fuzz() {
  local target=$1 corpus=$2 secs=$3 scratch rc=0
  shift 3
  scratch=$(mktemp -d)
  "build/fuzz/tests/fuzz/$target" "$scratch" "$corpus" "$@" \
    -max_total_time="$secs" -print_final_stats=1 >"$scratch.log" 2>&1 || rc=$?
  grep -E '^stat::number_of_executed_units' "$scratch.log" || true
  if [ "$rc" -ne 0 ]; then
    tail -40 "$scratch.log" >&2
    echo "the fuzzer $target found a problem (exit $rc)" >&2
    exit 1
  fi
  rm -rf "$scratch" "$scratch.log"
}
fuzz fuzz_load tests/fuzz/corpus 20 -dict=tests/fuzz/sweep.dict
fuzz fuzz_metrics tests/fuzz/corpus_metrics 10

# The README's first command, as a new user on an ML machine runs it: a
# `python` first on PATH that is not Debian's and cannot import torch
# (pyenv, conda and venvs are the norm).
echo "== quickstart, with a python on PATH that has no torch"
decoy=$(mktemp -d)
home=$(mktemp -d)
prefix=$(mktemp -d) # where it installs sweep, instead of ~/.local
printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' >"$decoy/python"
chmod +x "$decoy/python"
PATH="$decoy:$PATH" SWEEP_HOME="$home" SWEEP_PREFIX="$prefix" \
  bash examples/quickstart.sh
finished=$(SWEEP_HOME="$home" "$prefix/bin/sweep" query --csv \
  "select count(*) from runs where state = 'finished'" | tail -1)
rm -rf "$decoy" "$home" "$prefix"
if [ "$finished" != 8 ]; then
  echo "quickstart: $finished of 8 runs finished" >&2
  exit 1
fi

for preset in debug asan; do
  echo "== $preset build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j2
done

# ThreadSanitizer on the tests that run threads (label threads; see
# docs/testing.md). gcc 12's TSan dies at start ("unexpected memory
# mapping") where vm.mmap_rnd_bits is above 28, and a container may not
# change that sysctl; any process may turn off its own address
# randomisation, though, and ctest's children inherit it.
echo "== tsan build"
cmake --preset tsan >/dev/null
cmake --build --preset tsan
norand=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  norand=(setarch "$(uname -m)" -R)
fi
# Reports go to build/tsan/tsan-report.PID (the preset's log_path), so
# one from a `sweep` whose exit status a test does not look at still
# fails the stage, and so may a test failed for time be run once more:
# TSan's slower `sweep` can miss the moments the kill-and-resume cases
# aim at (a SIGKILL before the sweep is stored), never a race.
rm -f build/tsan/tsan-report.*
rc=0
"${norand[@]}" ctest --preset tsan -L threads -j2 --repeat until-pass:2 || rc=$?
if compgen -G 'build/tsan/tsan-report.*' >/dev/null; then
  cat build/tsan/tsan-report.* >&2
  echo "ThreadSanitizer reported the above" >&2
  exit 1
fi
exit "$rc"
