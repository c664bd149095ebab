#!/usr/bin/env bash
# What the tests need from the system, not from pip: Debian's Chromium (and its driver) for the browser
# tests, a Chinese font for the OCR tests' pages, a Latin TrueType font for the English ones.
# Root on Debian/Ubuntu: installs what is missing with apt-get, quietly. Anyone else: one line naming
# the command to run, and a non-zero exit, so `make test` stops before the tests instead of in dozens
# of setup errors. Used by the Makefile (test, test-books) and by .ci/run.
set -uo pipefail

CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver
LATIN_FONTS=(/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf
             /usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf)   # bench/ocr.py draws English pages with one

has_latin_font() {
  local font
  for font in "${LATIN_FONTS[@]}"; do [ -f "$font" ] && return 0; done
  return 1
}

has_cjk_font() {
  command -v fc-list >/dev/null && fc-list :lang=zh 2>/dev/null | grep -q .
}

missing_packages() {
  local missing=()
  [ -x "$CHROMIUM" ] || missing+=(chromium)
  [ -x "$CHROMEDRIVER" ] || missing+=(chromium-driver)
  command -v fc-list >/dev/null || missing+=(fontconfig)
  has_cjk_font || missing+=(fonts-wqy-microhei)
  has_latin_font || missing+=(fonts-liberation)
  echo "${missing[*]}"
}

is_debian_like() {
  [ -r /etc/os-release ] && grep -Eiq '^(ID|ID_LIKE)=.*(debian|ubuntu)' /etc/os-release
}

missing=$(missing_packages)
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null && is_debian_like; then
  log=$(mktemp)
  if DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1 \
     && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >>"$log" 2>&1; then
    rm -f "$log"
  else
    tail -n 20 "$log" >&2
    rm -f "$log"
  fi
  still=$(missing_packages)
  [ -z "$still" ] && exit 0
  echo "The tests need system packages that apt-get could not install; run: apt-get install -y $still" >&2
  exit 1
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo "
echo "The tests need Chromium, its driver and fonts (missing: $missing); run: ${sudo}apt-get install -y $missing" >&2
exit 1
