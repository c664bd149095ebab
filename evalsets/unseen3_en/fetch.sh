#!/bin/sh
# Reproduce the unseen3_en document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen3_en/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen3_en/reportlab-userguide.pdf, the "ReportLab PDF Library User Guide" (ReportLab
# Version 3.6.12), taken from the Debian package python-reportlab-doc, version 3.6.12-1+deb12u1 (bookworm,
# section doc), path inside the package: ./usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf. Needs apt
# (run 'apt-get update' first if apt-get download cannot find the version). The package is about 0.7 MB.
# The checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" python-reportlab-doc 3.6.12-1+deb12u1 usr/share/doc/python-reportlab-doc/reportlab-userguide.pdf \
    docs/unseen3_en/reportlab-userguide.pdf 91ad5429d7b2907b8efefd7b95facfe2fb01ec31b8cefb024e47b0a7ac713420 "${1:-/tmp/unseen_data}"
