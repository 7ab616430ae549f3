#!/usr/bin/env bash
# CI stage (called by .ci/run after the README test command): starts a single-node Slurm cluster on localhost
# (munged, slurmctld and slurmd from Debian's slurm-wlm, a minimal slurm.conf in a temporary folder, run as
# root), submits the test sweep with the script `dtsim sweep --emit slurm` writes (a job array of 3 shards and
# a dependent collect job), and checks that the collected CSV equals a local run's. Every wait is bounded; on a
# failure it prints the daemons' logs. Needs root and `scripts/deps.sh --slurm`. It is not a CTest test: the
# README's test command must pass on a machine without a Slurm daemon.
# usage: tests/ci_slurm.sh path/to/dtsim   (run from the repository root)
set -u
DTSIM=${1:?usage: ci_slurm.sh DTSIM}
DTSIM=$(cd "$(dirname "$DTSIM")" && pwd)/$(basename "$DTSIM")
[ "$(id -u)" -eq 0 ] || { echo "ci_slurm.sh: must run as root (it starts munged, slurmctld and slurmd)"; exit 2; }
for b in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v $b >/dev/null || { echo "ci_slurm.sh: '$b' not found: run scripts/deps.sh --slurm"; exit 2; }
done
T=$(mktemp -d /tmp/dtsim-slurm.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
trap "exit 143" TERM INT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
logs() {
  for f in "$T"/munged.log "$T"/munged.out "$T"/slurmctld.log "$T"/slurmd.log "$T"/sweep/slurm/*.out; do
    [ -f "$f" ] && { echo "---- $f (last 40 lines)"; tail -40 "$f"; }
  done
}
die() { bad "$1"; logs; echo "$pass passed, $fail failed"; exit 1; }
# wait_for SECONDS 'CONDITION': polls every half second
wait_for() {
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do eval "$2" && return 0; sleep 0.5; done
  return 1
}

# --- munge, on its own socket
install -d -m 755 -o munge -g munge "$T/munge"
runuser -u munge -- munged --socket="$T/munge/munge.socket" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munge/seed" --foreground >"$T/munged.out" 2>&1 &
pids+=($!)
wait_for 15 '[ -S "$T/munge/munge.socket" ]' || die "munged starts"
ok "munged starts"

# --- a one-node cluster: this machine as node ci-node, controller on 127.0.0.1, ports away from the defaults
cpus=$(nproc)
mkdir -p "$T/state" "$T/spool"
cat >"$T/slurm.conf" <<EOF
ClusterName=dtsim-ci
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
NodeName=ci-node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=ci-node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >>"$T/slurmctld.log" 2>&1 &
pids+=($!)
wait_for 30 'scontrol ping 2>/dev/null | grep -q UP' || die "slurmctld answers"
ok "slurmctld answers"
slurmd -D -N ci-node -f "$SLURM_CONF" >>"$T/slurmd.log" 2>&1 &
pids+=($!)
wait_for 60 'sinfo -h -N -o "%T" 2>/dev/null | grep -Eq "^idle"' || die "slurmd registers node ci-node as idle"
ok "slurmd registers node ci-node as idle"

# --- the sweep: a local run, then the same spec through the submission script
cp tests/data/sweep/grid-base.yaml tests/data/sweep/grid.yaml "$T/"
"$DTSIM" sweep -q "$T/grid.yaml" --dir "$T/local" -o "$T/local.csv" >/dev/null 2>"$T/local.err" ||
  { cat "$T/local.err"; die "local sweep runs"; }
ok "local sweep runs"
(cd "$T" && "$DTSIM" sweep run --emit slurm --shards 3 grid.yaml --dir "$T/sweep" -o "$T/slurm.csv") \
  >"$T/submit.sh" 2>"$T/emit.err" || { cat "$T/emit.err"; die "--emit slurm writes the script"; }
ok "--emit slurm writes the script"
sh "$T/submit.sh" >"$T/submit.out" 2>&1 || { cat "$T/submit.out"; die "the script submits the jobs"; }
cat "$T/submit.out"
ok "the script submits the jobs"
wait_for 300 '[ -z "$(squeue -h -o %i 2>/dev/null)" ] && [ -f "$T/slurm.csv" ]' ||
  { squeue; die "the array and the collect job finish within 5 minutes"; }
ok "the array and the collect job finish"
n=$(ls "$T"/sweep/slurm/shard-*.out 2>/dev/null | wc -l)
[ "$n" -eq 3 ] && ok "3 array tasks ran" || bad "3 array tasks ran (found $n outputs)"
if cmp -s "$T/local.csv" "$T/slurm.csv"; then ok "Slurm CSV equals the local run's"; else
  diff "$T/local.csv" "$T/slurm.csv"; bad "Slurm CSV equals the local run's"; fi
[ "$fail" -eq 0 ] || logs
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
