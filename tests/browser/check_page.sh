#!/usr/bin/env bash
# Syntax check of the live map page's script (server/admin/map.html):
#
#   check_page.sh PAGE
#
# The page is plain JavaScript inside one <script> block with no build step, so a syntax
# error would otherwise show only in a browser. Extracts the block and runs `node --check`
# on it. Exits 77 (skipped) when Node.js is missing.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: check_page.sh PAGE" >&2
  exit 2
fi
page=$1
command -v node >/dev/null || { echo "SKIP: node is not installed (apt-get install -y nodejs)"; exit 77; }

script=$(mktemp --suffix=.js)
trap 'rm -f "$script"' EXIT
awk '/^<script>$/ { inside = 1; next } /^<\/script>$/ { inside = 0; next } inside' \
  "$page" >"$script"
if [[ ! -s $script ]]; then
  echo "FAIL: no <script> block (a line of its own) in $page" >&2
  exit 1
fi
node --check "$script"
echo "the script of $page parses ($(wc -l <"$script") lines)"
