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

# Every test, the viewer's under a virtual display with Mesa's llvmpipe;
# the GL compute tests make their context through EGL there (the default
# for a device without a window).
xvfb-run -a -s "-screen 0 1280x1024x24" go test -count=1 -timeout 30m "$@" ./...
# The GL compute tests again on the other context path, GLFW's hidden
# window, and once more with no display at all (EGL only).
compute=(./glctx/ ./backend/gl/ ./bench/)
HEADLAB_GL_CONTEXT=glfw xvfb-run -a -s "-screen 0 1280x1024x24" \
  go test -count=1 -timeout 30m "$@" "${compute[@]}"
HEADLAB_GL_CONTEXT=glfw xvfb-run -a -s "-screen 0 1280x1024x24" \
  go test -count=1 -timeout 30m -run 'TestGLGroup|TestGLBad|Bench' "$@" ./cmd/headlab/
env -u DISPLAY go test -count=1 -timeout 30m "$@" "${compute[@]}"
# The CPU's numbers on each vector path this machine can run (HEADLAB_SIMD;
# docs/model.md): the kernels, the model and training.
numeric=(./internal/simd/ ./backend/cpu/ ./graph/ ./train/ ./sweep/)
for path in avx2 go; do
  if HEADLAB_SIMD=$path go run ./cmd/headlab --help >/dev/null 2>&1; then
    HEADLAB_SIMD=$path go test -count=1 -timeout 30m "$@" "${numeric[@]}"
  fi
done
