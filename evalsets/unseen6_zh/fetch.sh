#!/bin/sh
# Reproduce the unseen6_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen6_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen6_zh/debian-edu-itil-manual.pdf, 《Debian Edu / Skolelinux ITIL 手册》 (the Simplified
# Chinese translation of the Debian Edu / Skolelinux ITIL manual by Knut Yrvin, Andreas Johansen, Klaus Ade
# Johnstad and others; translated by Liang Guo, Ma Yong and Tao Wang; dated 2024-01-31), taken from the Debian
# package debian-edu-doc-legacy-zh-cn, version 2.12.23~deb12u1 (bookworm, section doc), path inside the package:
# ./usr/share/doc/debian-edu-doc-legacy-zh-cn/debian-edu-itil-manual.pdf. Needs apt (run 'apt-get update' first
# if apt-get download cannot find the version). The package is about 10 MB. The checksum pins the exact file the
# set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" debian-edu-doc-legacy-zh-cn 2.12.23~deb12u1 \
    usr/share/doc/debian-edu-doc-legacy-zh-cn/debian-edu-itil-manual.pdf docs/unseen6_zh/debian-edu-itil-manual.pdf \
    ded369ac45050e564910453733baf9cf6789eaf2cc93ec86adeb1e2d63863781 "${1:-/tmp/unseen_data}"
