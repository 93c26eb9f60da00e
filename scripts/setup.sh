#!/usr/bin/env bash
# Installs what headlab needs on a fresh Debian machine, and no more:
#
#   scripts/setup.sh        (run) the C toolchain (gcc and libc6-dev:
#                           --no-install-recommends leaves gcc without the
#                           C library's headers) and the GL/X11/EGL headers
#                           that building headlab (cgo) needs, and the CA
#                           certificates the Go module proxy is fetched
#                           over, and the Go modules the build needs
#   scripts/setup.sh test   the above, and what the tests need: Xvfb and
#                           Mesa for running GL without a screen, numpy
#                           (the export checks), Chromium (the HTML view's
#                           test), valgrind (instruction counts),
#                           qemu-user-static (the arm64 tests), Bochs with
#                           isolinux, xorriso and cpio (the AVX-512 path,
#                           emulated: scripts/avx512-emu.sh; bochs-term is
#                           the smallest of the front ends Bochs depends
#                           on one of), python3-torch (the import test
#                           trains a model in PyTorch), poppler-utils (pdftotext
#                           reads the figures' PDF text), slurm-wlm and
#                           munge (scripts/cluster-test.sh: a one-node
#                           Slurm), and every Go module, deploy/k8scheck's
#                           included
#
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
packages=(gcc libc6-dev ca-certificates pkg-config libgl-dev libegl-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev
  libxi-dev libxxf86vm-dev)
case "$mode" in
run) ;;
test)
  packages+=(xvfb xauth libgl1-mesa-dri libegl1 libegl-mesa0 python3 python3-numpy qemu-user-static chromium valgrind
    bochs bochs-term bochsbios vgabios isolinux syslinux-common xorriso cpio
    python3-torch poppler-utils slurm-wlm munge)
  ;;
*)
  echo "setup: unknown mode $mode (run or test)" >&2
  exit 2
  ;;
esac
if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi
command -v go >/dev/null 2>&1 || { echo "setup: Go is not installed (need Go 1.26: https://go.dev/dl/)" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_install() {
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  # The module proxy is fetched over HTTPS: its certificates come first.
  if [[ " ${missing[*]} " == *" ca-certificates "* ]]; then
    apt_install ca-certificates
  fi
fi

# The Go modules download while apt installs the rest: fetching needs no C
# toolchain, and on a fresh machine the two take about as long. run needs
# the modules the binary is built from (CGO_ENABLED=1: without gcc yet, go
# would leave the cgo packages' imports out), test every module.
fetchlog=$(mktemp)
trap 'rm -f "$fetchlog"' EXIT
if [ "$mode" = test ]; then
  { go mod download && (cd deploy/k8scheck && go mod download); } >"$fetchlog" 2>&1 &
else
  CGO_ENABLED=1 go list -deps ./cmd/headlab >/dev/null 2>"$fetchlog" &
fi
fetch=$!
if [ ${#missing[@]} -gt 0 ]; then
  apt_install "${missing[@]}"
fi
if ! wait "$fetch"; then
  echo "setup: fetching the Go modules failed:" >&2
  cat "$fetchlog" >&2
  exit 1
fi
