#!/usr/bin/env bash
# A battery of bad inputs across every command. Each must be refused with
# its documented exit status (README: 2 for bad input), one line on stderr
# that starts "headlab: ", no panic, nothing on stdout, and no file written,
# changed or left behind (every file under the fixtures and the working
# directory is checksummed before and after). Also: an interrupted train
# exits 130, and an unprivileged user's unwritable output is refused.
#
#   scripts/abuse.sh [BINARY]     (default: builds ./cmd/headlab once)
set -uo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
bin=${1:-}
if [ -z "$bin" ]; then
  go build -o "$work/headlab" ./cmd/headlab || exit 1
  bin=$work/headlab
fi
fx=$work/fx     # fixtures the cases read
play=$work/play # the cases' working directory
mkdir -p "$fx" "$play"

small=(--task majority --steps 2 --layers 1 --heads 1 --d-model 8 --d-ff 8 --quiet)
setup() {
  "$bin" train "${small[@]}" --record-every 1 --save "$fx/ckpt" >/dev/null 2>&1 &&
    "$bin" train "${small[@]}" --save "$fx/nohist" >/dev/null 2>&1 &&
    "$bin" heads --run "$fx/ckpt" --dump-attention "$fx/att.json" >/dev/null &&
    "$bin" sweep "${small[@]}" --seeds 1-2 --db "$fx/s.db" 2>/dev/null &&
    "$bin" sweep "${small[@]}" --seeds 1 --measure none --db "$fx/plain.db" 2>/dev/null
} || { echo "abuse.sh: setting up the fixtures failed" >&2; exit 1; }
setup
for c in badcfg truncated noweights huge badhist; do cp -r "$fx/ckpt" "$fx/$c"; done
echo '{"format":1' >"$fx/badcfg/config.json"
w=$(stat -c %s "$fx/ckpt/model.safetensors")
truncate -s $((w / 2)) "$fx/truncated/model.safetensors"
rm "$fx/noweights/model.safetensors"
truncate -s 6G "$fx/huge/model.safetensors" # sparse: refused by its size
echo '[{"step":' >"$fx/badhist/history.json"
printf 'just text\n' >"$fx/text"
: >"$fx/empty"
head -c 4096 /dev/urandom >"$fx/random"
echo '{"causal": true, "tokens": [[1,2]], "attention": [[[[1]]]]}' >"$fx/att-shape.json"
echo '{"causal": true, "tokens": [[0,1]], "attention": [[[[1,0],[NaN,1]]]]}' >"$fx/att-nan.json"
# Databases that are not headlab's (python3's sqlite3: setup.sh installs
# python3), a headlab one that conflicts with s.db, and a checkpoint whose
# config.json asks for the largest model, its weights file a sparse one
# of the right size (refused from the memory loading it would take).
python3 - "$fx" <<'PY' || { echo "abuse.sh: making the database fixtures failed" >&2; exit 1; }
import shutil, sqlite3, sys
fx = sys.argv[1]
def make(name, *sql):
    c = sqlite3.connect(f"{fx}/{name}")
    for q in sql:
        c.execute(q)
    c.commit()
    c.close()
make("foreign.db", "CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('a')")
make("otherruns.db", "CREATE TABLE runs (id INTEGER, x TEXT)", "INSERT INTO runs VALUES (1, 'a')")
make("newer.db", "PRAGMA user_version = 999", "CREATE TABLE runs (id INTEGER)")
shutil.copy(f"{fx}/s.db", f"{fx}/conflict.db")
make("conflict.db", "UPDATE runs SET accuracy = accuracy + 0.1 WHERE seed = 1")
shutil.copy(f"{fx}/s.db", f"{fx}/extra.db")
make("extra.db", "CREATE TABLE notes (x TEXT)")
PY
# Shards beyond one machine (deploy/): two of different sweeps, and s.db
# with a page overwritten (a disk error), the runs table's root or an
# index's.
{ "$bin" sweep "${small[@]}" --seeds 1-2 --shard 0/2 --db "$fx/shard-a0.db" 2>/dev/null &&
  "$bin" sweep "${small[@]}" --seeds 1-3 --shard 1/2 --db "$fx/shard-b1.db" 2>/dev/null &&
  python3 - "$fx" <<'PY'; } || { echo "abuse.sh: making the shard fixtures failed" >&2; exit 1; }
