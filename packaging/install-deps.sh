#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs, with apt, the Debian 12 packages Fusion Explorer needs that are not yet installed.
# Idempotent: a second run installs nothing. Run as root (or with sudo available).
#   packaging/install-deps.sh            build + test dependencies
#   packaging/install-deps.sh --bench    also what bench/ needs (torchvision, onnx python, node)
#   packaging/install-deps.sh --docs     also Chromium, to screenshot the HTML report headless
#   packaging/install-deps.sh --release  also debootstrap, for packaging/check_fresh_install.sh
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config git
  # core libraries
  libonnx-dev libprotobuf-dev protobuf-compiler libspdlog-dev libfmt-dev
  nlohmann-json3-dev libcli11-dev libdnnl-dev
  # GUI
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libgl-dev libgraphviz-dev
  # tests: GoogleTest, ONNX's own test data, a virtual X server for GUI tests
  libgtest-dev libgmock-dev libonnx-testdata xvfb xauth
  # packaging (the package test checks the .deb with lintian and validators)
  dpkg-dev file lintian desktop-file-utils appstream
)
if [[ " $* " == *" --bench "* ]]; then
  packages+=(python3-torchvision python3-onnx python3-numpy nodejs npm)
fi
if [[ " $* " == *" --docs "* ]]; then
  packages+=(chromium)
fi
if [[ " $* " == *" --release "* ]]; then
  packages+=(debootstrap)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # a package satisfied under another name (e.g. nodejs providing npm) is not missing
    if [[ "$p" == npm ]] && command -v npm >/dev/null 2>&1; then continue; fi
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
