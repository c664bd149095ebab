#!/bin/sh
# Reproduce the unseen4_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen4_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen4_zh/latex-notes-zh-cn.pdf, "LaTeX Notes" v1.20 (Alpha Huang, 2008-07-26), a
# Chinese introduction to LaTeX, taken from the Debian package texlive-lang-chinese, version 2022.20230122-1
# (bookworm, section tex), path inside the package:
# ./usr/share/doc/texlive-doc/generic/latex-notes-zh-cn/latex-notes-zh-cn.pdf. Needs apt (run 'apt-get update'
# first if apt-get download cannot find the version). The package is about 49 MB. The checksum pins the exact
# file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" texlive-lang-chinese 2022.20230122-1 usr/share/doc/texlive-doc/generic/latex-notes-zh-cn/latex-notes-zh-cn.pdf \
    docs/unseen4_zh/latex-notes-zh-cn.pdf b8c93f6793f972a36321065e9fbec4dbda2073d725dd1cb6349855a5e7395cfb "${1:-/tmp/unseen_data}"
