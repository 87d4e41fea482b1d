#!/bin/bash
# bench_reads.sh [SWEEP [RUNS [REPS]]] - what sweep's reads cost beside
# the sqlite3 shell running the same SQL on the same store.
#
# Makes a store of RUNS runs (default 10,000) in one sweep with 100 metric
# rows each (1,000,000 rows): a real `sweep run` of one trial gives the
# schema and the sweep's row, `sweep plan --json` gives real parameters
# (random floats written as sweep writes them), and the sqlite3 shell
# copies them into RUNS runs and their metrics. Then, for `best --top 10`,
# `ls SWEEP`, `show RUN` and `query "select count(*) from metrics"`, and
# for start-up (`sweep --help` beside /bin/true), prints the median CPU
# time (user + sys, from wait4, over REPS calls, default 11) of sweep
# beside its reference, and the ratio. Needs sqlite3 and /usr/bin/python3.
set -euo pipefail

SW=${1:-build/release/orchestrator/sweep}
RUNS=${2:-10000}
REPS=${3:-11}

command -v sqlite3 >/dev/null || {
    echo "bench_reads: needs the sqlite3 shell (apt-get install sqlite3)" >&2
    exit 2
}
SW=$(cd "$(dirname "$SW")" && pwd)/$(basename "$SW")
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
export SWEEP_HOME=$dir/home SWEEP_GIT=off
db=$SWEEP_HOME/sweep.db

# ---- the store ----------------------------------------------------------
cd "$dir"
cat >one.yaml <<'EOF'
method: grid
metric: {name: loss, goal: minimize}
command: [/bin/true]
parameters:
  x: {value: 1}
EOF
cat >plan.yaml <<'EOF'
method: random
metric: {name: loss, goal: minimize}
command: [/bin/true]
parameters:
  lr: {distribution: log_uniform_values, min: 0.00001, max: 0.1}
  dropout: {distribution: uniform, min: 0.0, max: 0.5}
  momentum: {distribution: uniform, min: 0.8, max: 0.99}
  batch_size: {values: [16, 32, 64, 128]}
  optimizer: {values: [adam, sgd]}
EOF
"$SW" run one.yaml --gpus none --quiet >/dev/null 2>&1
# params and argv of each planned trial, split by the ASCII separators
"$SW" plan plan.yaml -n "$RUNS" --seed 1 --json 2>/dev/null |
    sed -E 's/^\{"params": (.*), "argv": (.*)\}$/\1\x1f\2/' |
    tr '\n' '\036' >plan.txt
sqlite3 "$db" >/dev/null <<EOF
CREATE TEMP TABLE plan (params TEXT, argv TEXT);
.mode ascii
.import plan.txt plan
BEGIN;
DELETE FROM attempts; DELETE FROM metrics; DELETE FROM runs;
INSERT INTO runs (id, sweep_id, idx, cell, params, argv, state, reason,
    exit_code, signal, attempts, created_at, started_at, ended_at, job,
    stdout_offset, value, lost)
  SELECT s.id || '-' || p.rowid, s.id, p.rowid - 1,
         printf('%016x', p.rowid * 2654435761), p.params, p.argv,
         CASE WHEN p.rowid % 20 = 0 THEN 'failed'
              WHEN p.rowid % 20 = 1 THEN 'stopped' ELSE 'finished' END,
         CASE WHEN p.rowid % 20 = 0 THEN 'exit 1' END,
         CASE WHEN p.rowid % 20 = 0 THEN 1 WHEN p.rowid % 20 = 1 THEN NULL
              ELSE 0 END,
         0, 1, s.created_at + p.rowid, s.created_at + p.rowid + 0.5,
         s.created_at + p.rowid + 0.5 + (p.rowid % 97) * 1.25,
         '1 ' || p.rowid, 1000,
         CASE WHEN p.rowid % 20 = 0 THEN NULL
              ELSE abs(random() % 1000000007) / 1e9 END, 0
  FROM plan p, sweeps s;
