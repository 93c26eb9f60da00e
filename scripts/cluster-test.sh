#!/usr/bin/env bash
# deploy/slurm-sweep.sh under a real Slurm: munged, slurmctld and slurmd
# (Debian's slurm-wlm and munge) started in a temporary folder as a
# one-node cluster the size of this machine, then
#
#   - the sweep submitted as a job array of 4 tasks, with the script's own
#     resource requests, and the merge as a job that depends on it
#     (afterok);
#   - one task requeued while it runs (SIGTERM, then pending again): it
#     resumes its shard from the node-local copy;
#   - the merged database checked against a one-machine sweep of the same
#     pairs: `report --against`, and bit for bit (merging the two adds
#     nothing and conflicts on nothing);
#   - a merge job over a corrupt shard exits 2 and writes nothing.
#
# Every daemon started here is stopped by its PID on the way out, however
# the script ends. About a minute on 2 cores.
#
#   scripts/cluster-test.sh [BINARY]     (default: builds ./cmd/headlab)
#
# Needs root (slurmd runs jobs as their user) and
# `apt-get install slurm-wlm munge`. Without them it says so and exits 0,
# except under CI=true, where it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

say() { echo "cluster-test: $*" >&2; }
missing=""
for c in munged slurmctld slurmd sbatch scontrol squeue sinfo scancel python3; do
  command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
[ "$(id -u)" = 0 ] || missing="$missing root"
if [ -n "$missing" ]; then
  if [ "${CI:-}" = true ]; then
    say "FAIL: cannot run without$missing (apt-get install slurm-wlm munge, as root)"
    exit 1
  fi
  say "skipped: needs$missing (apt-get install slurm-wlm munge, as root)"
  exit 0
fi

work=$(mktemp -d)
# Folders the daemons and munge's clients pass through must be
# world-executable.
chmod 755 "$work"
pids=()
stop() {
  local st=$?
  # Jobs still running (a failed check) go first, while slurmd can end
  # their steps.
  if [ "${SLURM_CONF:-}" = "$work/slurm.conf" ] && [ -n "$(squeue -h 2>/dev/null)" ]; then
    scancel --full --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    # Daemons exit within a second of SIGTERM; give them five.
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "$st" != 0 ]; then
    for log in "$work"/*.log "$work"/logs/*.out; do [ -e "$log" ] && { say "$log:"; tail -5 "$log" >&2; }; done
  fi
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT TERM

bin=${1:-}
if [ -z "$bin" ]; then
  go build -o "$work/headlab" ./cmd/headlab
  bin=$work/headlab
fi
bin=$(realpath "$bin")
start=$SECONDS

# A free TCP port on this machine (the kernel's pick, released at once).
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# daemon PIDFILE: wait for a forking daemon's PID file and remember the PID.
daemon() {
  for _ in $(seq 100); do
    if [ -s "$1" ]; then
      pids+=("$(cat "$1")")
      return 0
    fi
    sleep 0.1
  done
  say "FAIL: no $1 after 10 s"
  return 1
}

mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/results" "$work/local" "$work/logs"
chmod 755 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --force --key-file "$work/munge/munge.key" --socket "$work/munge/munge.socket.2" \
  --pid-file "$work/munge/munged.pid" --log-file "$work/munged.log" --seed-file "$work/munge/seed"
daemon "$work/munge/munged.pid"

cpus=$(nproc)
mem=$(awk '/^MemTotal:/ { print int($2 / 1024 / 2) }' /proc/meminfo) # half of it, in MB
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=headlab-test
SlurmctldHost=localhost
SlurmctldPort=$(port)
SlurmdPort=$(port)
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket.2
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -i
daemon "$work/slurmctld.pid"
slurmd -N localhost
daemon "$work/slurmd.pid"
for _ in $(seq 100); do
  [ "$(sinfo -h -N -o %t 2>/dev/null)" = idle ] && break
  sleep 0.2
done
[ "$(sinfo -h -N -o %t)" = idle ] || { say "FAIL: the node is $(sinfo -h -N -o %t), not idle, after 20 s"; exit 1; }
say "[$((SECONDS - start)) s] a one-node cluster of $cpus CPUs is up"

# wait_done JOB: until the job (every task of an array) has left the queue.
wait_done() {
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  say "FAIL: job $1 still queued after 120 s: $(squeue -h -j "$1" -o '%i %T %r' | tr '\n' ' ')"
  return 1
}
# exit_code JOB: the job's exit status, as Slurm recorded it.
exit_code() { scontrol show job "$1" | sed -n 's/.*ExitCode=\([0-9]*\):.*/\1/p' | head -1; }

