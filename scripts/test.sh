#!/usr/bin/env bash
# Sets everything up and runs every check: gofmt, go vet, staticcheck and
# the tests (GL ones included) under a virtual X server.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go tool staticcheck ./...

# `headlab version` names the revision even when GOFLAGS=-buildvcs=false
# leaves the build info without one: it is set at link time.
rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
verbin=$(mktemp)
go build -ldflags "-X headlab/internal/version.revision=$rev" -o "$verbin" ./cmd/headlab
"$verbin" version | grep -qF "revision $rev" || { echo "test.sh: headlab version does not print revision $rev" >&2; exit 1; }
rm -f "$verbin"

# Every test, the viewer's under a virtual display with Mesa's llvmpipe;
# the GL compute tests make their context through EGL there (the default
# for a device without a window).
# -noreset: by default Xvfb resets whenever its last client leaves, and a
# client that connects during the reset fails with "Failed to open display"
# (seen about once in 30 back-to-back GLFW tests on 2 busy cores; never
# with -noreset). -maxclients: the viewer, GLFW and chromium tests connect
# many times over one server's life; 512 leaves room above the default 256.
xvfb=(xvfb-run -a -s "-screen 0 1280x1024x24 -maxclients 512 -noreset")
# Every go test run below goes through gotestsum (a go tool of go.mod),
# which prints go test's own output and keeps each test's time in
# $times/NAME.json: the slowest ten are printed at the end.
times=$(mktemp -d)
gotestsum=(go tool gotestsum --format standard-quiet --jsonfile)
"${xvfb[@]}" "${gotestsum[@]}" "$times/all.json" -- -count=1 -timeout 30m "$@" ./...
# Bad input across every command (one binary, ~20 s): exit status, one
# line, no panic, nothing written or left behind.
scripts/abuse.sh
# Sweeps under a real one-node Slurm (~30 s): an array, a requeued task
# and a dependent merge equal to a one-machine sweep (scripts/cluster-test.sh).
scripts/cluster-test.sh
# The Kubernetes manifests against Kubernetes' own Job type: a module of
# its own (deploy/k8scheck), so the main build does not carry k8s.io.
sc=$(go tool -n staticcheck)
(cd deploy/k8scheck && go vet ./... && "$sc" ./... && go test -count=1 ./...)
# Fuzz what reads user input (seed corpora in */testdata/fuzz/), a few
# seconds each. Budgets are counts of inputs, not durations: Go 1.26's
# coordinator can fail a -fuzztime=<duration> run at its deadline with
# "context deadline exceeded" on a loaded machine (go.dev/issue/75804,
# fixed in Go 1.27), and a count has no deadline. Minimizing a new input
# is capped the same way.
fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "$3" -fuzzminimizetime 200x "$1"; }
fuzz ./analysis/ FuzzReadAttention 60000x
fuzz ./sweep/ FuzzParseSeeds 15000x
fuzz ./sweep/ FuzzParseGrid 15000x
fuzz ./sweep/ FuzzParseShard 15000x
fuzz ./analysis/ FuzzParseHeads 150000x
fuzz ./train/ FuzzDecode 20000x

# The GL compute tests again on the other context path, GLFW's hidden
# window, and once more with no display at all (EGL only).
compute=(./glctx/ ./backend/gl/ ./bench/)
HEADLAB_GL_CONTEXT=glfw "${xvfb[@]}" \
  "${gotestsum[@]}" "$times/glfw.json" -- -count=1 -timeout 30m "$@" "${compute[@]}"
HEADLAB_GL_CONTEXT=glfw "${xvfb[@]}" \
  "${gotestsum[@]}" "$times/glfw-cmd.json" -- -count=1 -timeout 30m -run 'TestGLGroup|TestGLBad|Bench' "$@" ./cmd/headlab/
env -u DISPLAY "${gotestsum[@]}" "$times/egl.json" -- -count=1 -timeout 30m "$@" "${compute[@]}"
# The CPU's numbers on each vector path this machine can run (HEADLAB_SIMD;
# docs/model.md): the kernels, the model and training.
# runs_path P: whether this CPU runs vector path P (headlab refuses one it
# cannot).
runs_path() { HEADLAB_SIMD=$1 go run ./cmd/headlab --help >/dev/null 2>&1; }
# The path this CPU takes by default (the best it runs) was tested by the
# run of every package above, so only the others run here.
default=go
for path in avx512 avx2 neon; do
  if runs_path "$path"; then default=$path; break; fi