WITH RECURSIVE st(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM st WHERE n < 50)
INSERT INTO metrics (run_id, step, name, value, time)
  SELECT r.id, st.n, m.name, abs(random() % 1000000007) / 1e9,
         r.started_at + st.n
  FROM runs r, st, (SELECT 'loss' AS name UNION ALL SELECT 'acc') m
  ORDER BY r.id, st.n, m.name;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
EOF
sweep=$(sqlite3 "$db" "SELECT id FROM sweeps")
run=$sweep-$((RUNS / 2))
echo "store: $(sqlite3 "$db" "SELECT count(*) FROM runs") runs," \
    "$(sqlite3 "$db" "SELECT count(*) FROM metrics") metric rows" \
    "($(du -h "$db" | cut -f1)); sweep $SW"

# ---- the measures ---------------------------------------------------------
# Median CPU milliseconds (user + sys, from wait4: this child alone, to
# the microsecond) of one call of "$@" over REPS calls, stdout to /dev/null.
cpu_ms() {
    /usr/bin/python3 - "$REPS" "$@" <<'PY'
import os, statistics, sys
reps, argv = int(sys.argv[1]), sys.argv[2:]
out = os.open(os.devnull, os.O_WRONLY)
ms = []
for _ in range(reps):
    pid = os.posix_spawnp(argv[0], argv, os.environ,
                          file_actions=[(os.POSIX_SPAWN_DUP2, out, 1)])
    _, status, ru = os.wait4(pid, 0)
    if status:
        sys.exit("bench_reads: %s failed" % " ".join(argv))
    ms.append((ru.ru_utime + ru.ru_stime) * 1000)
print("%.3f" % statistics.median(ms))
PY
}

COLS="id, state, value, attempts, exit_code, ended_at - started_at, params"
LAST="SELECT name, value FROM (SELECT name, value, rowid AS at,
  min(rowid) OVER w AS first, max(rowid) OVER w AS last FROM metrics
  WHERE run_id = '$run' WINDOW w AS (PARTITION BY name))
  WHERE at = last ORDER BY first"

row() { # NAME SWEEP_CMD... -- REFERENCE_CMD...
    local name=$1 a=() b=()
    shift
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    local x y
    x=$(cpu_ms "${a[@]}")
    y=$(cpu_ms "${b[@]}")
    awk -v n="$name" -v x="$x" -v y="$y" 'BEGIN {
        printf "%-34s %9.2f %9.2f %7.1fx\n", n, x, y, (y > 0 ? x / y : 0) }'
}

printf '%-34s %9s %9s %8s   (median CPU ms, user+sys, of %d calls)\n' \
    "command" "sweep" "reference" "ratio" "$REPS"
row "best --top 10 (sqlite3)" "$SW" best "$sweep" --top 10 -- \
    sqlite3 "$db" "SELECT * FROM sweeps WHERE id = '$sweep';
    SELECT $COLS FROM runs WHERE sweep_id = '$sweep'
    AND state IN ('finished', 'stopped') AND value IS NOT NULL
    ORDER BY value, idx LIMIT 10"
row "ls SWEEP (sqlite3)" "$SW" ls "$sweep" -- \
    sqlite3 "$db" "SELECT * FROM sweeps WHERE id = '$sweep';
    SELECT $COLS FROM runs WHERE sweep_id = '$sweep' ORDER BY idx"
row "ls SWEEP --json (sqlite3 -json)" "$SW" ls "$sweep" --json -- \
    sqlite3 -json "$db" "SELECT $COLS FROM runs WHERE sweep_id = '$sweep'
    ORDER BY idx"
row "show RUN (sqlite3)" "$SW" show "$run" -- \
    sqlite3 "$db" "SELECT * FROM runs WHERE id = '$run'; $LAST"
row "query count(*) metrics (sqlite3)" "$SW" query \
    "select count(*) from metrics" -- \
    sqlite3 "$db" "select count(*) from metrics"
row "--help (/bin/true)" "$SW" --help -- /bin/true
row "--help (sqlite3 -version)" "$SW" --help -- sqlite3 -version
