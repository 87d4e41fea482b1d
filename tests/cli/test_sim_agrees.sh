#!/usr/bin/env bash
# test_sim_agrees.sh - the simulator against real local runs of the same
# curves at 0.2 s steps: a trainer (agree_trial.py) that trains for real
# or prints its curve under SWEEP_SIMULATE=1, run by both backends with
# Hyperband and with promotion ASHA. Both must make the same decisions
# (each run's state, attempts and last step) and agree within 5 % in
# wall time and in GPU time.
#
# Each run is `x:startup`: its curve's parameter and its start-up (0.01
# s to 0.31 s, which the trainer declares to the simulator as
# `_startup`), chosen so that any two runs' reports at a rung come at
# least 80 ms apart, which the test checks on the simulated timeline:
# an asynchronous rule decides in the order reports come in, so reports
# closer than a real system's jitter could go either way.
#
#   bash tests/cli/test_sim_agrees.sh SWEEP_BIN
set -euo pipefail
sweep=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "kept: $work" || trap 'rm -rf "$work"' EXIT
export SWEEP_GIT=off
# Debian's python starts in 15 ms; a pyenv shim takes 90 ms more, which
# the trainer would have to declare as start-up of its own. It runs with
# -S (no site: the trainer needs only the standard library): a machine's
# .pth files (a sandbox's CA hook, matplotlib's namespace packages) made
# every start 25-35 ms slower, 0.4 s over promotion ASHA's attempts
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
fail() {
  echo "test_sim_agrees: $*" >&2
  exit 1
}

# What an attempt of this trainer costs the sweep on this machine, now,
# besides its training: the simulator's default (0.021 s) is a bare
# process's launch, while every attempt here also starts a Python, and a
# machine busy with other tests makes both slower and delays the next
# launch after an attempt ends (2-3 ms idle, 15-20 ms under load, measured
# here). Six attempts of the trainer with nothing to train, one after
# another; the median time from one's start to the next's is declared to
# the simulator as `sim: {startup}`, measured again before each rule's
# real sweep, so that it is the load of that moment.
cat >"$work/launch.yaml" <<YAML
method: grid
metric: {name: loss, goal: minimize}
parallel: 1
command: [$py, -S, $here/agree_trial.py, "\${args}"]
parameters:
  run: {values: ["0:0", "1:0", "2:0", "3:0", "4:0", "5:0"]}
  steps: {value: 0}
  secs: {value: 0}
YAML
launch_cost() { # RULE -> seconds
  local home=$work/launch-$1
  SWEEP_HOME=$home "$sweep" run "$work/launch.yaml" --quiet >"$home.log" 2>&1 ||
    { cat "$home.log" >&2; fail "the launch-cost sweep failed"; }
  SWEEP_HOME=$home "$sweep" query --csv "select d from (select started_at
      - lag(started_at) over (order by started_at) d from attempts)
    where d is not null order by d limit 1 offset 2" | tail -1
}

sweepfile() { # NAME RULE LAUNCH
  cat >"$work/$1.yaml" <<YAML
method: grid
metric: {name: loss, goal: minimize}
parallel: 2
early_terminate: $2
sim: {startup: $3}
command: [$py, -S, $here/agree_trial.py, "\${args}"]
parameters:
  run: {values: ["5:0.17", "2:0.29", "7:0.07", "0:0.13", "4:0.01", "8:0.27",
                 "1:0.27", "6:0.31", "3:0.25"]}
  steps: {value: 9}
  secs: {value: 0.2}
YAML
}
declare -A rungs=([hb]="2, 4, 8" [asha]="1, 3, 9")

decisions() { # HOME -> one line per run: its state, attempts, last step
  SWEEP_HOME=$1 "$sweep" query --csv "select r.id, r.state, r.attempts,
      (select max(step) from metrics m where m.run_id = r.id)
    from runs r order by r.id" | tail -n +2 | sed 's/^[^-]*-//'
}
times() { # HOME -> wall seconds, GPU-seconds (attempts' durations)
  SWEEP_HOME=$1 "$sweep" query --csv "select max(ended_at) - min(started_at),
      sum(ended_at - started_at) from attempts" | tail -1
}
within() { # A B -> A within 5 % of B
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * b) }'
}

# Promotion ASHA without its drain: the drain promotes a paused run when
# its pace says it reaches its rung before the others end theirs, a
# comparison of two times that 5 % of difference can turn either way;
# test_promote.sh tests it through the real binary.
declare -A rules=([hb]="{type: hyperband, min_iter: 2, eta: 2}"
  [asha]="{type: asha, promote: true, min_iter: 1, eta: 3, max_iter: 9, drain: false}")
for rule in hb asha; do
  launch=$(launch_cost $rule)
  awk -v l="$launch" 'BEGIN { exit !(l > 0 && l < 2) }' || fail "$rule: a launch took $launch s"
  sweepfile $rule "${rules[$rule]}" "$launch"
  SWEEP_HOME=$work/real-$rule "$sweep" run "$work/$rule.yaml" --quiet >"$work/real-$rule.log" 2>&1 ||
    { cat "$work/real-$rule.log" >&2; fail "$rule: the real sweep failed"; }
  SWEEP_HOME=$work/sim-$rule "$sweep" run "$work/$rule.yaml" --backend sim --quiet >"$work/sim-$rule.log" 2>&1 ||
    { cat "$work/sim-$rule.log" >&2; fail "$rule: the simulated sweep failed"; }
  # the design holds: no two runs' reports at a rung closer than 80 ms
  gap=$(SWEEP_HOME=$work/sim-$rule "$sweep" query --csv "select min(b.time - a.time)
    from metrics a join metrics b on b.time >= a.time and b.run_id <> a.run_id
    where a.name = 'loss' and b.name = 'loss' and a.step in (${rungs[$rule]})
      and b.step in (${rungs[$rule]})" | tail -1)
  awk -v g="$gap" 'BEGIN { exit !(g >= 0.079) }' || fail "$rule: two reports at a rung $gap s apart in the simulation"
  real=$(decisions "$work/real-$rule") sim=$(decisions "$work/sim-$rule")
  [ "$real" = "$sim" ] || fail "$rule: different decisions, real:
$real
simulated:
$sim"
  grep -q stopped <<<"$sim" || fail "$rule: nothing was stopped"
  IFS=, read -r rwall rgpu <<<"$(times "$work/real-$rule")"
  IFS=, read -r swall sgpu <<<"$(times "$work/sim-$rule")"
  echo "$rule: an attempt's launch $launch s; wall $rwall s real, $swall s simulated; GPU time $rgpu s real, $sgpu s simulated"
  within "$swall" "$rwall" || fail "$rule: wall time $swall s simulated, $rwall s real"
  within "$sgpu" "$rgpu" || fail "$rule: GPU time $sgpu s simulated, $rgpu s real"
done
echo "test_sim_agrees: ok"
