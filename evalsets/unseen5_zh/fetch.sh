#!/bin/sh
# Reproduce the unseen5_zh document folder from Debian's package archive (the PDF is never committed).
#
#   sh evalsets/unseen5_zh/fetch.sh [DATA]      # DATA defaults to /tmp/unseen_data
#
# Result: DATA/docs/unseen5_zh/maint-guide.zh-cn.pdf, 《Debian 新维护者手册》 (the Simplified Chinese translation
# of the Debian New Maintainers' Guide, by Josip Rodin, Osamu Aoki and the translators Aron Xu, 李凌, 郑原真, 周默
# and 杨博远; dated October 8, 2022), taken from the Debian package maint-guide-zh-cn, version 1.2.53 (bookworm,
# section doc), path inside the package: ./usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.pdf. Needs apt (run
# 'apt-get update' first if apt-get download cannot find the version). The package is about 0.7 MB. The checksum
# pins the exact file the set was written on.
set -eu
exec sh "$(dirname "$0")/../fetch_debian_pdf.sh" maint-guide-zh-cn 1.2.53 usr/share/doc/maint-guide-zh-cn/maint-guide.zh-cn.pdf \
    docs/unseen5_zh/maint-guide.zh-cn.pdf 6e3d3247fc675e6678d59663f886472ef7369c82c69036eb631d3651a4913709 "${1:-/tmp/unseen_data}"
