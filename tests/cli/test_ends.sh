#!/usr/bin/env bash
# test_ends.sh - how a sweep ends, as a new user meets it:
#  - a sweep whose runs all ran and failed exits 1 with one clear line on
#    stderr, under --quiet too, and is left `failed`;
#  - the README's simulated line (`--backend sim --gpus 64` of
#    examples/sweeps/toy-grid.yaml, a trainer that checkpoints) runs all
#    24 trials, and its summary's best is a finished run;
#  - a run that logged the best value and then failed is never the best:
#    the summary and `sweep best` name a finished run;
#  - a busy --listen port is refused with "address already in use".
#
#   bash tests/cli/test_ends.sh SWEEP_BIN SOURCE_DIR
set -euo pipefail
sweep=$1
src=$2
work=$(mktemp -d)
holder=
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "test_ends: $*" >&2; exit 1; }
export SWEEP_GIT=off

echo "== all runs fail"
printf '#!/bin/sh\necho "no such data" >&2\nexit 3\n' >"$work/bad.sh"
chmod +x "$work/bad.sh"
printf 'method: grid\ncommand: [%s]\nparameters:\n  x: {values: [1, 2]}\n' "$work/bad.sh" >"$work/bad.yaml"
rc=0
SWEEP_HOME=$work/h1 "$sweep" run "$work/bad.yaml" --quiet >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "a sweep whose runs all failed exited $rc, not 1"
grep -q '^sweep run: sweep [0-9a-f]* failed: all 2 of its runs failed' "$work/err" \
  || fail "no clear line under --quiet: $(cat "$work/err")"
state=$(SWEEP_HOME=$work/h1 "$sweep" query --csv "select state from sweeps" | tail -1)
[ "$state" = failed ] || fail "its state is $state, not failed"

echo "== the README's simulated line"
(cd "$src" && SWEEP_HOME=$work/h2 "$sweep" run examples/sweeps/toy-grid.yaml --backend sim --gpus 64) \
  >"$work/out" 2>"$work/err" || fail "the simulated sweep failed: $(tail -3 "$work/err")"
grep -q '^24 finished, 0 running, 0 pending, 0 failed, best loss=' "$work/out" \
  || fail "not every simulated run finished: $(tail -2 "$work/out")"
n=$(SWEEP_HOME=$work/h2 "$sweep" query --csv "select count(*) from runs where state = 'finished'" | tail -1)
[ "$n" -eq 24 ] || fail "$n runs finished, not 24"

echo "== a failed run is never the best"
cat >"$work/mixed.sh" <<'TRIAL'
#!/bin/sh
for a in "$@"; do case "$a" in --x=*) x=${a#--x=};; esac; done
echo "@metrics {\"step\": 1, \"loss\": $x}"
[ "$x" = 0.1 ] && exit 5   # the best value logged, then a failure
exit 0
TRIAL
chmod +x "$work/mixed.sh"
cat >"$work/mixed.yaml" <<YAML
method: grid
metric: {name: loss, goal: minimize}
command: [$work/mixed.sh, "\${args}"]
parameters:
  x: {values: [0.5, 0.1, 0.3]}
YAML
SWEEP_HOME=$work/h3 "$sweep" run "$work/mixed.yaml" >"$work/out" 2>"$work/err" || fail "the mixed sweep exited non-zero"
line=$(grep ' finished, .* running' "$work/out" | tail -1)
[[ $line =~ best\ loss=0\.3\ \(([0-9a-f]+-3)\) ]] || fail "the summary's best is not the finished run x=0.3: $line"
best=$(SWEEP_HOME=$work/h3 "$sweep" best --json)
[[ $best == *"\"run\": \"${BASH_REMATCH[1]}\""* ]] || fail "sweep best disagrees: $best"

echo "== a busy port"
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$work/port" &
holder=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
rc=0
SWEEP_HOME=$work/h4 "$sweep" run "$work/mixed.yaml" --listen "127.0.0.1:$port" >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "a busy port: exit $rc, not 1"
grep -q "cannot listen on 127.0.0.1:$port: address already in use" "$work/err" \
  || fail "a busy port is not named: $(cat "$work/err")"
echo "test_ends: ok"
