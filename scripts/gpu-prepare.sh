#!/usr/bin/env bash
# Prepares what a bare GPU server needs beside the working tree, in
# gpu-carry/ (git-ignored, so it travels only when named in the device
# tool's carry):
#   headlab.gz      the CLI, built with -trimpath -ldflags '-s -w', gzip'd
#   gl.test.gz      go test -c of backend/gl (the GL kernel tests), likewise
#   glctx.test.gz   go test -c of glctx (contexts and device choice), likewise
#   debs/*.deb      the GL loaders and X11 libraries (scripts/gpu-debs.sh)
#   MANIFEST        revision, Go version, sizes and sha256 of each file
# and checks that everything that travels (tracked files, untracked files
# git does not ignore, and gpu-carry/) fits the tool's 64 MiB. Then, on
# the server: `bash scripts/gpu-check.sh` with carry ["gpu-carry"].
# Takes a few minutes here (cgo and the test binaries); the folder is
# replaced only when everything is built.
#
#   scripts/gpu-prepare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
dest=gpu-carry
cap=$((64 * 1024 * 1024))
tmp=$(mktemp -d "$PWD/.gpu-carry.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=""
if git status --porcelain --untracked-files=no 2>/dev/null | grep -q .; then dirty=" (with uncommitted changes)"; fi
flags=(-trimpath -ldflags "-s -w -X headlab/internal/version.revision=$rev")
echo "gpu-prepare.sh: building headlab and the GL test binaries at $rev$dirty..." >&2
GOOS=linux GOARCH=amd64 CGO_ENABLED=1 go build "${flags[@]}" -o "$tmp/headlab" ./cmd/headlab
GOOS=linux GOARCH=amd64 CGO_ENABLED=1 go test -c "${flags[@]}" -o "$tmp/gl.test" ./backend/gl
GOOS=linux GOARCH=amd64 CGO_ENABLED=1 go test -c "${flags[@]}" -o "$tmp/glctx.test" ./glctx
gzip -6 "$tmp/headlab" "$tmp/gl.test" "$tmp/glctx.test"
scripts/gpu-debs.sh "$tmp/debs" >/dev/null

{
  echo "revision $rev$dirty"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go version | cut -d' ' -f3-) on $(uname -m)"
  (cd "$tmp" && find . -type f ! -name MANIFEST -printf '%P\n' | sort | while read -r f; do
    printf '%s %s %s\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "$f"
  done)
} >"$tmp/MANIFEST"

# What travels: the tracked files, the untracked ones git does not
# ignore, and this folder (the tool's own accounting, README of the
# device tool).
bytes() { xargs -0 -r stat -c %s -- 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
tree=$(git ls-files -z | bytes)
untracked=$(git ls-files -z --others --exclude-standard | bytes)
shared=0 # a shared/ folder in the checkout travels too, ignored or not
if [ -d shared ]; then shared=$(find shared -type f -print0 | bytes); fi
carried=$(find "$tmp" -type f -print0 | bytes)
total=$((tree + untracked + shared + carried))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo "gpu-prepare.sh: tracked files $(mib "$tree"), untracked $(mib "$untracked"), shared/ $(mib "$shared"), $dest/ $(mib "$carried"): $(mib "$total") of the 64 MiB that may travel" >&2
if ((total > cap)); then
  echo "gpu-prepare.sh: $(mib "$total") is over the 64 MiB the device tool carries; $dest/ left as it was" >&2
  exit 1
fi
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
cat "$dest/MANIFEST"
echo "gpu-prepare.sh: ready: run \`bash scripts/gpu-check.sh\` on the device with carry [\"$dest\"]" >&2
