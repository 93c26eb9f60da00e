#!/usr/bin/env bash
# The GPU check, for a GPU server without X (EGL), with no Go: run from a
# folder holding bin/headlab (scripts/build.sh's output, or go build) and,
# if the server lacks them, the runtime .deb files scripts/gpu-debs.sh
# fetches into debs/. Writes into $OUT (default gpu-check/):
#   bench.json      headlab bench --groups (both backends, the group curve)
#   cpu.db, gl.db   the same whole-run sweep of $SEEDS seeds on each backend
#   parity.txt      the comparison docs/model.md asks for
# SEEDS (default 32), STEPS (default: the task's) and SIZES (default
# 1,4,16,64,256,1024) trim it for a quick look.
set -euo pipefail
out=${OUT:-gpu-check}
bin=${HEADLAB:-bin/headlab}
seeds=${SEEDS:-32}
sizes=${SIZES:-1,4,16,64,256,1024}
mkdir -p "$out"
if ! ldconfig -p | grep -q 'libEGL.so.1 ' && compgen -G "debs/*.deb" >/dev/null; then
  dpkg -i debs/*.deb >"$out/dpkg.log" 2>&1
fi
steps=()
[ -n "${STEPS:-}" ] && steps=(--steps "$STEPS")
unset DISPLAY
"$bin" bench --parts groups --groups "$sizes" --backends cpu,gl --max-step 60s --json >"$out/bench.json"
for be in gl cpu; do
  rm -f "$out/$be.db"
  "$bin" sweep --backend "$be" --task induction --seeds "1-$seeds" "${steps[@]}" --db "$out/$be.db" --quiet
done
# Exits 1 when the backends differ; the figures are in $OUT either way.
"$bin" report --db "$out/gl.db" --against "$out/cpu.db" >"$out/parity.txt" || status=$?
cat "$out/parity.txt"
exit "${status:-0}"