# 16 pairs, 4 per task: about 2 s of training each on one core.
flags=(--task induction --seeds 1-8 --grid 'layers=1,2' --steps 150 --measure none)
out=$work/results
export HEADLAB=$bin OUT=$out LOCAL_DB_DIR=$work/local
array=$(sbatch --parsable --array=0-3 --open-mode=append --output="$work/logs/%A_%a.out" \
  deploy/slurm-sweep.sh "${flags[@]}")
merge=$(sbatch --parsable --dependency="afterok:$array" --output="$work/logs/merge.out" \
  --wrap "$bin merge --db $out/all.db $out/shard-0.db $out/shard-1.db $out/shard-2.db $out/shard-3.db")
say "[$((SECONDS - start)) s] submitted array $array and merge $merge"

# Requeue task 1 once it has stored a run and while it trains the next.
log1=$work/logs/${array}_1.out
for _ in $(seq 600); do
  grep -q ' [1-3]/4 runs' "$log1" 2>/dev/null && break
  [ -z "$(squeue -h -j "${array}_1")" ] && break # it ended (failed) already
  sleep 0.1
done
grep -q ' [1-3]/4 runs' "$log1" || { say "FAIL: task 1 stored no run while it ran (its log is below)"; exit 1; }
scontrol requeue "${array}_1"
# A requeued task is held back about two minutes before it may start
# again: once it is pending, it may start now.
for _ in $(seq 300); do
  [ "$(squeue -h -j "${array}_1" -o %T)" = PENDING ] && break
  sleep 0.1
done
scontrol update JobId="${array}_1" StartTime=now
say "[$((SECONDS - start)) s] requeued task 1 mid-run"

# Meanwhile, the same pairs on this machine in one process.
"$bin" sweep "${flags[@]}" --workers 1 --quiet --db "$work/one.db" 2>/dev/null
say "[$((SECONDS - start)) s] the one-machine sweep is done"
wait_done "$array"
wait_done "$merge"
say "[$((SECONDS - start)) s] the array and the merge are done"

fail=0
check() { # check WHAT COMMAND...
  local what=$1
  shift
  if "$@"; then say "ok   $what"; else say "FAIL $what"; fail=1; fi
}
check "the merge job exits 0 (exit $(exit_code "$merge"))" test "$(exit_code "$merge")" = 0
restarts=$(scontrol show job "${array}_1" | sed -n 's/.*Restarts=\([0-9]*\).*/\1/p')
check "task 1 ran twice (Restarts=$restarts)" test "$restarts" = 1
check "task 1's second run resumed the runs its first stored" \
  grep -q 'sweep: 4 pairs in shard 1/4: [1-3] already in' "$log1"
check "no shard was left on local disk" test -z "$(ls -A "$work/local")"
check "report --against the one-machine sweep" "$bin" report --db "$out/all.db" --against "$work/one.db" >/dev/null
"$bin" merge --db "$work/both.db" "$out/all.db" "$work/one.db" >"$work/both.out"
check "the merged shards hold the one-machine runs bit for bit ($(cat "$work/both.out"))" \
  grep -q ': 16 runs added, 16 duplicates skipped, 16 runs in all' "$work/both.out"

# A corrupt shard (the page of an index overwritten, as a disk error
# might): the merge job exits 2 and merges nothing.
cp "$out/shard-2.db" "$out/bad.db"
python3 - "$out/bad.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs_task'").fetchone()[0]
size = c.execute("PRAGMA page_size").fetchone()[0]
c.close()
with open(sys.argv[1], "r+b") as f:
    f.seek((root - 1) * size)
    f.write(b"\xa5" * size)
PY
bad=$(sbatch --parsable --output="$work/logs/bad.out" \
  --wrap "$bin merge --db $out/bad-all.db $out/shard-0.db $out/bad.db")
wait_done "$bad"
check "a merge job over a corrupt shard exits 2 (exit $(exit_code "$bad"))" test "$(exit_code "$bad")" = 2
check "... with one line ($(head -c 200 "$work/logs/bad.out"))" test "$(wc -l <"$work/logs/bad.out")" = 1
check "... and writes nothing" test ! -e "$out/bad-all.db"

say "[$((SECONDS - start)) s] done"
[ "$fail" = 0 ] || { say "FAILED"; exit 1; }
