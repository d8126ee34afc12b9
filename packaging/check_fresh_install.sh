#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Release check: install the .deb with apt into a fresh, minimal Debian 12 (debootstrap)
# and run the installed programs there. Proves that the package's computed
# dependencies are enough on a machine that has never seen a build tree.
#
#   sudo packaging/check_fresh_install.sh path/to/fusion-explorer_VERSION_ARCH.deb
#
# Needs root, debootstrap (apt-get install debootstrap) and a Debian mirror
# (FX_DEBIAN_MIRROR, default http://deb.debian.org/debian). Downloaded .debs are kept in
# FX_DEBOOTSTRAP_CACHE (default /var/cache/fusion-explorer/debootstrap) so a second run
# downloads less. Not part of ctest: it takes minutes and needs the network.
# Documented in docs/packaging.md.
set -euo pipefail

deb=${1:?usage: check_fresh_install.sh FUSION_EXPLORER.deb}
[[ -f $deb ]] || { echo "check_fresh_install: $deb: no such file" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "check_fresh_install: must run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "check_fresh_install: debootstrap missing (apt-get install debootstrap)" >&2; exit 2; }
mirror=${FX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${FX_DEBOOTSTRAP_CACHE:-/var/cache/fusion-explorer/debootstrap}
mkdir -p "$cache"

root=$(mktemp -d /var/tmp/fx-fresh-install.XXXXXX)
chmod 755 "$root"  # the chroot's / (mktemp makes it 0700, which locks out _apt)
cleanup() {
  # Unmount (debootstrap and we may have stacked mounts) before deleting, and never
  # delete while anything below $root is still mounted.
  local m
  for m in "$root/dev/pts" "$root/sys" "$root/proc"; do
    for _ in 1 2 3 4; do mountpoint -q "$m" 2>/dev/null && umount -l "$m" || break; done
  done
  if grep -q " $root/" /proc/mounts; then
    echo "check_fresh_install: mounts left under $root, not deleting it" >&2
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT INT TERM

t0=$(date +%s)
step() { echo "== [$(($(date +%s) - t0)) s] $*"; }
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

step "debootstrap --variant=minbase bookworm into $root ($mirror)"
debootstrap --variant=minbase --cache-dir="$cache" bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
  || { tail -20 "$root.debootstrap.log"; rm -f "$root.debootstrap.log"; exit 1; }
rm -f "$root.debootstrap.log"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# the minimal system must not already hold what the package brings
for lib in libqt6widgets6 libonnx1 libdnnl2; do
  if in_root dpkg-query -W "$lib" >/dev/null 2>&1; then echo "fresh root already has $lib" >&2; exit 1; fi
done

step "apt-get install -y ./$(basename "$deb") (as a user would: with Recommends)"
cp "$deb" "$root/tmp/"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "./tmp/$(basename "$deb")" \
  >"$root/tmp/apt.log" 2>&1 || { tail -30 "$root/tmp/apt.log"; exit 1; }
grep -E '^(Need to get|After this operation|[0-9]+ upgraded)' "$root/tmp/apt.log" || true
echo "installed: $(in_root dpkg-query -W -f='${Package} ${Version}' fusion-explorer)"

fail=0
check() {  # check NAME EXPECTED_REGEX COMMAND...
  local name=$1 want=$2; shift 2
  local out
  if out=$(in_root "$@" 2>&1) && grep -qE "$want" <<<"$out"; then
    echo "ok   $name: $(grep -m1 -E "$want" <<<"$out")"
  else
    echo "FAIL $name"; sed 's/^/     /' <<<"$out" | tail -15; fail=1
  fi
}
step "running the installed programs"
check "fxc --version" '^fxc \(Fusion Explorer\) ' fxc --version
check "fusion-explorer --version" '^fusion-explorer ' env QT_QPA_PLATFORM=offscreen fusion-explorer --version
sample=/usr/share/fusion-explorer/samples/tiny_cnn.onnx
check "fxc inspect $sample" '^Nodes +18 ' fxc inspect "$sample"
check "fxc analyze $sample --device nvidia-h100" '^Kernels +18 -> ' fxc analyze "$sample" --device nvidia-h100 --opt-level 2
check "fxc why (a missing node is a clear error, exit 2)" 'no node|not found|unknown' \
  sh -c "fxc why $sample no_such_node conv1; [ \$? -eq 2 ]"
check "man page fxc(1) is installed" 'fxc\.1\.gz' dpkg -L fusion-explorer
check "bash completion completes 'fxc an'" '^analyze$' \
  bash -c 'source /usr/share/bash-completion/completions/fxc && COMP_WORDS=(fxc an) COMP_CWORD=1 && _fxc && echo "${COMPREPLY[*]}"'

step "done: $([[ $fail -eq 0 ]] && echo PASS || echo FAIL), $(($(date +%s) - t0)) s in all"
exit $fail
