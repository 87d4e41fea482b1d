#!/usr/bin/env bash
# test_view.sh - the terminal view, as a person sees it: a sweep runs in
# a tmux pane of 80 x 24 and the pane is captured while it runs and once
# it has ended. Every capture must show the live block at the bottom
# (its summary last, nothing below it), no line as wide as the
# pane (none wraps), the summary once (no stale copy of the block), and
# every notice and ended run above the block. The whole history, once
# the sweep ended, holds the summary once: each redraw erased the last.
# The sweep has early stops (hyperband), a run that fails and is retried
# and one that fails for good, so its notices are long: each is fitted
# to the pane (docs/cli.md), and `sweep show` still has the whole text.
#
#   bash tests/cli/test_view.sh SWEEP_BIN [CAPTURE_FILE]
set -euo pipefail
sweep=$1
capture=${2:-/dev/null}
work=$(mktemp -d)
session="sweep-view-$$"
trap 'tmux -L "$session" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/trial.sh" <<'TRIAL'
#!/bin/sh
for a in "$@"; do case "$a" in --x=*) x=${a#--x=};; esac; done
[ "$x" = 3 ] && echo "@metrics {not json"   # a notice, above the block
# x = 5 fails its first attempt (its retry finds the mark); x = 7 always
if [ "$x" = 5 ] && [ ! -e "$SWEEP_CHECKPOINT_DIR/mark" ]; then
  touch "$SWEEP_CHECKPOINT_DIR/mark"; exit 3
fi
[ "$x" = 7 ] && { sleep 0.5; exit 4; }
for i in 1 2 3 4 5 6; do
  awk -v x="$x" -v i="$i" 'BEGIN { printf "@metrics {\"step\": %d, \"loss\": %.4f}\n", i, x / i }'
  sleep 0.3
done
TRIAL
chmod +x "$work/trial.sh"
# a long file name: the first line says it, and is cut at the pane's edge
yaml=a-sweep-file-whose-name-alone-fills-half-of-an-eighty-column-pane.yaml
cat >"$work/$yaml" <<YAML
method: grid
parallel: 4
metric: {name: loss, goal: minimize}
early_terminate: {type: hyperband, min_iter: 2, eta: 2}
retries: 1
command: [$work/trial.sh, "\${args}"]
parameters:
  x: {values: [1, 2, 3, 4, 5, 6, 7, 8]}
  note: {value: "a parameter far too long to fit beside the others on a line of eighty columns"}
YAML
tmux -L "$session" new-session -d -x 80 -y 24 -s "$session" \
  "cd '$work' && SWEEP_HOME='$work/home' SWEEP_GIT=off '$sweep' run $yaml; echo SWEEP-EXIT \$?; sleep 60"
tmux -L "$session" set-option -t "$session" history-limit 5000 >/dev/null

fail() { echo "test_view: $*" >&2; echo "--- the pane:" >&2; cat "$work/pane" >&2; exit 1; }
# Whether every line of file $1 takes fewer than 80 columns (characters:
# a cut line ends in a 3-byte "…").
too_wide() {
  local l
  while IFS= read -r l; do [ "${#l}" -lt 80 ] || return 1; done < "$1"
}
export LC_ALL=C.UTF-8

# One capture: the checks that hold at every instant of a running sweep.
check_live() {
  local last summary first_block
  tmux -L "$session" capture-pane -p -t "$session" >"$work/pane"
  ! grep -q SWEEP-EXIT "$work/pane" || return 2   # the sweep has ended
  too_wide "$work/pane" || fail "a line fills all 80 columns (it wraps)"
  summary=$(grep -c ' finished, .* running' "$work/pane" || true)
  [ "$summary" -le 1 ] || fail "the summary is on the screen $summary times (a stale copy)"
  [ "$summary" -eq 1 ] || return 1   # not drawn yet, or the sweep ended
  last=$(grep -n ' finished, .* running' "$work/pane" | cut -d: -f1)
  # below the summary: only its own continuation lines (one space in)
  awk -v l="$last" 'NR > l && NF && !/^ [^ ]/ { bad = 1 } END { exit bad }' "$work/pane" || fail "something is printed below the block"
  first_block=$(grep -n '^  [0-9a-f]\{8\}-[0-9]' "$work/pane" | head -1 | cut -d: -f1)
  [ -n "$first_block" ] || first_block=$last
  awk -v f="$first_block" 'NR >= f && (/^sweep: / || /^run /) { bad = 1 } END { exit bad }' "$work/pane" \
    || fail "a notice or an ended run is inside the block"
  grep -q '^  [0-9a-f]\{8\}-[0-9].*step [0-9].*loss=' "$work/pane" || return 1
  return 0
}

live=0
for _ in $(seq 1 300); do
  sleep 0.1
  rc=0
  check_live || rc=$?
  [ "$rc" -eq 2 ] && break
  [ "$rc" -eq 0 ] && { live=$((live + 1)); cp "$work/pane" "$work/live"; }
done
[ "$live" -ge 3 ] || fail "the block with a trial's step and loss was seen in $live captures, not 3"
tmux -L "$session" capture-pane -p -t "$session" | grep -q 'SWEEP-EXIT 0' || fail "the sweep did not end with exit 0"
tmux -L "$session" capture-pane -p -S - -t "$session" >"$work/pane"
too_wide "$work/pane" || fail "a line of the history fills all 80 columns (it wraps)"
tmux -L "$session" capture-pane -p -S - -t "$session" >"$work/history"
cp "$work/history" "$work/pane"
n=$(grep -c ' finished, .* running' "$work/history" || true)
[ "$n" -eq 1 ] || fail "the history holds the summary $n times, not once: a redraw left a copy"
grep -q '^[0-9] finished, 0 running, 0 pending, [1-9] stopped early, 1 failed' "$work/history" || fail "no final summary"
grep -q '^sweep: run .*-3: ignored a @metrics line' "$work/history" || fail "the notice is missing"
[ "$(grep -c '^run .*-[0-9]* \(finished\|stopped\|failed\)' "$work/history")" -eq 8 ] || fail "not every ended run is printed"
grep -q '^run .*-7 failed' "$work/history" || fail "the failure is not printed"
grep -q '^run .*-5 attempt 1 ended (exit 3), it runs again$' "$work/history" || fail "the retry is not printed"
grep -q '…$' "$work/history" || fail "no line was cut to the pane's width"
stops=$(grep -c '^run [0-9a-f]*-[0-9]* stops' "$work/history" || true)
[ "$stops" -ge 1 ] || fail "no early stop was printed"
# the reason is printed once: at the stop, not again when the run ends
! grep -q '^run .* stopped (.*iteration\|^run .* stopped (.*it [0-9]' "$work/history" || fail "a stop's reason is printed twice"
! grep -q '[0-9]\.[0-9]\{9\}' "$work/history" || fail "a value is printed with more than 6 digits"
# the whole text of a stop stays in the store
id=$(grep -o '^run [0-9a-f]*-[0-9]* stops' "$work/history" | head -1 | cut -d' ' -f2)
SWEEP_HOME="$work/home" "$sweep" show "$id" >"$work/show"
grep -q '^reason .*stopped early by the stopping rule: iteration [0-9]*, band [0-9]*: value [0-9.e+-]*, threshold [0-9.e+-]*: stop$' "$work/show" \
  || { cp "$work/show" "$work/pane"; fail "sweep show lacks the stop's whole reason"; }
{ echo "--- a live capture (80 x 24):"; cat "$work/live"; echo "--- the history at the end:"; cat "$work/history"; } >"$capture"
echo "test_view: ok ($live live captures checked)"
