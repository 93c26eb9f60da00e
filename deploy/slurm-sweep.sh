#!/bin/bash
# A headlab seed sweep as a Slurm job array: each array task runs one shard
# and writes its own SQLite database under $OUT (default results/).
#
#   sbatch deploy/slurm-sweep.sh                       # the sweep below
#   sbatch deploy/slurm-sweep.sh --task reverse --grid 'positions=on,off'
#   # when every task has finished (or as a dependent job,
#   # sbatch --dependency=afterok:<jobid> --wrap 'bin/headlab merge ...'):
#   bin/headlab merge --db results/all.db results/shard-*.db
#   bin/headlab report --db results/all.db
#
# headlab sweep takes its shard from SLURM_ARRAY_TASK_ID and
# SLURM_ARRAY_TASK_COUNT (counting from SLURM_ARRAY_TASK_MIN), so any
# contiguous --array works; an array with a step (0-15:2) does not.
# Resubmitting the same array resumes every shard from its database.
#SBATCH --job-name=headlab-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=4
#SBATCH --mem=2G
#SBATCH --time=02:00:00
#SBATCH --output=headlab-sweep-%A_%a.out
set -euo pipefail

HEADLAB=${HEADLAB:-bin/headlab}
OUT=${OUT:-results}
mkdir -p "$OUT"

# On scancel or preemption Slurm sends SIGTERM: headlab starts no new runs,
# stores the ones that finish, and leaves the database consistent.
exec "$HEADLAB" sweep \
  --task induction --seeds 1-64 --grid 'positions=on,off;layers=1,2' \
  --workers "${SLURM_CPUS_PER_TASK:-1}" \
  --db "$OUT/shard-${SLURM_ARRAY_TASK_ID}.db" \
  "$@"
