#!/bin/sh
# Reproduce the unseen4_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen4_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen4_en/bashref.pdf, the "Bash Reference Manual" (Edition 5.2, for Bash Version 5.2,
# September 2022, by Chet Ramey and Brian Fox), taken from the Debian package bash-doc, version 5.2.15-2 (bookworm,
# section doc), path inside the package: ./usr/share/doc/bash/bashref.pdf (./usr/share/doc/bash-doc/bashref.pdf is
# a symlink to it). Needs apt (run 'apt-get update' first if apt-get download cannot find the version). The
# package is about 2 MB. The checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" bash-doc 5.2.15-2 usr/share/doc/bash/bashref.pdf \
    docs/unseen4_en/bashref.pdf 104971d389c0b9b7a261b0b3070a53b0d8cce6db1ffddefcc8423ddda92acd87 "${1:-/tmp/unseen_data}"