import shutil, sqlite3, sys
fx = sys.argv[1]
for table in ("runs", "runs_task"):
    path = f"{fx}/damaged-{table}.db"
    shutil.copy(f"{fx}/s.db", path)
    c = sqlite3.connect(path)
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    size = c.execute("PRAGMA page_size").fetchone()[0]
    c.close()
    with open(path, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xa5" * size)
PY
cp -r "$fx/ckpt" "$fx/toobig"
python3 - "$fx/toobig" <<'PY' || { echo "abuse.sh: making the toobig fixture failed" >&2; exit 1; }
import json, sys
d = sys.argv[1]
c = json.load(open(f"{d}/config.json"))
for k in ("train", "model"):
    c[k].update(layers=64, heads=64, d_model=4096, d_ff=16384)
c.pop("result", None)
json.dump(c, open(f"{d}/config.json", "w"))
PY
# 12,888,481,424 parameters of 4 bytes, their 8-byte length and a header.
truncate -s 51554000000 "$fx/toobig/model.safetensors"
# Exports for import: the checkpoint's own (TransformerLens and hf), and
# TransformerLens files of models trained elsewhere (no headlab metadata),
# one clean and each of the others with a setting headlab cannot compute.
"$bin" export --run "$fx/ckpt" --out "$fx/tl.safetensors" >/dev/null &&
  "$bin" export --run "$fx/ckpt" --format hf --out "$fx/hf.safetensors" >/dev/null &&
  python3 - "$fx" <<'PY' || { echo "abuse.sh: making the import fixtures failed" >&2; exit 1; }
import json, struct, sys
fx = sys.argv[1]
blob = open(f"{fx}/tl.safetensors", "rb").read()
(n,) = struct.unpack("<Q", blob[:8])
header, data = json.loads(blob[8 : 8 + n]), blob[8 + n :]
for name, change in {"foreign": {}, "rotary": {"positional_embedding_type": "rotary"}, "noln": {"normalization_type": None},
                     "relu": {"act_fn": "relu"}, "parallel": {"parallel_attn_mlp": True}}.items():
    cfg = json.loads(header["__metadata__"]["hooked_transformer_config"])
    cfg.update(change)
    h = dict(header, __metadata__={"hooked_transformer_config": json.dumps(cfg)})
    text = json.dumps(h).encode()
    text += b" " * (-len(text) % 8)
    open(f"{fx}/{name}.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data)
PY
mkdir -p "$fx/notempty" "$play/dir" "$play/dir.safetensors" "$play/w.json"
echo mine >"$fx/notempty/notes.txt"
echo keep >"$play/file"

snapshot() {
  # Paths, kinds, sizes and times of everything; the content of every
  # file but the 6 GiB sparse one.
  # (A directory's time is left out: SQLite's journal comes and goes.)
  (cd "$work" && find fx play \( -type d -printf '%p %y\n' \) -o -printf '%p %y %s %T@\n' | sort &&
    find fx play -type f -size -64M -print0 | sort -z | xargs -0 sha256sum)
}

pass=0 fail=0
# expect STATUS ARGS...: run headlab with ARGS in $play and check the rules.
expect() {
  local want=$1
  shift
  local before after got err
  before=$(snapshot)
  (cd "$play" && "$bin" "$@" >"$work/out" 2>"$work/err" </dev/null)
  got=$?
  after=$(snapshot)
  err=$(cat "$work/err")
  local why=""
  if [ "$got" != "$want" ]; then why="exit $got, want $want"; fi
  if [ "$(wc -l <"$work/err")" != 1 ] || [[ $err != "headlab: "* ]]; then why="$why; stderr is not one 'headlab: ' line"; fi
  if grep -q -e 'panic' -e 'goroutine ' "$work/err"; then why="$why; a panic"; fi
  if [ -s "$work/out" ]; then why="$why; wrote to stdout"; fi
  if [ "$before" != "$after" ]; then why="$why; files changed: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"; fi
  if [ -n "$why" ]; then
    fail=$((fail + 1))
    echo "FAIL headlab $*: ${why#; } [stderr: $err]" >&2
  else
    pass=$((pass + 1))
  fi
}

# Top level.
expect 2 fly
expect 2 --bogus
expect 2 train extra-arg
HEADLAB_SIMD=bogus expect 2 train
HEADLAB_SIMD=bogus expect 2 --help

# train: the model, the run, the flags.
expect 2 train --heads 3
expect 2 train --heads 0
expect 2 train --heads 65 --d-model 65
expect 2 train --task sorting
expect 2 train --task ""
expect 2 train --layers 0
expect 2 train --layers 65
expect 2 train --d-model -8
expect 2 train --d-model 4097
expect 2 train --d-ff 0
expect 2 train --d-ff 16385
expect 2 train --batch 0
expect 2 train --batch 4097
expect 2 train --steps -5
expect 2 train --steps many
expect 2 train --steps 1e3
# sizes a task cannot take (docs/tasks.md), on every command that builds a model
expect 2 train --task induction --seq-len 31
expect 2 train --task induction --seq-len 16 --vocab 7
expect 2 train --task majority --vocab 40
expect 2 train --task agreement --vocab 21
expect 2 train --task modular-addition --seq-len 5
expect 2 train --task modular-addition --vocab 4
expect 2 train --task sort --seq-len 16
expect 2 train --task histogram --seq-len 10 --vocab 11
expect 2 train --seq-len 2000
expect 2 train --vocab -1
expect 2 train --seq-len x
expect 2 train --seeds 1-2 --seq-len 15
expect 2 sweep "${small[@]}" --db s.db --seeds 1 --grid 'seq-len=2'
expect 2 sweep "${small[@]}" --db s.db --seeds 1 --grid 'vocab=x'
expect 2 view --seq-len 15
# --task file:PATH: every defect of a data folder (docs/tasks.md)
mkdata() { # mkdata NAME TRAIN_LINES HELDOUT_LINES: a folder of JSONL
  mkdir -p "$fx/data/$1" && printf '%b' "$2" >"$fx/data/$1/train.jsonl" && printf '%b' "$3" >"$fx/data/$1/heldout.jsonl"
}
ok='{"tokens": [0, 1, 2], "targets": [null, 2, 0]}\n'
mkdata badjson "$ok{\"tokens\": [1,\n" "$ok"
mkdata ragged "$ok" '{"tokens": [0, 1, 2], "targets": [null, 2]}\n'
mkdata lengths "$ok" '{"tokens": [0, 1], "targets": [null, 1]}\n'
mkdata oov "$ok" "$ok" && printf 'a\nb\n' >"$fx/data/oov/vocab.txt"
mkdata noanswers "$ok" '{"tokens": [0, 1, 2], "targets": [null, null, null]}\n'
mkdata empty "" "$ok"
mkdata noheldout "$ok" "$ok" && rm "$fx/data/noheldout/heldout.jsonl"
mkdata good "$ok" "$ok" && printf 'a\nb\nc\n' >"$fx/data/good/vocab.txt"
for d in badjson ragged lengths oov noanswers empty noheldout absent; do expect 2 train --task "file:$fx/data/$d"; done
expect 2 train --task file:
expect 2 train --task "file:$fx/data/good" --vocab 4
expect 2 train --task "file:$fx/data/good" --seq-len 4
expect 2 sweep "${small[@]}" --db s.db --seeds 1 --grid "task=file:$fx/data/ragged"
expect 2 train --lr 0
expect 2 train --lr 1
expect 2 train --lr -0.1
expect 2 train --lr NaN
expect 2 train --lr Inf
expect 2 train --lr abc
expect 2 train --loss tokens
expect 2 train --loss ''
expect 2 train --train-examples -1
expect 2 train --train-examples 31
expect 2 train --train-examples 1000001
expect 2 train --train-examples x
expect 2 train --weight-decay -0.1
expect 2 train --weight-decay NaN
expect 2 train --weight-decay 400
expect 2 train --seed -1
expect 2 train --seed x
expect 2 train --bogus
expect 2 train --backend tpu
expect 2 train --progress-every 0
expect 2 train --record-every -1
expect 2 train --seeds 1-4 --save out
expect 2 train --seeds 1-4 --png out.png
expect 2 train --seeds 1-4 --seed 2
expect 2 train --seeds 5-1
expect 2 train --seeds ""
expect 2 train --seeds a
expect 2 train --seeds 1-2 --group 0
expect 2 train --save file
expect 2 train --save "$fx/notempty"
expect 2 train --save file/sub
expect 2 train --png dir
expect 2 train --arcs dir
expect 2 train --png missing/x.png
expect 2 train --png x.gif
expect 2 train --png /dev/null.gif
expect 2 train --save -
expect 2 train --png - --arcs -
expect 2 train --layers 64 --d-model 4096 --d-ff 16384 --heads 64
expect 2 train --seeds 1-64 --layers 64 --d-model 4096 --d-ff 16384 --heads 64

# heads and score: checkpoints and attention files.
expect 2 heads
expect 2 heads --run missing
expect 2 heads --run file
expect 2 heads --run "$fx/badcfg"
expect 2 heads --run "$fx/truncated"
expect 2 heads --run "$fx/noweights"
expect 2 heads --run "$fx/huge"
expect 2 heads --run "$fx/toobig"
expect 2 prune --run "$fx/toobig"
expect 2 export --run "$fx/toobig" --out e.safetensors
expect 2 heads --run "$fx/notempty"
expect 2 heads --run "$fx/ckpt" --ablate L9H9
expect 2 heads --run "$fx/ckpt" --ablate garbage
expect 2 heads --run "$fx/ckpt" --ablate L0H-1
expect 2 heads --run "$fx/ckpt" --ablation median
expect 2 heads --run "$fx/ckpt" --ablation ""
expect 2 heads --run "$fx/ckpt" --ablate L99999999999999999999H0
expect 2 heads --run "$fx/ckpt" --dump-attention dir
expect 2 heads --run "$fx/ckpt" --png dir
expect 2 heads --run "$fx/ckpt" --arcs missing/a.png
expect 2 heads --run "$fx/ckpt" --backend tpu
expect 2 heads --run "$fx/ckpt" extra
expect 2 score
expect 2 score --attention missing.json
expect 2 score --attention "$fx/empty"
expect 2 score --attention "$fx/text"
expect 2 score --attention "$fx/random"
expect 2 score --attention "$fx/att-shape.json"
expect 2 score --attention "$fx/att-nan.json"
expect 2 score --attention dir
expect 2 score --attention "$fx/att.json" --png dir
expect 2 score --attention "$fx/att.json" --arcs x.bmp
expect 2 heads --run "$fx/ckpt" --dump-attention - --html -
# The HTML view's circuit takes a share in (0, 1] (docs/viewer.md).
expect 2 heads --run "$fx/ckpt" --html "$play/p.html" --html-threshold 0
expect 2 heads --run "$fx/ckpt" --html "$play/p.html" --html-threshold 1.5
expect 2 heads --run "$fx/ckpt" --html "$play/p.html" --html-threshold NaN

# curves and prune.
expect 2 curves
expect 2 curves --run missing
expect 2 curves --run "$fx/nohist"
expect 2 curves --run "$fx/badhist"
expect 2 curves --run "$fx/ckpt" --png dir
expect 2 curves --run "$fx/ckpt" --png missing/c.png
expect 2 prune
expect 2 prune --run missing
expect 2 prune --run "$fx/ckpt" --examples 0
expect 2 prune --run "$fx/ckpt" --examples 1001
expect 2 prune --run "$fx/ckpt" --random-orders 0
expect 2 prune --run "$fx/truncated"
expect 2 prune --run "$fx/ckpt" --png dir
expect 2 prune --run "$fx/ckpt" --ablation median
expect 2 prune --run "$fx/ckpt" --ablation resample --examples 1

# patch and attribute (the fixture is majority: one block, positions 0..14,
# no first-half corruption).
expect 2 patch
expect 2 patch --run missing
expect 2 patch --run "$fx/truncated"
expect 2 patch --run "$fx/ckpt" extra
expect 2 patch --run "$fx/ckpt" --corruption first-half
expect 2 patch --run "$fx/ckpt" --corruption shuffle
expect 2 patch --run "$fx/ckpt" --layer 1
expect 2 patch --run "$fx/ckpt" --layer -2
expect 2 patch --run "$fx/ckpt" --position 15
expect 2 patch --run "$fx/ckpt" --position -3
expect 2 patch --run "$fx/ckpt" --examples 1
expect 2 patch --run "$fx/ckpt" --examples 1001
expect 2 patch --run "$fx/ckpt" --png dir
expect 2 patch --run "$fx/ckpt" --png p.txt
expect 2 patch --run "$fx/ckpt" --backend tpu
expect 2 attribute
expect 2 attribute --run "$fx/noweights"
expect 2 attribute --run "$fx/ckpt" --examples 0
expect 2 attribute --run "$fx/ckpt" --examples 1001
expect 2 attribute --run "$fx/ckpt" --png dir
expect 2 attribute --run "$fx/ckpt" --png a.txt

# export and dump.
expect 2 export
expect 2 export --run "$fx/ckpt"
expect 2 export --run missing --out e.safetensors
expect 2 export --run "$fx/truncated" --out e.safetensors
expect 2 export --run "$fx/ckpt" --out e.txt
expect 2 export --run "$fx/ckpt" --out e.safetensors --format keras
expect 2 export --run "$fx/ckpt" --out dir.safetensors
expect 2 export --run "$fx/ckpt" --out w.safetensors
expect 2 export --run "$fx/ckpt" --out missing/e.npz
expect 2 dump
expect 2 dump --run "$fx/ckpt" --out d.txt
expect 2 dump --run "$fx/ckpt" --out d.json --format csv
expect 2 dump --run "$fx/ckpt" --out d.json --examples 0
expect 2 dump --run "$fx/ckpt" --out d.json --examples 1001
expect 2 dump --run "$fx/ckpt" --out d.json --ablate L7H7
expect 2 dump --run "$fx/ckpt" --out dir.safetensors
expect 2 dump --run "$fx/noweights" --out d.json
expect 2 dump --run "$fx/ckpt" --out d.json --ablation median
expect 2 dump --run "$fx/ckpt" --out d.json --ablate L0H0 --ablation resample --examples 1
# import: flags, files that are not weights, models headlab cannot compute.
expect 2 import
expect 2 import --in "$fx/tl.safetensors"
expect 2 import --in missing.safetensors --out i --task majority
expect 2 import --in "$fx/text" --out i --task majority
expect 2 import --in "$fx/random" --out i --task majority
expect 2 import --in "$fx/huge/model.safetensors" --out i --task majority
expect 2 import --in "$fx/ckpt" --out i --task majority
expect 2 import --in "$fx/tl.safetensors" --out i --format gguf
expect 2 import --in "$fx/tl.safetensors" --out i --backend quantum
expect 2 import --in "$fx/tl.safetensors" --out file
expect 2 import --in "$fx/tl.safetensors" --out "$fx/notempty"
expect 2 import --in "$fx/hf.safetensors" --out i
expect 2 import --in "$fx/foreign.safetensors" --out i
expect 2 import --in "$fx/foreign.safetensors" --out i --task agreement
expect 2 import --in "$fx/foreign.safetensors" --out i --task sorting-hat
expect 2 import --in "$fx/rotary.safetensors" --out i --task majority
expect 2 import --in "$fx/noln.safetensors" --out i --task majority
expect 2 import --in "$fx/relu.safetensors" --out i --task majority
expect 2 import --in "$fx/parallel.safetensors" --out i --task majority
expect 2 import --format hf --in "$fx/tl.safetensors" --out i
# attention-only models: --no-mlp leaves no MLP to size.
expect 2 train --no-mlp --d-ff 64
expect 2 sweep "${small[@]}" --db s.db --seeds 1 --grid 'no-mlp=maybe'
# Outputs where nothing can be made: /proc passes access() for root, but
# no file can be created there.
expect 2 train "${small[@]}" --save /proc/x
expect 2 train "${small[@]}" --png /proc/x.png
expect 2 sweep "${small[@]}" --seeds 1 --db /proc/x.db
# circuit and plant: thresholds outside (0, 1], a direction, a task
# with no such corruption (the fixture is majority), planted kinds.
expect 2 circuit --run "$fx/ckpt" --threshold 0
expect 2 circuit --run "$fx/ckpt" --threshold 1.5
expect 2 circuit --run "$fx/ckpt" --threshold -0.2
expect 2 circuit --run "$fx/ckpt" --threshold NaN
expect 2 circuit --run "$fx/ckpt" --direction sideways
expect 2 circuit --run "$fx/ckpt" --corruption first-half
expect 2 circuit --run missing
expect 2 plant --kind bogus --out p
expect 2 plant --kind induction
expect 2 plant --kind induction --out /etc/passwd
expect 2 plant --kind induction --out p --corruption nope
expect 2 completion klingon
expect 2 version extra

# sweep: seeds, grids, shards, workers, the database path.
expect 2 sweep "${small[@]}"
expect 2 sweep "${small[@]}" --db dir
expect 2 sweep "${small[@]}" --db missing/s.db
expect 2 sweep "${small[@]}" --db -
expect 2 sweep "${small[@]}" --db s.db --seed 1
expect 2 sweep "${small[@]}" --db s.db --seeds 0-x
expect 2 sweep "${small[@]}" --db s.db --seeds 3-1
expect 2 sweep "${small[@]}" --db s.db --seeds 1,,2
expect 2 sweep "${small[@]}" --db s.db --grid 'layers='
expect 2 sweep "${small[@]}" --db s.db --grid 'colour=red'
expect 2 sweep "${small[@]}" --db s.db --grid 'layers=a'
expect 2 sweep "${small[@]}" --db s.db --grid 'layers=0'
expect 2 sweep "${small[@]}" --db s.db --grid 'positions=maybe'
expect 2 sweep "${small[@]}" --db s.db --grid 'layers=1;layers=2'
expect 2 sweep "${small[@]}" --db s.db --grid 'loss=next-token,tokens'
expect 2 sweep "${small[@]}" --db s.db --grid 'train-examples=-5'
expect 2 sweep "${small[@]}" --db s.db --grid 'weight-decay=-1'
expect 2 sweep "${small[@]}" --db s.db --loss all
expect 2 sweep "${small[@]}" --db s.db --shard 3/2
expect 2 sweep "${small[@]}" --db s.db --shard a/b
expect 2 sweep "${small[@]}" --db s.db --shard 0/0
expect 2 sweep "${small[@]}" --db s.db --shard -1/2
expect 2 sweep "${small[@]}" --db s.db --shard 1
expect 2 sweep "${small[@]}" --shard 0/2
expect 2 sweep "${small[@]}" --db s.db --workers 0
expect 2 sweep "${small[@]}" --db s.db --group 0
expect 2 sweep "${small[@]}" --db s.db --backend tpu
expect 2 sweep "${small[@]}" --db s.db --measure bogus
expect 2 sweep "${small[@]}" --db s.db --measure mean,mean
expect 2 sweep "${small[@]}" --db s.db --measure mean,,circuit
expect 2 sweep "${small[@]}" --db s.db --measure ''
expect 2 sweep "${small[@]}" --db s.db --measure all,none
expect 2 sweep "${small[@]}" --db s.db --ablation median
expect 2 sweep "${small[@]}" --db s.db --heads 3
JOB_COMPLETION_INDEX=5 JOB_COMPLETIONS=2 expect 2 sweep "${small[@]}" --db s.db
SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=2 expect 2 sweep "${small[@]}" --db s.db

# report and merge.
expect 2 report
expect 2 report --db missing.db
expect 2 report --db "$fx/s.db" --png file
expect 2 report --db "$fx/s.db" --against missing.db
expect 2 report --db "$fx/s.db" --csv -
expect 2 report --db dir
expect 2 merge
expect 2 merge --db out.db
expect 2 merge --db out.db missing.db
# Files that are not headlab databases, as OUT and as inputs: refused,
# byte for byte untouched, no OUT made.
for db in foreign otherruns newer extra; do
  expect 2 sweep "${small[@]}" --db "$fx/$db.db"
  expect 2 report --db "$fx/$db.db"
  expect 2 report --db "$fx/s.db" --against "$fx/$db.db"
  expect 2 merge --db "$fx/$db.db" "$fx/s.db"
  expect 2 merge --db out.db "$fx/$db.db"
done
expect 2 sweep "${small[@]}" --db "$fx/text"
expect 2 report --db "$fx/text"
expect 2 report --db "$fx/empty"
expect 2 merge --db out.db "$fx/empty"
expect 2 merge --db out.db "$fx/text"
expect 2 merge --db "$fx/text" "$fx/s.db"
expect 2 merge --db out.db "$fx/s.db" "$fx/conflict.db"
expect 2 merge --db dir "$fx/s.db"
# Beyond one machine: a pod without JOB_COMPLETIONS, a damaged shard
# (neither resumed nor merged), shards of two sweeps.
JOB_COMPLETION_INDEX=0 expect 2 sweep "${small[@]}" --db s.db
for db in damaged-runs damaged-runs_task; do
  expect 2 sweep "${small[@]}" --seeds 1-2 --db "$fx/$db.db"
  expect 2 merge --db out.db "$fx/s.db" "$fx/$db.db"
done
expect 2 merge --db out.db "$fx/shard-a0.db" "$fx/shard-b1.db"
expect 2 merge --db "$fx/shard-a0.db" "$fx/shard-b1.db"

# reproduce, view, bench.
expect 2 reproduce --seeds 0
expect 2 reproduce --small-seeds 0
expect 2 reproduce --steps-scale 0
expect 2 reproduce --steps-scale 11
expect 2 reproduce --workers 0
expect 2 reproduce --out file
expect 2 reproduce --backend tpu
expect 2 reproduce --loss tokens
expect 2 reproduce --atlas-seeds -1
expect 2 reproduce --quick --atlas-seeds 3
# atlas: a database with no signatures (--measure none, or an older schema).
expect 2 atlas
expect 2 atlas --db missing.db
expect 2 atlas --db "$fx/plain.db"
expect 2 atlas --db "$fx/s.db" --config nosuchkey
expect 2 atlas --db "$fx/s.db" --figure atlas.gif
expect 2 atlas --db "$fx/s.db" --csv dir
expect 2 view --loss tokens
expect 2 view --train-examples -3
expect 2 bench --loss tokens
expect 2 view --after-steps -1
expect 2 view --run "$fx/ckpt" --task copy
expect 2 view --run "$fx/ckpt" --after-steps 5
expect 2 view --run "$fx/ckpt" --loss answers
expect 2 view --run "$fx/ckpt" --tied-embeddings
expect 2 view --run missing
expect 2 view --heads 3
expect 2 view --screenshot dir
DISPLAY= expect 2 view --run "$fx/ckpt"
expect 2 bench --budget 0
expect 2 bench --batch 0
expect 2 bench --backends tpu
expect 2 bench --parts foo
expect 2 bench --groups 0
expect 2 bench --groups a
expect 2 bench --groups 1,1
expect 2 bench --steps -1
expect 2 bench --profile dir
expect 2 bench vs-pytorch --rounds 0 --profile p.prof
expect 2 bench vs-pytorch --workers 0
expect 2 bench vs-pytorch --steps -1
expect 2 bench vs-pytorch --loss all
expect 2 bench vs-pytorch extra
# The model flags of bench and bench vs-pytorch take what train takes.
expect 2 bench vs-pytorch --heads 3
expect 2 bench vs-pytorch --seq-len 15
expect 2 bench vs-pytorch --seq-len 64 --vocab 16
expect 2 bench vs-pytorch --layers 0
expect 2 bench vs-pytorch --batches 32,0
expect 2 bench --parts model --heads 3
expect 2 bench --seq-len 15
expect 2 bench --layers 0
# bench and bench vs-pytorch each refuse a flag only the other reads; the
# old --vs-pytorch names the command that replaced it.
expect 2 bench --vs-pytorch
expect 2 bench vs-pytorch --backends cpu
expect 2 bench vs-pytorch --parts groups
expect 2 bench vs-pytorch --groups 4
expect 2 bench vs-pytorch --batch 32
expect 2 bench vs-pytorch --max-step 1s
expect 2 bench vs-pytorch --vs-pytorch
expect 2 bench --rounds 3
expect 2 bench --python python3
expect 2 bench --callgrind=false
expect 2 bench --workers 2 --parts model

# The GL device (README: HEADLAB_EGL_DEVICE): one that does not exist is
# bad input on --backend gl, whether or not this machine has GL; and
# where EGL lists devices here (the refusal says so), also where GL is
# optional: --backend auto and bench's default --backends all.
for dev in 99 x -1; do
  DISPLAY= HEADLAB_GL_CONTEXT= HEADLAB_EGL_DEVICE=$dev expect 2 train --backend gl --steps 1
  DISPLAY= HEADLAB_GL_CONTEXT= HEADLAB_EGL_DEVICE=$dev expect 2 sweep "${small[@]}" --db s.db --backend gl
done
glerr=$(DISPLAY= HEADLAB_GL_CONTEXT= HEADLAB_EGL_DEVICE=99 "$bin" train --backend gl --steps 1 2>&1 >/dev/null)
if [[ $glerr == *"HEADLAB_EGL_DEVICE=99: want"* ]]; then
  for dev in 99 x; do
    DISPLAY= HEADLAB_GL_CONTEXT= HEADLAB_EGL_DEVICE=$dev expect 2 train --backend auto --steps 1
    DISPLAY= HEADLAB_GL_CONTEXT= HEADLAB_EGL_DEVICE=$dev expect 2 sweep "${small[@]}" --db s.db --backend auto
    DISPLAY= HEADLAB_GL_CONTEXT= HEADLAB_EGL_DEVICE=$dev expect 2 bench --parts groups --groups 1 --steps 1
  done
else
  echo "abuse.sh: EGL lists no devices here; the HEADLAB_EGL_DEVICE cases for auto are not run" >&2
fi

# An unprivileged user (we may run as root) writing where it may not.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
  chmod -R a+rX "$fx" && chmod 755 "$play"
  run_nobody() {
    local want=$1
    shift
    local before after got
    before=$(snapshot)
    (cd "$play" && setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" "$@" >"$work/out" 2>"$work/err" </dev/null)
    got=$?
    after=$(snapshot)
    if [ "$got" = "$want" ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q 'cannot write' "$work/err" && [ "$before" = "$after" ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAIL (as nobody) headlab $*: exit $got [stderr: $(cat "$work/err")]" >&2
    fi
  }
  run_nobody 2 train "${small[@]}" --save ro-ckpt
  run_nobody 2 train "${small[@]}" --png ro.png
  run_nobody 2 heads --run "$fx/ckpt" --dump-attention ro.json
  run_nobody 2 sweep "${small[@]}" --db ro.db
  run_nobody 2 report --db "$fx/s.db" --png ro-hist
  run_nobody 2 report --db "$fx/s.db" --csv ro-csv
  run_nobody 2 export --run "$fx/ckpt" --out ro.safetensors
  run_nobody 2 dump --run "$fx/ckpt" --out ro.json
  run_nobody 2 merge --db ro-merged.db "$fx/s.db"
  run_nobody 2 bench --profile ro.prof
  run_nobody 2 curves --run "$fx/ckpt" --png ro-curves.png
  run_nobody 2 reproduce --out ro-findings
fi

# An interrupted run exits 130, after SIGINT (the shell's 128 + SIGINT)
# and after SIGTERM alike. (set -m: a background job of a script would
# otherwise start with SIGINT ignored.)
set -m
for sig in INT TERM; do
  for cmd in "train --task induction --steps 1000000 --quiet" "sweep --task majority --seeds 1-50 --steps 300 --workers 1 --db int.db"; do
    (cd "$play" && exec "$bin" $cmd 2>/dev/null) &
    pid=$!
    sleep 1
    kill -"$sig" "$pid"
    wait "$pid"
    got=$?
    if [ "$got" = 130 ]; then pass=$((pass + 1)); else
      fail=$((fail + 1))
      echo "FAIL $cmd after SIG$sig: exit $got, want 130" >&2
    fi
    rm -f "$play/int.db"
  done
done
set +m

echo "abuse.sh: $pass passed, $fail failed"
[ "$fail" = 0 ]
