#!/usr/bin/env bash
# Fetches the Debian packages that bin/headlab and its test binaries load
# at start on a bare GPU server (the vendor's driver brings the GL
# implementation itself): glvnd's libEGL, libGL, libGLX and
# libGLdispatch, libOpenGL, and libX11 with what it links. ~1.6 MB.
# scripts/gpu-check.sh unpacks them there with dpkg -x into a folder of
# its own and uses those the system lacks; scripts/gpu-prepare.sh calls
# this for gpu-carry/debs.
#
#   scripts/gpu-debs.sh [DIR]     (default: debs/)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-debs}
if [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "gpu-debs.sh: this machine's packages are $(dpkg --print-architecture); the GPU server needs amd64" >&2
  exit 2
fi
mkdir -p "$dir"
cd "$dir"
# As the calling user: apt's _apt sandbox user may not reach DIR.
apt-get -o APT::Sandbox::User="$(id -un)" download libegl1 libgl1 libglx0 libglvnd0 libopengl0 libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0
ls -l
