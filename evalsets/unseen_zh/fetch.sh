#!/bin/sh
# Reproduce the unseen_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen_zh/debian-reference.zh-cn.pdf, 《Debian 参考手册》 version 2.100 (2023-02-04),
# Simplified Chinese translation, taken from the Debian package debian-reference-zh-cn, version 2.100
# (bookworm, section doc), path inside the package: ./usr/share/debian-reference/debian-reference.zh-cn.pdf.
# Needs apt (run 'apt-get update' first if apt-get download cannot find the version). The checksum pins the
# exact file the set was written on.
set -eu
DATA=${1:-/tmp/unseen_data}
PKG=debian-reference-zh-cn
VERSION=2.100
INNER=usr/share/debian-reference/debian-reference.zh-cn.pdf
OUT=docs/unseen_zh/debian-reference.zh-cn.pdf
SHA256=93697b9d4a024eaf5adb2def25a646740fad405cb245032a6414222ae0e71bb1

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
chown _apt "$WORK" 2>/dev/null || true   # lets apt download as its _apt user (else a harmless warning)
(cd "$WORK" && apt-get download "$PKG=$VERSION")
dpkg-deb -x "$WORK"/${PKG}_*.deb "$WORK/root"
mkdir -p "$DATA/$(dirname "$OUT")"
cp "$WORK/root/$INNER" "$DATA/$OUT"
echo "$SHA256  $DATA/$OUT" | sha256sum -c -
