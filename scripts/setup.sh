#!/usr/bin/env bash
# Installs what headlab needs on a fresh Debian machine: the C toolchain and
# GL/X11 headers for cgo, Xvfb and Mesa for running GL without a screen,
# numpy (the export check, tools/interop_ref.py), Chromium (the HTML view's
# test), and the Go modules. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(gcc pkg-config libgl-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev
  libxi-dev libxxf86vm-dev xvfb xauth libgl1-mesa-dri python3 qemu-user-static libegl-dev libegl1 libegl-mesa0
  python3-numpy chromium valgrind)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi
command -v go >/dev/null 2>&1 || { echo "setup: Go is not installed (need Go 1.26: https://go.dev/dl/)" >&2; exit 1; }
go mod download
