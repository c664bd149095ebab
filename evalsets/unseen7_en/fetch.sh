#!/bin/sh
# Reproduce the unseen7_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen7_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen7_en/nut-user-manual.pdf, "Network UPS Tools User Manual" (NUT 2.8.0, revision of
# 2023-01-25, by Russell Kroll, Arnaud Quette and Arjen de Korte), taken from the Debian package nut-doc, version
# 2.8.0-7 (bookworm, section doc), path inside the package: ./usr/share/doc/nut-doc/pdf/user-manual.pdf. Needs apt
# (run 'apt-get update' first if apt-get download cannot find the version). The package is about 2.9 MB. The
# checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" nut-doc 2.8.0-7 usr/share/doc/nut-doc/pdf/user-manual.pdf \
    docs/unseen7_en/nut-user-manual.pdf f604fa3ab839872da646c8aa2ff4870b88e9e001611f711d8852d937f02c512f "${1:-/tmp/unseen_data}"
