#!/usr/bin/env bash
# Fetches into debs/ the Debian packages bin/headlab needs at load time on
# a bare GPU server (the vendor's driver brings the GL implementation
# itself): scripts/gpu-check.sh installs them there when libEGL is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p debs
cd debs
apt-get download libegl1 libgl1 libglx0 libglvnd0 libopengl0 libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0
ls -l
