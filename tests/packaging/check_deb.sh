#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_deb.sh BUILD_DIR: cpack -G DEB, then check the package's files, its computed
# dependencies, that fxc and fusion-explorer answer --version from the package, that the
# packaged fxc reads the packaged sample and device profiles, and (when lintian is
# installed, as packaging/install-deps.sh does) that lintian, desktop-file-validate and
# appstreamcli find no error.
set -euo pipefail
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/fusion-explorer_*.deb)
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$work/files"
fail=0
for f in /usr/bin/fxc /usr/bin/fusion-explorer \
         /usr/share/applications/fusion-explorer.desktop \
         /usr/share/metainfo/io.github.fusion_explorer.metainfo.xml \
         /usr/share/icons/hicolor/scalable/apps/fusion-explorer.svg \
         /usr/share/icons/hicolor/16x16/apps/fusion-explorer.png \
         /usr/share/icons/hicolor/48x48/apps/fusion-explorer.png \
         /usr/share/icons/hicolor/256x256/apps/fusion-explorer.png \
         /usr/share/man/man1/fxc.1.gz \
         /usr/share/man/man1/fusion-explorer.1.gz \
         /usr/share/doc/fusion-explorer/copyright \
         /usr/share/doc/fusion-explorer/changelog.gz \
         /usr/share/fusion-explorer/devices/nvidia-h100.json \
         /usr/share/bash-completion/completions/fxc \
         /usr/share/fusion-explorer/samples/tiny_cnn.onnx; do
  if ! grep -qx "$f" "$work/files"; then echo "missing from package: $f"; fail=1; fi
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libqt6widgets6 libonnx libprotobuf libdnnl libc6; do
  if ! grep -q "$lib" <<<"$depends"; then echo "Depends lacks $lib (shlibdeps?)"; fail=1; fi
done
dpkg-deb -x "$deb" "$work/root"
root=$work/root
# expect WHAT REGEX COMMAND...: COMMAND succeeds and prints a line matching REGEX.
expect() {
  local what=$1 re=$2 out; shift 2
  if out=$("$@" 2>&1) && grep -qE -- "$re" <<<"$out"; then return 0; fi
  echo "$what failed:"; tail -5 <<<"$out"; fail=1
}
sample=$root/usr/share/fusion-explorer/samples/tiny_cnn.onnx
expect "fxc --version" "^fxc \(Fusion Explorer\) " "$root/usr/bin/fxc" --version
expect "fusion-explorer --version" "^fusion-explorer " \
  env -u DISPLAY -u WAYLAND_DISPLAY "$root/usr/bin/fusion-explorer" --version
expect "packaged fxc inspect of the packaged sample" "^Nodes +18 " "$root/usr/bin/fxc" inspect "$sample"
expect "packaged fxc analyze with the packaged ascend-910b.json" "^Device +ascend-910b" \
  "$root/usr/bin/fxc" analyze "$sample" --device "$root/usr/share/fusion-explorer/devices/ascend-910b.json"
expect "fxc(1) has an analyze subsection" '^\.SS analyze' gzip -dc "$root/usr/share/man/man1/fxc.1.gz"
expect "fusion-explorer(1) lists --screenshot" 'screenshot' \
  gzip -dc "$root/usr/share/man/man1/fusion-explorer.1.gz"
# the licence: one statement, Apache-2.0, in the copyright file, the AppStream metadata
# and the package's maintainer (the project, no person)
expect "copyright says Apache-2.0" '^License: Apache-2.0$' cat "$root/usr/share/doc/fusion-explorer/copyright"
expect "AppStream project_license is Apache-2.0" '<project_license>Apache-2.0</project_license>' \
  cat "$root/usr/share/metainfo/io.github.fusion_explorer.metainfo.xml"
expect "Maintainer is the project" '^Fusion Explorer <' dpkg-deb -f "$deb" Maintainer
# desktop entry and AppStream metadata as shipped (tools from install-deps.sh)
if command -v desktop-file-validate >/dev/null; then
  expect "desktop-file-validate" '' desktop-file-validate "$root/usr/share/applications/fusion-explorer.desktop"
fi
if command -v appstreamcli >/dev/null; then
  expect "appstreamcli validate" 'successful' \
    appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.fusion_explorer.metainfo.xml"
fi
if command -v lintian >/dev/null; then
  lintian --no-cfg "$deb" >"$work/lintian" 2>&1 || true
  if grep -E '^E: ' "$work/lintian"; then echo "lintian reports errors"; fail=1; fi
  echo "lintian: $(grep -c '^E: ' "$work/lintian") errors, $(grep -c '^W: ' "$work/lintian") warnings"
else
  echo "lintian not installed: skipped (packaging/install-deps.sh installs it)"
fi
[ $fail -eq 0 ] && echo "package contents OK"
exit $fail
