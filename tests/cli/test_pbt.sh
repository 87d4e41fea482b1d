#!/usr/bin/env bash
# test_pbt.sh - population-based training through the real binary, with
# the toy trainer: a population of 4 trained in 3 rounds (to iterations
# 3, 6, 9) on 2 declared GPUs. Members pause at each round, their device
# going to another member; at rounds 1 and 2 the worst is replaced by a
# new run that starts from the best one's checkpoint at the round's
# iteration, its parameters perturbed within the space; the lineage is
# in the store (runs.member, parent, parent_iter), in `sweep show` and
# `sweep ls`, and in the W&B export's config. A SIGKILL of `sweep` while
# members are paused, then `sweep resume`, loses nothing and trains no
# step twice.
#
#   bash tests/cli/test_pbt.sh SWEEP_BIN
set -euo pipefail
sweep=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export SWEEP_HOME=$work/home SWEEP_GIT=off
fail() {
  echo "test_pbt: $*" >&2
  "$sweep" query "select id, member, parent, parent_iter, state, reason, params from runs order by idx" >&2 || true
  "$sweep" query "select run_id, attempt, outcome, first_step, gpus from attempts order by started_at" >&2 || true
  exit 1
}
q() { "$sweep" query --csv "$1" | tail -n +2; }

sweepfile() { # NAP
  cat >"$work/p.yaml" <<YAML
program: $here/examples/trainers/toy.sh
method: pbt
parallel: 2
metric: {name: loss, goal: minimize}
pbt: {population: 4, interval: 3, max_iter: 9, quantile: 0.25,
      perturb: {factors: [0.8, 1.2], resample_probability: 0.25}}
command: [sh, "\${program}", "\${args}"]
parameters:
  x: {min: 0.0, max: 6.0}
  y: {min: -3.0, max: 1.0}
  steps: {value: 9}
  sleep: {value: $1}
YAML
}

# the metric of run $1 at step $2
at() { q "select value from metrics where run_id = '$1' and name = 'loss' and step = $2"; }

check_lineage() {
  # 4 first members, then one run per round for the worst: 6 runs
  [ "$(q "select count(*) from runs")" = 6 ] || fail "not 6 runs"
  [ "$(q "select count(*) from runs where parent is null and member = idx and idx < 4")" = 4 ] ||
    fail "the population is not runs 1-4 at places 0-3"
  [ "$(q "select group_concat(parent_iter, ' ') from (select parent_iter from runs where parent is not null order by idx)")" = "3 6" ] ||
    fail "the children are not from iterations 3 and 6"
  # each child: the best member at its round was its parent, the worst its
  # place's run before, which ended stopped, its reason naming the child
  local child parent iter place loser best worst
  while IFS=, read -r child parent iter place; do
    loser=$(q "select id from runs where member = $place and idx < (select idx from runs where id = '$child') order by idx desc limit 1")
    [ "$(q "select state from runs where id = '$loser'")" = stopped ] || fail "$loser, replaced by $child, is not stopped"
    [ "$(q "select count(*) from runs where id = '$loser' and reason = 'replaced by run $child, from run $parent''s checkpoint at iteration $iter'")" = 1 ] ||
      fail "$loser's reason does not name $child"
    # the members at that round: the runs then that reported its step
    best=$(q "select m.run_id from metrics m join runs r on r.id = m.run_id where m.name = 'loss' and m.step = $iter and r.idx < (select idx from runs where id = '$child') order by m.value, r.member limit 1")
    worst=$(q "select m.run_id from metrics m join runs r on r.id = m.run_id where m.name = 'loss' and m.step = $iter and r.idx < (select idx from runs where id = '$child') order by m.value desc, r.member desc limit 1")
    [ "$best" = "$parent" ] || fail "$child's parent $parent was not the best at $iter ($best)"
    [ "$worst" = "$loser" ] || fail "$child replaced $loser, not the worst at $iter ($worst)"
    # it started from the parent's checkpoint: its first step is the next
    # (first_step is unknown for an attempt a resumed sweep adopted)
    [ "$(q "select min(step) from metrics where run_id = '$child'")" = $((iter + 1)) ] ||
      fail "$child did not start at step $((iter + 1))"
    [ "$(q "select ifnull(first_step, $((iter + 1))) from attempts where run_id = '$child' and attempt = 1")" = $((iter + 1)) ] ||
      fail "$child's first attempt did not begin at step $((iter + 1))"
    [ "$(q "select count(*) from metrics where run_id = '$child' and step <= $iter")" = 0 ] ||
      fail "$child trained again what its parent had"
    [ "$(q "select params != (select params from runs where id = '$parent') from runs where id = '$child'")" = 1 ] ||
      fail "$child's params are its parent's, not perturbed"
  done < <(q "select id, parent, parent_iter, member from runs where parent is not null order by idx")
  [ -n "$(at "$(q "select parent from runs where parent_iter = 3")" 3)" ] || fail "no value of the parent at 3"
}

