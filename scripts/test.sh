#!/usr/bin/env bash
# Sets everything up and runs every check: gofmt, go vet, staticcheck and
# the tests (GL ones included) under a virtual X server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go tool staticcheck ./...

# GL tests need a display: give them a virtual one with Mesa's llvmpipe.
exec xvfb-run -a -s "-screen 0 1280x1024x24" go test -count=1 -timeout 30m "$@" ./...
