#!/bin/bash
# A headlab seed sweep as a Slurm job array: each array task runs one shard
# and writes its own SQLite database, shard-<task id>.db under $OUT
# (default results/, a folder every node sees).
#
#   sbatch deploy/slurm-sweep.sh                       # the sweep below
#   sbatch deploy/slurm-sweep.sh --task reverse --grid 'positions=on,off'
#   sbatch --array=0-3 --cpus-per-task=4 --mem=4G deploy/slurm-sweep.sh   # other requests
#   # when every task has finished, or as a job that waits for them:
#   sbatch --dependency=afterok:<jobid> --wrap 'bin/headlab merge --db results/all.db results/shard-*.db'
#   bin/headlab report --db results/all.db
#
# The requests below fit any node (one CPU, 1 GB); sbatch's own options
# override them, and --workers follows --cpus-per-task. A request larger
# than every node is accepted and then pends forever.
#
# headlab sweep takes its shard from SLURM_ARRAY_TASK_ID and
# SLURM_ARRAY_TASK_COUNT (counting from SLURM_ARRAY_TASK_MIN), so any
# contiguous --array works; an array with a step (0-15:2) does not.
#
# The database is written on the node's local disk (a folder of its own
# under $LOCAL_DB_DIR, default $TMPDIR or /tmp): SQLite's write-ahead log
# needs shared memory that a network file system does not give. It is copied to $OUT when the shard
# is done, under a temporary name then renamed, so a merge never reads
# half a file. A requeued task on the same node resumes its local copy;
# resubmitting the array resumes from the shards in $OUT.
#SBATCH --job-name=headlab-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=1
#SBATCH --mem=1G
#SBATCH --time=02:00:00
#SBATCH --output=headlab-sweep-%A_%a.out
set -euo pipefail

HEADLAB=${HEADLAB:-bin/headlab}
OUT=${OUT:-results}
task=${SLURM_ARRAY_TASK_ID:?run this script with sbatch --array}
scratch=${LOCAL_DB_DIR:-${TMPDIR:-/tmp}}/headlab-${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}-$task
shard=shard-$task.db
mkdir -p "$OUT" "$scratch"
if [ ! -e "$scratch/$shard" ] && [ -e "$OUT/$shard" ]; then
  cp "$OUT/$shard" "$scratch/$shard"
fi

# On scancel, requeue or preemption Slurm sends SIGTERM: headlab starts no
# new runs, stores the ones that finish, and leaves the database
# consistent; the shard is then not copied.
"$HEADLAB" sweep \
  --task induction --seeds 1-64 --grid 'positions=on,off;layers=1,2' \
  --workers "${SLURM_CPUS_PER_TASK:-1}" \
  --db "$scratch/$shard" \
  "$@"
cp "$scratch/$shard" "$OUT/.$shard.tmp"
mv "$OUT/.$shard.tmp" "$OUT/$shard"
rm -rf "$scratch"
