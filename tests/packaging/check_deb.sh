#!/usr/bin/env bash
# check_deb.sh BUILD_DIR: cpack -G DEB, then check the package's files, its computed
# dependencies, and that fxc and fusion-explorer answer --version from the package.
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
         /usr/share/man/man1/fxc.1 \
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
"$work/root/usr/bin/fxc" --version | grep -q "fxc (Fusion Explorer)" || { echo "fxc --version failed"; fail=1; }
env -u DISPLAY -u WAYLAND_DISPLAY "$work/root/usr/bin/fusion-explorer" --version | grep -q "fusion-explorer" \
  || { echo "fusion-explorer --version failed"; fail=1; }
gzip -dc "$work/root/usr/share/man/man1/fxc.1"* 2>/dev/null | grep -q "SUBCOMMANDS" \
  || grep -q "SUBCOMMANDS" "$work/root/usr/share/man/man1/fxc.1" 2>/dev/null \
  || { echo "man page has no SUBCOMMANDS section"; fail=1; }
[ $fail -eq 0 ] && echo "package contents OK"
exit $fail
