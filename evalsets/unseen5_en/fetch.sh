#!/bin/sh
# Reproduce the unseen5_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen5_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen5_en/pari-tutorial.pdf, "A Tutorial for PARI / GP" (version 2.15.2, The PARI Group,
# Institut de Mathematiques de Bordeaux), taken from the Debian package pari-doc, version 2.15.2-1 (bookworm,
# section doc), path inside the package: ./usr/share/pari/doc/tutorial.pdf (./usr/share/doc/pari-doc/doc is a
# symlink to ../../pari/doc). Needs apt (run 'apt-get update' first if apt-get download cannot find the version).
# The package is about 8 MB. The checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" pari-doc 2.15.2-1 usr/share/pari/doc/tutorial.pdf \
    docs/unseen5_en/pari-tutorial.pdf 39adef47fe7c5c5b2137dd2a6f0d29900e740889db7bcedfb70ffe4481cb4a1b "${1:-/tmp/unseen_data}"
