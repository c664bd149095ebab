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
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" debian-reference-zh-cn 2.100 usr/share/debian-reference/debian-reference.zh-cn.pdf \
    docs/unseen_zh/debian-reference.zh-cn.pdf 93697b9d4a024eaf5adb2def25a646740fad405cb245032a6414222ae0e71bb1 "${1:-/tmp/unseen_data}"