done
numeric=(./internal/simd/ ./backend/cpu/ ./graph/ ./train/ ./sweep/)
for path in avx2 go; do
  if [ "$path" != "$default" ] && runs_path "$path"; then
    HEADLAB_SIMD=$path "${gotestsum[@]}" "$times/simd-$path.json" -- -count=1 -timeout 30m "$@" "${numeric[@]}"
  fi
done

# A short fuzz of the sweep database opener: arbitrary bytes as a file
# (corpus in sweep/testdata/fuzz/FuzzOpen).
fuzz ./sweep/ FuzzOpen 5000x

# The AVX-512 path on an x86 CPU without it: emulated in Bochs, its
# kernels' tests and 50 training steps held to the avx2 path's bits. Bochs
# keeps one core busy for about 2 minutes, so it runs beside the arm64
# tests below; its output follows theirs.
emu=""
if [ "$(uname -m)" = x86_64 ] && ! runs_path avx512; then
  emulog=$(mktemp)
  scripts/avx512-emu.sh >"$emulog" 2>&1 &
  emu=$!
fi

# arm64 under emulation (qemu-user-static, installed by setup.sh): the
# packages that need no cgo, built as arm64 test binaries and run from
# their own directories, -test.short. internal/simd runs on both paths
# (neon, the arm64 default, and go). Skipped here: TestForcePath and
# train's TestKillDuringSave, which
# exec their own binary (impossible without a binfmt_misc entry for
# aarch64); train's TestLearnsEveryTask (minutes under emulation; ~12 s
# natively). Gorgonia is built without FMA fusion (-d=fmahash=n) because
# TestAdamMatchesGorgonia compares headlab's unfused Adam bit for bit with
# Gorgonia's, which the compiler fuses on arm64.
if command -v qemu-aarch64-static >/dev/null 2>&1; then
  armdir=$(mktemp -d)
  trap 'rm -rf "$armdir"' EXIT
  simdskip='^$' trainskip='^TestLearnsEveryTask$'
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    # These exec their own binary, which needs a binfmt_misc entry.
    simdskip='^TestForcePath$' trainskip='^(TestLearnsEveryTask|TestKillDuringSave)$'
  fi
  for pkg in internal/simd graph train analysis tasks; do
    flags=()
    if [ "$pkg" = train ]; then flags=(-gcflags='gorgonia.org/...=-d=fmahash=n'); fi
    GOARCH=arm64 CGO_ENABLED=0 go test -c "${flags[@]}" -o "$armdir/${pkg//\//_}.test" "./$pkg/" 2>&1 |
      { grep -v -e 'fmahash triggered' -e 'bisect-match' || true; } >&2
  done
  run_arm64() { # pkg path skip
    (cd "$1" && env HEADLAB_SIMD="$2" qemu-aarch64-static "$armdir/${1//\//_}.test" -test.short -test.skip "$3")
  }
  run_arm64 internal/simd neon "$simdskip"
  run_arm64 internal/simd go "$simdskip"
  run_arm64 graph neon '^$'
  run_arm64 train neon "$trainskip"
  run_arm64 analysis neon '^$'
  run_arm64 tasks neon '^$'
elif [ -n "${CI:-}" ]; then
  echo "test.sh: qemu-aarch64-static not found (scripts/setup.sh installs qemu-user-static)" >&2
  exit 1
else
  echo "test.sh: qemu-aarch64-static not found; skipping the arm64 tests" >&2
fi

if [ -n "$emu" ]; then
  status=0
  wait "$emu" || status=$?
  cat "$emulog"
  rm -f "$emulog"
  [ "$status" = 0 ] || exit "$status"
fi

# The slowest ten tests of every run above (go test's own times).
cat "$times"/*.json >"$times/every"
echo "test.sh: the slowest ten tests:"
go tool gotestsum tool slowest --jsonfile "$times/every" --num 10
rm -rf "$times"
