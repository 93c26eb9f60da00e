#!/usr/bin/env bash
# Runs the same commands with two headlab binaries and compares what they
# print and write, timing fields aside: the check that a change meant to
# keep behaviour (a refactor) did. Exits 1 and shows the first lines of
# every difference; 0 when every output is the same.
#
#   scripts/compare-builds.sh OLD_BINARY NEW_BINARY
#
# It covers train (--json and the report, several tasks and shapes, both
# losses), heads (tables, --json, mean ablation, figures), prune, curves,
# dump, export, import, patch, attribute, circuit (and heads --html's
# page), plant, a small sweep with report, --csv, atlas and merge, bench's
# cost model, and reproduce --quick's findings.md, on the CPU. About two
# minutes on two cores.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: compare-builds.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME ARGS...: runs both binaries in their own folders on the same
# arguments (@OUT@ is the run's output folder), keeping stdout, stderr's
# last line and the exit status.
run() {
  local name=$1
  shift
  for side in old new; do
    local bin=$old dir=$work/$side
    [ "$side" = new ] && bin=$new
    mkdir -p "$dir/$name"
    local args=()
    for a in "$@"; do args+=("${a//@OUT@/$dir/$name}"); done
    (cd "$dir" && "$bin" "${args[@]}" >"$dir/$name/stdout" 2>"$dir/$name/stderr"; echo "exit $?" >"$dir/$name/status")
    tail -n 1 "$dir/$name/stderr" >"$dir/$name/stderr.last"
    rm "$dir/$name/stderr"
  done
}

q=(--quiet)
run train-ind train --steps 300 --json "${q[@]}" --save @OUT@/ckpt --record-every 50
run train-ind-text train --steps 300 "${q[@]}"
run train-answers train --steps 300 --loss answers --json "${q[@]}"
run train-maj train --task majority --heads 4 --steps 200 --json "${q[@]}"
run train-agr train --task agreement --steps 200 --json "${q[@]}"
run train-copy train --task copy --tied-embeddings --no-causal --steps 200 --json "${q[@]}"
run train-rev train --task reverse --no-positions --train-examples 64 --weight-decay 0.1 --steps 200 --json "${q[@]}"
run train-seeds train --seeds 1-3 --steps 100 "${q[@]}"
for side in old new; do cp -r "$work/$side/train-ind/ckpt" "$work/$side/ckpt"; done
run heads heads --run ckpt
run heads-json heads --run ckpt --json
run heads-mean heads --run ckpt --ablation mean --json
run heads-fig heads --run ckpt --png @OUT@/h.png --arcs @OUT@/a.svg
run prune prune --run ckpt --json
run curves curves --run ckpt --png @OUT@/c.svg
run dump dump --run ckpt --out @OUT@/d.npz
run export export --run ckpt --format transformerlens --out @OUT@/e.safetensors
run patch patch --run ckpt --json --examples 40
run attribute attribute --run ckpt --json
run sweep sweep --task majority --steps 60 --seeds 1-3 --grid 'loss=next-token,answers;layers=1,2' --db @OUT@/s.db "${q[@]}"
for side in old new; do cp "$work/$side/sweep/s.db" "$work/$side/s.db"; done
run report report --db s.db
run report-csv report --db s.db --csv @OUT@/csv
run atlas atlas --db s.db --json
run merge merge --db @OUT@/m.db s.db
run circuit circuit --run ckpt --json --examples 16
run circuit-fig circuit --run ckpt --examples 16 --direction denoising --png @OUT@/c.svg
run heads-comp heads --run ckpt --composition
run heads-html heads --run ckpt --html @OUT@/h.html --html-threshold 0.8
run plant plant --kind redundant --out @OUT@/p --json
for side in old new; do cp "$work/$side/export/e.safetensors" "$work/$side/export/e.json" "$work/$side/"; done
run import import --format transformerlens --in e.safetensors --out @OUT@/imp --json
run train-seeds-json train --seeds 1-2 --steps 50 --json "${q[@]}"
run bench-model bench --parts model --groups 1,16 --json
run reproduce reproduce --quick --out @OUT@ "${q[@]}"

# Timing fields and stamps differ between any two runs: drop them (from
# CSV files, their columns).
clean() {
  case "$1" in
  *.csv)
    python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
drop = {i for i, c in enumerate(rows[0]) if c in ("seconds", "train_seconds", "finished_at", "headlab_version", "revision")}
for r in rows:
    print(",".join(v for i, v in enumerate(r) if i not in drop))' "$1"
    return
    ;;
  *.safetensors)
    # The header's metadata may carry the run's timings: the rest of the
    # header as written, and a digest of the tensors' bytes.
    python3 -c 'import hashlib, re, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = b[8:8 + n].decode()
print(re.sub(r"\\?\"(train_seconds|ms_per_step|seconds)\\?\": ?[0-9.e+-]+,?", "", h))
print(hashlib.sha256(b[8 + n:]).hexdigest())' "$1"
    return
    ;;
  esac
  sed -E -e 's/[0-9.]+ (runs|steps|seeds|edge sets)\/s/RATE/g' -e 's/trained in [0-9.]+ s/trained in TIME/g' -e "s#$work/(old|new)#WORK#g" -e 's/ in [0-9.]+ s / in TIME /' -e 's/"(train_seconds|ms_per_step|seconds|finished_at|headlab_version|revision)": [^,]*,?//g' \
    -e 's/[0-9.]+ s for [0-9]+ steps \([0-9.]+ ms\/step/TIME/' \
    -e 's/[0-9.]+ s per run \(mean\)/TIME/' \
    -e 's/^Generated by .*//' -e 's/\| [0-9.]+ \|$/| TIME |/' "$1"
}
status=0
for dir in "$work"/old/*/; do
  name=$(basename "$dir")
  while IFS= read -r -d '' f; do
    rel=${f#"$work/old/"}
    g=$work/new/$rel
    case "$f" in
    *.db | *.db-wal | *.db-shm | */ckpt/config.json) continue ;; # stamps inside; compared through report and --json
    esac
    if [ ! -e "$g" ]; then
      echo "compare-builds: $rel: only the old build wrote it"
      status=1
    elif ! cmp -s <(clean "$f") <(clean "$g"); then
      echo "compare-builds: $rel differs:"
      diff <(clean "$f") <(clean "$g") | head -n 8
      status=1
    fi
  done < <(find "$dir" -type f -print0)
done
[ "$status" -eq 0 ] && echo "compare-builds: every output is the same"
exit "$status"
