#!/bin/sh
# Reproduce the unseen7_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen7_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen7_zh/texlive-zh-cn.pdf, 《TeX Live 指南—2020》 (the Simplified Chinese translation of
# the TeX Live Guide by Karl Berry, March 2020; translated by Jiang Jiang, Jinsong Zhao, Yue Wang and Helin Gai),
# taken from the Debian package texlive-lang-chinese, version 2022.20230122-1 (bookworm, section tex), path inside
# the package: ./usr/share/doc/texlive-doc/texlive/texlive-zh-cn/texlive-zh-cn.pdf. Needs apt (run 'apt-get
# update' first if apt-get download cannot find the version). The package is about 49 MB (the same package as
# ../unseen2_zh, ../unseen3_zh and ../unseen4_zh, a different document). The checksum pins the exact file the set
# was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" texlive-lang-chinese 2022.20230122-1 \
    usr/share/doc/texlive-doc/texlive/texlive-zh-cn/texlive-zh-cn.pdf docs/unseen7_zh/texlive-zh-cn.pdf \
    1bee53943ad19bfc5889dcc19f29db1f502172129f79d7be24e0cd7a55a32f26 "${1:-/tmp/unseen_data}"
