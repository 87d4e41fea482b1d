#!/usr/bin/env bash
# A single-node Slurm cluster for the tests, from Debian's slurm-wlm and
# munge: munged, slurmctld and slurmd, every file of theirs (config, keys,
# sockets, state, logs) under one folder, no systemd, no cgroups, no
# accounting database, four fake GPUs (File= symlinks to /dev/null), each
# in four shards (gres/shard) for trials that ask for a share of one.
#
#   cluster.sh start DIR   installs the packages when missing, starts the
#                          daemons, waits until the node takes jobs, and
#                          prints SLURM_CONF=DIR/slurm.conf
#   cluster.sh stop DIR    stops the daemons by their pids (never by name)
#   cluster.sh env DIR     prints SLURM_CONF=... for a running cluster
#
# A second partition, `short`, takes jobs of at most a minute.
# Ended jobs are purged from the controller within seconds (MinJobAge=5),
# so the tests also see jobs known only to the completion log (sacct -c).
# Exit 77 from start means Slurm cannot be had here (no packages, no apt):
# the tests skip. Sizes can be changed with SWEEP_SLURM_CPUS (8),
# SWEEP_SLURM_GPUS (4) and SWEEP_SLURM_SHARDS (per GPU, 4; 0: none).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|env DIR" >&2; exit 2; }
cpus=${SWEEP_SLURM_CPUS:-8}
gpus=${SWEEP_SLURM_GPUS:-4}
shards=${SWEEP_SLURM_SHARDS:-4}

# A start that fails stops what it started.
die() {
  echo "cluster.sh: $*" >&2
  [ "${starting:-0}" = 1 ] && stop
  exit 1
}
skip() { echo "cluster.sh: $* (the Slurm tests skip)" >&2; exit 77; }

install_packages() {
  command -v slurmctld >/dev/null && command -v munged >/dev/null && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  command -v apt-get >/dev/null || skip "no slurmctld/munged and no apt-get"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    slurm-wlm munge >"$dir/apt.log" 2>&1 ||
    { $sudo apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        slurm-wlm munge >"$dir/apt.log" 2>&1; } ||
    skip "cannot install slurm-wlm and munge (see $dir/apt.log)"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Stops the daemon whose pid file is $1: SIGTERM, then SIGKILL after 5 s.
stop_pid() {
  local f=$1 pid i
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  rm -f "$f"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$dir/munged.pid"
}

write_config() {
  local user=$1 ctld_port=$2 slurmd_port=$3 i gres=gpu:$gpus
  [ "$shards" -gt 0 ] && gres="$gres,shard:$((gpus * shards))"
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool" "$dir/dev"
  chmod 0711 "$dir" "$dir/munge"
  head -c 1024 /dev/urandom >"$dir/munge.key"
  chmod 0400 "$dir/munge.key"
  for i in $(seq 0 $((gpus - 1))); do ln -sf /dev/null "$dir/dev/gpu$i"; done
  cat >"$dir/slurm.conf" <<CONF
ClusterName=sweeptest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.daemon.pid
SlurmdPidFile=$dir/slurmd.daemon.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SchedulerTimeSlice=5
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
MinJobAge=5
MessageTimeout=5
InactiveLimit=0
GresTypes=gpu,shard
NodeName=sweepnode NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=$cpus RealMemory=8192 Gres=$gres State=UNKNOWN
PartitionName=debug Nodes=sweepnode Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
PartitionName=short Nodes=sweepnode MaxTime=1 State=UP OverSubscribe=NO
CONF
  if [ "$gpus" -gt 0 ]; then
    echo "Name=gpu File=$dir/dev/gpu[0-$((gpus - 1))]" >"$dir/gres.conf"
    for i in $(seq 0 $((gpus - 1))); do
      [ "$shards" -gt 0 ] &&
        echo "Name=shard Count=$shards File=$dir/dev/gpu$i" >>"$dir/gres.conf"
    done
  else
    : >"$dir/gres.conf"
  fi
}

# Starts `$@` in its own session, its output in $log, its pid in $pidf.
daemon() {
  local pidf=$1 log=$2
  shift 2
  setsid "$@" </dev/null >>"$log" 2>&1 &
  echo $! >"$pidf"
}

wait_for() {
  local what=$1 i
  shift
  for i in $(seq 300); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "$what did not come up (logs in $dir)"
}

node_ready() {
  local state
  # one line a partition the node is in
  state=$(sinfo -h -N -n sweepnode -p debug -o %T 2>/dev/null) || return 1
  case "$state" in
    idle|mixed|allocated) return 0 ;;
    drain*|inval*) scontrol update nodename=sweepnode state=resume >/dev/null 2>&1; return 1 ;;
    *) return 1 ;;
  esac
}

start() {
  local user
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ${#dir} -le 80 ] || die "$dir: too long a path for munge's socket"
  install_packages
  stop # a cluster left behind in this folder
  user=$(id -un)
  starting=1
  write_config "$user" "$(free_port)" "$(free_port)"
  export SLURM_CONF=$dir/slurm.conf
  daemon "$dir/munged.pid" "$dir/munged.out" munged -F --force \
    --socket="$dir/munge/munge.socket" --key-file="$dir/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munged.log" \
    --seed-file="$dir/munge/munged.seed"
  wait_for munged test -S "$dir/munge/munge.socket"
  daemon "$dir/slurmctld.pid" "$dir/slurmctld.out" slurmctld -D -i -f "$SLURM_CONF"
  wait_for slurmctld scontrol ping
  daemon "$dir/slurmd.pid" "$dir/slurmd.out" slurmd -D -N sweepnode -f "$SLURM_CONF"
  wait_for "the node" node_ready
  starting=0
  echo "SLURM_CONF=$SLURM_CONF"
}

case "$cmd" in
  start) start ;;
  stop) [ -d "$dir" ] && stop; exit 0 ;;
  env) echo "SLURM_CONF=$(cd "$dir" && pwd)/slurm.conf" ;;
  *) echo "usage: $0 start|stop|env DIR" >&2; exit 2 ;;
esac
