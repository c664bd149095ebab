#!/bin/sh
# Copy one PDF out of a pinned Debian package into a data folder and check its sha256 (the PDF is never committed).
#
#   sh evalsets/fetch_debian_pdf.sh PKG VERSION PATH_IN_PACKAGE OUT SHA256 [DATA]   # DATA defaults to /tmp/unseen_data
#
# Writes DATA/OUT. Needs apt (run 'apt-get update' first if apt-get download cannot find the version). Each set's
# fetch.sh names its document.
set -eu
PKG=$1 VERSION=$2 INNER=$3 OUT=$4 SHA256=$5
DATA=${6:-/tmp/unseen_data}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
chown _apt "$WORK" 2>/dev/null || true   # lets apt download as its _apt user (else a harmless warning)
(cd "$WORK" && apt-get download "$PKG=$VERSION")
dpkg-deb -x "$WORK"/"${PKG}"_*.deb "$WORK/root"
mkdir -p "$DATA/$(dirname "$OUT")"
cp "$WORK/root/$INNER" "$DATA/$OUT"
echo "$SHA256  $DATA/$OUT" | sha256sum -c -
