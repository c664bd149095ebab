#!/bin/sh
# Reproduce the unseen_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen_en/R-intro.pdf, "An Introduction to R" (R 4.2.2 Patched, 2022-11-10),
# taken from the Debian package r-doc-pdf, version 4.2.2.20221110-2 (bookworm, section doc),
# path inside the package: ./usr/share/R/doc/manual/R-intro.pdf. Needs apt (run 'apt-get update' first
# if apt-get download cannot find the version). The checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" r-doc-pdf 4.2.2.20221110-2 usr/share/R/doc/manual/R-intro.pdf docs/unseen_en/R-intro.pdf \
    337ccd0b490b1e66f7e783b45f4588d0599730b4206c0c051edfe1419c568c51 "${1:-/tmp/unseen_data}"
