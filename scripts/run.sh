#!/usr/bin/env bash
# Sets everything up, builds headlab and trains the default model: induction,
# 2 layers x 2 heads, seed 1, 2500 steps. Extra arguments go to `headlab train`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
mkdir -p bin
# GOFLAGS=-buildvcs=false builds carry no VCS stamp: name the revision here.
rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
go build -ldflags "-X headlab/internal/version.revision=$rev" -o bin/headlab ./cmd/headlab
exec bin/headlab train --task induction "$@"
