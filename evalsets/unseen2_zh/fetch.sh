#!/bin/sh
# Reproduce the unseen2_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen2_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen2_zh/lshort-zh-cn.pdf, 《一份（不太）简短的 LaTeX 2ε 介绍》 (CTEX 开发小组的中文版本 6.03,
# 2021 年 11 月, from Tobias Oetiker et al.'s lshort 6.4), taken from the Debian package texlive-lang-chinese,
# version 2022.20230122-1 (bookworm, section tex), path inside the package:
# ./usr/share/doc/texlive-doc/latex/lshort-chinese/lshort-zh-cn.pdf. Needs apt (run 'apt-get update' first if
# apt-get download cannot find the version). The package is about 49 MB. The checksum pins the exact file the
# set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" texlive-lang-chinese 2022.20230122-1 usr/share/doc/texlive-doc/latex/lshort-chinese/lshort-zh-cn.pdf \
    docs/unseen2_zh/lshort-zh-cn.pdf 4f6b11c04054fcdbb23d6d3c8527b145d27c21abb9efa7e57f96be2b7def484c "${1:-/tmp/unseen_data}"
