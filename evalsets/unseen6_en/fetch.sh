#!/bin/sh
# Reproduce the unseen6_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen6_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen6_en/gmpl.pdf, "Modeling Language GNU MathProg, Language Reference for GLPK Version 5.0"
# (December 2020, by Andrew Makhorin and Heinrich Schuchardt, Free Software Foundation), taken from the Debian
# package glpk-doc, version 5.0-1 (bookworm, section doc), path inside the package:
# ./usr/share/doc/glpk-doc/gmpl.pdf. Needs apt (run 'apt-get update' first if apt-get download cannot find the
# version). The package is about 1.5 MB. The checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" glpk-doc 5.0-1 usr/share/doc/glpk-doc/gmpl.pdf \
    docs/unseen6_en/gmpl.pdf df54ba811d1fe3c041447b575997298d63b0a6366e39454ef2efc382f08203c2 "${1:-/tmp/unseen_data}"
