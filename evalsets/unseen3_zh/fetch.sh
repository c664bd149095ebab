#!/bin/sh
# Reproduce the unseen3_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen3_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen3_zh/asymptote-manual-zh-cn.pdf, 《Asymptote: 矢量绘图语言》 (the Chinese translation by
# 刘海洋, 2009-07-06, of chapters 3-5 of the Asymptote 1.79 manual by Andy Hammerlindl, John Bowman and Tom Prince),
# taken from the Debian package texlive-lang-chinese, version 2022.20230122-1 (bookworm, section tex), path inside
# the package: ./usr/share/doc/texlive-doc/support/asymptote-manual-zh-cn/asymptote-manual-zh-cn.pdf. Needs apt
# (run 'apt-get update' first if apt-get download cannot find the version). The package is about 49 MB. The
# checksum pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" texlive-lang-chinese 2022.20230122-1 usr/share/doc/texlive-doc/support/asymptote-manual-zh-cn/asymptote-manual-zh-cn.pdf \
    docs/unseen3_zh/asymptote-manual-zh-cn.pdf acc757f0963ec1036465d86c2f19200fb888b960ae2562f5bf09b009e26536bb "${1:-/tmp/unseen_data}"
