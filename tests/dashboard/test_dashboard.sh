#!/usr/bin/env bash
# test_dashboard.sh - the dashboard in a real browser: Debian's chromium,
# driven by playwright-core (npm, tests/dashboard/package-lock.json),
# against a real `sweep run` and `sweep ui` on 127.0.0.1.
#
#   bash tests/dashboard/test_dashboard.sh SWEEP_BIN ARTEFACT_DIR
#
# Screenshots of each page go to ARTEFACT_DIR, with the figures the
# browser measured (figures.txt). .ci/install-deps --browser installs
# chromium, node and the npm lockfile's packages.
set -euo pipefail
sweep=$1
art=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$art"
rm -f "$art/figures.txt"
for need in /usr/bin/chromium node; do
  command -v "$need" >/dev/null || { echo "test_dashboard: $need is missing: bash .ci/install-deps --browser" >&2; exit 1; }
done
[ -d "$here/node_modules/playwright-core" ] || { echo "test_dashboard: playwright-core is missing: bash .ci/install-deps --browser" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export SWEEP_HOME=$work/home SWEEP_GIT=off

cat >"$work/trial.sh" <<'TRIAL'
#!/bin/sh
# loss falls as 1/step toward (x-2)^2; x=9 fails at step 2. With
# $DASH_GATE set, it first waits (at most 60 s) for that file: the page
# has loaded, so what it must see happen has not happened yet.
steps=10 nap=0.4
if [ -n "${DASH_GATE:-}" ]; then
  n=0; while [ ! -e "$DASH_GATE" ] && [ "$n" -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
fi
for a in "$@"; do case "$a" in --x=*) x=${a#--x=};; --steps=*) steps=${a#--steps=};; --sleep=*) nap=${a#--sleep=};; esac; done
i=0
while [ "$i" -lt "$steps" ]; do
  i=$((i + 1))
  if [ "$x" = 9 ] && [ "$i" = 2 ]; then echo "trial: x=9 is out of range, giving up at step $i" >&2; exit 3; fi
  awk -v x="$x" -v i="$i" 'BEGIN { printf "@metrics {\"step\": %d, \"loss\": %.5f, \"acc\": %.4f}\n", i, (x-2)^2 + 1/i, 1/(1+(x-2)^2) }'
  sleep "$nap"
done
TRIAL
chmod +x "$work/trial.sh"
cat >"$work/live.yaml" <<YAML
name: live
method: grid
parallel: 4
metric: {name: loss, goal: minimize}
early_terminate: {type: hyperband, min_iter: 2, eta: 2}
resources: {gpus: 0.5}
command: [$work/trial.sh, "\${args}"]
parameters:
  x: {values: [2, 1, 3, 0, 4, 9, 5, 6, 7, 8, 2.5, 1.5, 10, 11, 12, 13, 14, 15, 0.5, 3.5]}
YAML

# dashboard URL from a command's output file, waiting for it
url_of() {
  local i
  for i in $(seq 1 100); do
    if grep -q '^dashboard: ' "$1" 2>/dev/null; then grep '^dashboard: ' "$1" | head -1 | cut -d' ' -f2; return 0; fi
    sleep 0.1
  done
  echo "test_dashboard: no dashboard line in $1:" >&2; cat "$1" >&2; return 1
}

echo "== a live sweep"
# two declared GPUs, two trials on each: the lanes are the devices
# the trials wait for the page (DASH_GATE), however slowly chromium starts
(cd "$work" && DASH_GATE=$work/go exec "$sweep" run live.yaml --gpus 2 --listen 127.0.0.1:0 >"$work/live.out" 2>&1) &
pids+=($!)
live_pid=$!
url=$(url_of "$work/live.out")
DASH_GATE=$work/go node "$here/dashboard.mjs" live "$url" "$art"
wait "$live_pid" || { echo "test_dashboard: sweep run failed" >&2; cat "$work/live.out" >&2; exit 1; }
sweep_id=$(echo "$url" | sed 's|.*#/sweep/||')
/usr/bin/python3 - "$SWEEP_HOME/sweep.db" "$sweep_id" "$art/live-states.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
store = dict(db.execute("select id, state from runs where sweep_id = ?", (sys.argv[2],)))
page = json.load(open(sys.argv[3]))
if page != store:
    sys.exit(f"test_dashboard: the live page ended with {page}, the store holds {store}")
PY

echo "== 64 trials reporting at once"
cat >"$work/many.yaml" <<YAML
name: many
method: random
run_cap: 64
parallel: 64
metric: {name: loss, goal: minimize}
command: [$work/trial.sh, "\${args}"]
parameters:
  x: {min: 0.0, max: 4.0}
  steps: {value: 60}
  sleep: {value: 0.1}
YAML
(cd "$work" && exec "$sweep" run many.yaml --listen 127.0.0.1:0 >"$work/many.out" 2>&1) &
pids+=($!)
many_pid=$!
url=$(url_of "$work/many.out")
node "$here/dashboard.mjs" busy "$url" "$art"
wait "$many_pid" || { echo "test_dashboard: the 64-trial sweep failed" >&2; cat "$work/many.out" >&2; exit 1; }
many_id=$(echo "$url" | sed 's|.*#/sweep/||')

echo "== an interrupted sweep, resumed: its dashboard line at once"
# One Ctrl-C while two trials run: the sweep waits for them and ends
# interrupted. `sweep resume` must say its URL before it launches a
# trial: each trial it starts looks for the line in resume.out (sweep
# flushes each line it says) and writes to `early` if it is not there.
cat >"$work/slow.sh" <<SLOW
#!/bin/sh
if [ -e "$work/resume.out" ] && ! grep -q '^dashboard: ' "$work/resume.out"; then
  echo "\$SWEEP_RUN_ID started before the dashboard line" >>"$work/early"
fi
exec "$work/trial.sh" "\$@"
SLOW
chmod +x "$work/slow.sh"
cat >"$work/again.yaml" <<YAML
name: again
method: grid
parallel: 2
metric: {name: loss, goal: minimize}
command: [$work/slow.sh, "\${args}"]
parameters:
  x: {values: [2, 1, 3, 0, 4, 5]}
  steps: {value: 16}
  sleep: {value: 0.5}
YAML
(cd "$work" && exec "$sweep" run again.yaml --listen 127.0.0.1:0 >"$work/again.out" 2>&1) &
pids+=($!)
again_pid=$!
again_id=$(url_of "$work/again.out" | sed 's|.*#/sweep/||')
running() {
  /usr/bin/python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs where sweep_id = ? and state = ?", (sys.argv[2], "running")).fetchone()[0])' \
    "$SWEEP_HOME/sweep.db" "$again_id" 2>/dev/null || echo 0
}
for i in $(seq 1 300); do [ "$(running)" = 2 ] && break; sleep 0.1; done
[ "$(running)" = 2 ] || { echo "test_dashboard: sweep $again_id never ran two trials" >&2; cat "$work/again.out" >&2; exit 1; }
kill -INT "$again_pid"
rc=0; wait "$again_pid" || rc=$?
[ "$rc" = 130 ] || { echo "test_dashboard: the interrupted sweep exited $rc, not 130" >&2; cat "$work/again.out" >&2; exit 1; }
grep -q "sweep resume $again_id" "$work/again.out" || { echo "test_dashboard: no resume hint" >&2; cat "$work/again.out" >&2; exit 1; }
(cd "$work" && DASH_GATE=$work/go2 exec "$sweep" resume "$again_id" --listen 127.0.0.1:0 >"$work/resume.out" 2>&1) &
pids+=($!)
resume_pid=$!
url=$(url_of "$work/resume.out")
# its first lines: what it resumes (`sweep ID: ...`), then where to look
awk '/^dashboard: /{exit 0} !/^sweep /{exit 1}' "$work/resume.out" \
  || { echo "test_dashboard: resume said other things before its dashboard line:" >&2; cat "$work/resume.out" >&2; exit 1; }
[ "$(echo "$url" | sed 's|.*#/sweep/||')" = "$again_id" ] || { echo "test_dashboard: resume printed $url" >&2; exit 1; }
DASH_GATE=$work/go2 node "$here/dashboard.mjs" resumed "$url" "$art"
wait "$resume_pid" || { echo "test_dashboard: sweep resume failed" >&2; cat "$work/resume.out" >&2; exit 1; }
[ ! -e "$work/early" ] || { echo "test_dashboard: trials started before the URL was said:" >&2; cat "$work/early" >&2; exit 1; }

echo "== sweep ui: the ended sweep, the list, two side by side"
"$sweep" tag "$sweep_id-1" baseline "lr sweep" >/dev/null
"$sweep" note "$sweep_id-1" "kept for the paper
second line" >/dev/null
("$sweep" ui "$sweep_id" >"$work/ui.out" 2>&1) &
pids+=($!)
url=$(url_of "$work/ui.out")
node "$here/dashboard.mjs" ended "$url" "$art" "$many_id"
base=${url%%/#*}

echo "== the API refuses what it should"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect() { local want=$1; shift; local got; got=$(code "$@"); [ "$got" = "$want" ] || { echo "test_dashboard: $* answered $got, not $want" >&2; exit 1; }; }
expect 200 "$base/api/v1/sweeps"
expect 404 "$base/api/v1/sweeps/nosuch"
expect 404 "$base/api/v1/runs/$sweep_id-999"
expect 404 "$base/api/v1/nothing"
expect 404 "$base/no/such/page"
expect 400 "$base/api/v1/sweeps/$sweep_id/metrics?name=loss&runs=1%27%3Bdrop"
expect 405 -X POST "$base/api/v1/sweeps"
expect 405 -X DELETE "$base/"
expect 414 "$base/api/v1/sweeps/$sweep_id/metrics?name=$(head -c 5000 /dev/zero | tr '\0' a)"
curl -s "$base/api/v1/sweeps/$sweep_id/metrics?name=x%27%20or%201=1--" | grep -q '"series": {}' \
  || { echo "test_dashboard: a quoted name reached SQL" >&2; exit 1; }
"$sweep" query --csv "select count(*) from runs" >/dev/null  # the store is unharmed

echo "== off loopback: a view token"
("$sweep" ui --listen 0.0.0.0:0 >"$work/ui2.out" 2>&1) &
pids+=($!)
url=$(url_of "$work/ui2.out")
echo "$url" | grep -q '?token=' || { echo "test_dashboard: no token in $url" >&2; exit 1; }
port=$(echo "$url" | sed 's|http://[^:]*:\([0-9]*\)/.*|\1|')
token=$(echo "$url" | sed 's|.*token=\([^#]*\)#.*|\1|')
expect 401 "http://127.0.0.1:$port/api/v1/sweeps"
expect 401 "http://127.0.0.1:$port/api/v1/sweeps?token=wrong"
expect 200 "http://127.0.0.1:$port/api/v1/sweeps?token=$token"
curl -s -D - -o /dev/null "http://127.0.0.1:$port/?token=$token" | grep -qi '^set-cookie: sweep_view=' \
  || { echo "test_dashboard: no view cookie" >&2; exit 1; }
expect 200 -H "Cookie: sweep_view=$token" "http://127.0.0.1:$port/api/v1/sweeps"

echo "== 10,000 runs"
# The ended sweep's runs, copied (new ids, the same columns) until the
# sweep holds 10,000: what the table must render in under a second.
/usr/bin/python3 - "$SWEEP_HOME/sweep.db" "$sweep_id" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); sid = sys.argv[2]
cols = [r[1] for r in db.execute("pragma table_info(runs)") if r[1] not in ("id", "idx")]
n = db.execute("select count(*) from runs where sweep_id = ?", (sid,)).fetchone()[0]
src = db.execute("select idx from runs where sweep_id = ? order by idx", (sid,)).fetchall()
with db:
    for k in range(n, 10000):
        i = src[k % n][0]
        db.execute(f"insert into runs (id, idx, {', '.join(cols)}) select ?, ?, {', '.join(cols)} "
                   "from runs where sweep_id = ? and idx = ?", (f"{sid}-{k + 1}", k, sid, i))
PY
node "$here/dashboard.mjs" big "$url" "$art"
echo "test_dashboard: ok; screenshots and figures in $art"
