#!/usr/bin/env bash
# Regenerates the benchmark tables of docs/simulation.md: scenario 2 of
# bench_scenarios.sh on both families for SEEDS (default "1 2 3"), its
# rows rendered by scenarios_doc.py between the doc's markers. About 25
# minutes on 2 cores (most of it bayes and TPE over thousands of
# synthetic trials). The full output of each seed is kept beside the
# rows, in $OUT (default build/scenarios).
#
#   bash tests/bench/scenarios_doc.sh [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=${1:-1 2 3}
out=${OUT:-build/scenarios}
mkdir -p "$out"
rows=$out/rows.txt
: >"$rows"
for s in $seeds; do
  svg=
  [ "$s" != 1 ] || svg=$PWD/docs/report-scenario.svg
  SKIP1=1 MD=$PWD/$rows SVG=$svg bash tests/bench/bench_scenarios.sh 0 "$s" | tee "$out/seed-$s.txt"
done
/usr/bin/python3 tests/bench/scenarios_doc.py "$rows" docs/simulation.md
echo "docs/simulation.md: tables rewritten from $rows"
