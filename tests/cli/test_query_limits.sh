#!/usr/bin/env bash
# test_query_limits.sh - `sweep query --timeout 1` of statements that
# would build a value of gigabytes, or loop inside one call of a
# built-in, through the real binary: each ends with one clear line and
# exit status 1, at little cost, and the next query answers as before.
#
# The machine may be loaded (CI runs tests side by side), so the cost is
# the CPU time the command used (bash's `time`, user + system), which
# load does not inflate: before the guard, printf('%.*c', 2e9, 'x') took
# 7 s of CPU and instr of two large values hours; the wall clock is only
# bounded loosely (30 s) so a stalled machine cannot fail the test.
#
#   bash tests/cli/test_query_limits.sh SWEEP_BIN
set -euo pipefail
sweep=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SWEEP_HOME=$work/home SWEEP_GIT=off
cat >"$work/sweep.yaml" <<YAML
method: grid
command: [/bin/true]
parameters:
  x: {values: [1, 2]}
YAML
"$sweep" run --quiet "$work/sweep.yaml" >/dev/null

fail() { echo "test_query_limits: $*" >&2; exit 1; }

# expect SQL MESSAGE: exit 1, one line on stderr that matches MESSAGE (an
# extended regular expression), at most 2 s of CPU.
expect() {
  local sql=$1 msg=$2 rc=0 cpu
  TIMEFORMAT='%U %S'
  { time timeout 30 "$sweep" query --timeout 1 "$sql" \
      >"$work/out" 2>"$work/err" || rc=$?; } 2>"$work/time"
  [ "$rc" = 1 ] || fail "$sql: exit $rc, want 1 ($(cat "$work/err"))"
  grep -qE -- "$msg" "$work/err" || fail "$sql: stderr '$(cat "$work/err")', want '$msg'"
  [ "$(wc -l <"$work/err")" = 1 ] || fail "$sql: more than one line: $(cat "$work/err")"
  cpu=$(awk '{ print $1 + $2 }' "$work/time")
  awk -v c="$cpu" 'BEGIN { exit !(c < 2.0) }' || fail "$sql: took $cpu s of CPU"
}

big='a value would take more than 64 MiB of memory'
late='it ran past 1 s \(--timeout\)'
long='would take too long'
# where building the value itself takes a while, a loaded machine may
# reach the deadline first: either way the query stops, with its reason
either="$big|$late"
expect "select printf('%.*c', 2000000000, 'x')" "$big"
expect "select format('%.*c', 2000000000, 'x')" "$big"
expect "select length(printf('%.*c%.*c', 40000000, 'a', 40000000, 'b'))" "$big"
expect "select printf('%*d', 2000000000, 1)" "$big"
expect "select zeroblob(2000000000)" "function zeroblob\(\) is not allowed"
expect "select length(replace(printf('%.*c', 40000000, 'x'), 'x', 'xx'))" "$either"
expect "with recursive r(n) as (select 1 union all select n + 1 from r)
        select length(group_concat(printf('%.*c', 1000, 'x'))) from r" "$either"
expect "with recursive r(s) as (select 'x' union all select s || s from r)
        select length(s) from r" "$either"
# each step copies 32 MiB: few steps of SQLite's machine, so only an
# interrupt at the deadline (not a check every N steps) stops it on time
expect "with recursive r(s, n) as (select printf('%.*c', 32000000, 'x'), 0
        union all select s, n + 1 from r) select count(*) from r" "$late"
expect "select instr(printf('%.*c', 4000000, 'a'),
        printf('%.*c', 2000000, 'a') || 'b')" "$long"
expect "select length(ltrim(printf('%.*c', 100000, 'a'),
        printf('%.*c', 100000, 'b') || 'a'))" "$long"
expect "select printf('%.*c', 2000000, 'a') like
        '%' || printf('%.*c', 1000, 'a') || 'b'" "$long"
expect "select 1$(printf '%0.s+1' {1..1001})" "Expression tree is too large"

# ordinary calls of the guarded functions give SQLite's own answers
out=$("$sweep" query --csv "select printf('%d|%5.2f|%-3s|%.3c|%*d', 42, 3.14159,
  'z', 'y', 3, 7), instr('hello', 'll'), instr(x'0102', x'02'),
  replace('aXbXc', 'X', '--'), trim('xxhixx', 'x'), ltrim('  x'),
  'abc' like 'A%', 'a_c' like 'a\\_c' escape '\\', 'abc' glob 'a*',
  count(*) from runs")
want=$(printf '%s\n' "42| 3.14|z  |yyy|  7,3,2,a--b--c,hi,x,1,1,1,2")
[ "$(echo "$out" | tail -n 1)" = "$want" ] || fail "answers: got '$out', want '$want'"
