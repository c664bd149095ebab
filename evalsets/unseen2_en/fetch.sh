#!/bin/sh
# Reproduce the unseen2_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen2_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen2_en/lilypond-learning.pdf, the LilyPond "Learning Manual" (for LilyPond 2.24.1),
# taken from the Debian package lilypond-doc-pdf, version 2.24.1-2 (bookworm, section doc),
# path inside the package: ./usr/share/doc/lilypond/html/Documentation/learning.pdf. Needs apt (run
# 'apt-get update' first if apt-get download cannot find the version). The package is about 33 MB.
# The checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" lilypond-doc-pdf 2.24.1-2 usr/share/doc/lilypond/html/Documentation/learning.pdf \
    docs/unseen2_en/lilypond-learning.pdf 4789fa6c4a57c97153baea611619648331db08a051fb078fa9f43167ec6fc728 "${1:-/tmp/unseen_data}"