# the lineage without the sweep's id: the same seed, the same decisions
signature() {
  q "select substr(id, 10), member, ifnull(substr(parent, 10), '-'), ifnull(parent_iter, '-'),
     params ->> '\$.x', params ->> '\$.y', state from runs order by idx"
}

check_runs() {
  check_lineage
  [ -z "${lineage:-}" ] || [ "$(signature)" = "$lineage" ] ||
    fail "not the lineage an unbroken sweep has: $(signature) against $lineage"
  # within the space; the constants as they were
  [ "$(q "select count(*) from runs where params ->> '$.x' between 0 and 6 and params ->> '$.y' between -3 and 1 and params ->> '$.steps' = 9")" = 6 ] ||
    fail "params outside the space"
  # the population at the end: 4 places, each finished at step 9
  [ "$(q "select count(*) from runs where state = 'finished'")" = 4 ] || fail "not 4 finished"
  [ "$(q "select count(distinct member) from runs where state = 'finished'")" = 4 ] || fail "the finished runs are not one per place"
  [ "$(q "select count(*) from runs r where state = 'finished' and (select max(step) from metrics m where m.run_id = r.id) != 9")" = 0 ] ||
    fail "a finished run did not train to 9"
  [ "$(q "select count(*) from runs where state in ('paused', 'running', 'pending')")" = 0 ] || fail "runs left unended"
  # every pause at a round; every later attempt from the step after it
  [ "$(q "select count(*) from attempts a where outcome = 'paused' and (select max(step) from metrics m
          where m.run_id = a.run_id and m.time < ifnull((select started_at from attempts n where n.run_id =
          a.run_id and n.attempt = a.attempt + 1), 1e18)) not in (3, 6)")" = 0 ] ||
    fail "a member paused between rounds"
  local bad
  # (by the steps stored since it started: first_step is unknown for an
  # attempt a resumed sweep adopted)
  bad=$(q "select a.run_id || ':' || a.attempt from attempts a join attempts p on p.run_id = a.run_id and
           p.attempt = a.attempt - 1 where p.outcome = 'paused' and ((select min(step) from metrics m where
           m.run_id = a.run_id and m.time >= a.started_at) is not (select max(step) from metrics m where
           m.run_id = p.run_id and m.time < a.started_at) + 1 or ifnull(a.first_step, 0) not in (0, (select
           max(step) from metrics m where m.run_id = p.run_id and m.time < a.started_at) + 1))")
  [ -z "$bad" ] || fail "resumed attempts did not begin after their round: $bad"
  [ "$(q "select count(*) from (select run_id, step from metrics group by run_id, step having count(*) > 1)")" = 0 ] ||
    fail "a step stored twice"
  # 4 places x 9 iterations: nothing trained twice
  [ "$(q "select count(*) from metrics")" = 36 ] || fail "trained $(q "select count(*) from metrics") steps, not 36"
}

echo "== a population of 4 on 2 declared GPUs, rounds at 3, 6, 9"
sweepfile 0.05
(cd "$work" && "$sweep" run p.yaml --gpus 2 --seed 5 >"$work/out1" 2>&1) || { cat "$work/out1"; fail "sweep run failed"; }
id=$(q "select id from sweeps")
check_runs
lineage=$(signature)
[ "$(q "select count(*) from attempts where outcome = 'paused'")" = 8 ] || fail "not 8 pauses (4 at round 1, 4 at round 2)"
# while a member was paused, its device held another member's attempt
[ "$(q "select count(*) from attempts p left join attempts n on n.run_id =
        p.run_id and n.attempt = p.attempt + 1 join attempts o on o.run_id !=
        p.run_id and o.started_at >= p.ended_at and (n.started_at is null or
        o.started_at < n.started_at) and json_extract(o.gpus, '\$.devices[0]')
        = json_extract(p.gpus, '\$.devices[0]') where p.outcome = 'paused'")" -ge 1 ] ||
  fail "no paused member's device went to another"
grep -q "pauses: round 1 (iteration 3)" "$work/out1" || fail "no notice of a pause"
grep -q "is replaced by run $id-5: run .*'s checkpoint at iteration 3" "$work/out1" || fail "no notice of the exploit"

# the report: the losers replaced, not saved by stopping
"$sweep" report "$id" --json | grep -q '"replaced": 2,' || fail "sweep report does not count 2 replaced"
"$sweep" report "$id" --json | grep -q '"trial_seconds_saved_by_stopping": 0,' || fail "replaced runs counted as saved"
"$sweep" report "$id" | grep -q "runs replaced by exploits *2" || fail "the report does not say 2 replaced"

echo "== the lineage in sweep show, sweep ls and the W&B export"
child=$id-5
parent=$(q "select parent from runs where id = '$child'")
"$sweep" show "$child" >"$work/show" || fail "sweep show failed"
grep -q "^lineage .*member $(q "select member from runs where id = '$child'"), from run $parent's checkpoint at iteration 3" "$work/show" ||
  { cat "$work/show"; fail "sweep show does not give the lineage"; }
"$sweep" show --json "$child" | grep -q "\"lineage\": {\"member\": [0-3], \"parent\": \"$parent\", \"parent_iter\": 3}" ||
  fail "sweep show --json does not give the lineage"
"$sweep" ls "$id" >"$work/ls"
grep -q "^$child .* $parent@3$" "$work/ls" || { cat "$work/ls"; fail "sweep ls does not give the parent"; }
"$sweep" ls --json "$id" | grep -q "\"from\": \"$parent\", \"from_iter\": 3" || fail "sweep ls --json does not give the parent"
key=0123456789abcdef0123456789abcdef01234567
python3 "$here/tests/cli/fake_wandb.py" serve --port-file "$work/port" --log "$work/wandb.log" --key $key &
wandb=$!
for _ in $(seq 1 200); do [ -f "$work/port" ] && break; sleep 0.05; done
WANDB_BASE_URL=http://127.0.0.1:$(cat "$work/port") WANDB_API_KEY=$key SWEEP_WANDB_BACKOFF=0.05 \
  "$sweep" export wandb "$id" --entity e --project p >"$work/export" 2>&1 || { cat "$work/export"; fail "export failed"; }
python3 "$here/tests/cli/fake_wandb.py" report --log "$work/wandb.log" --port-file "$work/port" >"$work/report.json"
kill "$wandb"
wait "$wandb" 2>/dev/null || true
# each run's config holds its lineage, as "pbt", its parent by our id and
# by W&B's run name (the one the parent's run has there)
python3 - "$work/report.json" "$id" <<'PY' || fail "the W&B export does not carry the lineage"
import json, sys
rep = json.load(open(sys.argv[1]))
runs = {r["display"]: (name, r) for name, r in rep["runs"].items()}
assert len(runs) == 6, runs.keys()
for display, (name, r) in runs.items():
    pbt = r["config"]["pbt"]["value"]
    assert 0 <= pbt["member"] <= 3, pbt
    if pbt["parent"] is None:
        assert pbt["parent_run"] is None and pbt["parent_iter"] is None, pbt
        continue
    assert pbt["parent_iter"] in (3, 6), pbt
    assert pbt["parent_run"] == runs[pbt["parent"]][0], (pbt, runs[pbt["parent"]][0])
assert runs[sys.argv[2] + "-5"][1]["config"]["pbt"]["value"]["parent_iter"] == 3
PY

echo "== run_cap 5: round 1's exploit fits, round 2's does not"
rm -rf "$SWEEP_HOME"
sweepfile 0.02
printf 'run_cap: 5\n' >>"$work/p.yaml"
(cd "$work" && "$sweep" run p.yaml --seed 5 >"$work/outc" 2>&1) || { cat "$work/outc"; fail "sweep run with run_cap failed"; }
[ "$(q "select count(*) from runs")" = 5 ] || fail "not 5 runs under run_cap 5"
[ "$(q "select count(*) from runs where state = 'stopped' and reason = 'stopped early by the stopping rule: paused at round 2: its 1 new run would pass run_cap (5)'")" = 4 ] ||
  fail "the members paused at round 2 did not end stopped, saying why"
[ "$(q "select count(*) from runs where state in ('paused', 'running', 'pending', 'finished')")" = 0 ] || fail "runs left unended"
grep -q "the population stops at round 2: its 1 new run would pass run_cap (5)" "$work/outc" || fail "no notice of the stop"

echo "== SIGKILL of sweep with members paused, then sweep resume"
rm -rf "$SWEEP_HOME"
sweepfile 0.3
(cd "$work" && exec "$sweep" run p.yaml --gpus 2 --seed 5 >"$work/out2" 2>&1) &
pid=$!
for _ in $(seq 1 300); do
  [ "$(q "select count(*) from runs where state = 'paused'" 2>/dev/null || echo 0)" -ge 2 ] && break
  sleep 0.1
done
[ "$(q "select count(*) from runs where state = 'paused'")" -ge 2 ] || fail "no members paused before the kill"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
paused_before=$(q "select group_concat(id) from runs where state = 'paused'")
(cd "$work" && "$sweep" resume >"$work/out3" 2>&1) || { cat "$work/out3"; fail "sweep resume failed"; }
[ "$(q "select state from sweeps")" = finished ] || fail "the resumed sweep did not finish"
check_runs

echo "== SIGKILL of sweep while a round's exploit is carried out, then resume"
rm -rf "$SWEEP_HOME"
(cd "$work" && exec "$sweep" run p.yaml --gpus 2 --seed 5 >"$work/out4" 2>&1) &
pid=$!
for _ in $(seq 1 300); do
  [ "$(q "select count(*) from runs where parent is not null" 2>/dev/null || echo 0)" -ge 1 ] && break
  sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
(cd "$work" && "$sweep" resume >"$work/out5" 2>&1) || { cat "$work/out5"; fail "the second resume failed"; }
[ "$(q "select state from sweeps")" = finished ] || fail "the second resumed sweep did not finish"
check_runs
echo "== SIGKILL of sweep while a round's checkpoint is being copied, then resume"
# (test builds hold the copy while the file exists: contract_copy.c)
rm -rf "$SWEEP_HOME"
: >"$work/hold"
(cd "$work" && SWEEP_FAULT_COPY_WAIT=$work/hold exec "$sweep" run p.yaml --gpus 2 --seed 5 >"$work/out6" 2>&1) &
pid=$!
for _ in $(seq 1 300); do [ -f "$work/hold.waiting" ] && break; sleep 0.05; done
[ -f "$work/hold.waiting" ] || fail "no copy was held"
[ "$(q "select count(*) from runs where parent is not null")" = 0 ] || fail "a round was stored before its copy was made"
[ "$(q "select count(*) from runs where state = 'paused'")" = 4 ] || fail "not 4 members paused during the copy"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
rm -f "$work/hold"
ls "$SWEEP_HOME"/runs/*/checkpoint.copy >/dev/null 2>&1 || fail "no half-made copy was left to clean up"
(cd "$work" && "$sweep" resume >"$work/out7" 2>&1) || { cat "$work/out7"; fail "the third resume failed"; }
[ "$(q "select state from sweeps")" = finished ] || fail "the third resumed sweep did not finish"
check_runs
! ls "$SWEEP_HOME"/runs/*/checkpoint.copy >/dev/null 2>&1 || fail "a half-made copy was left"
echo "test_pbt: ok (paused before the kill: $paused_before)"
