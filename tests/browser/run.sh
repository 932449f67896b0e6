#!/usr/bin/env bash
# CTest driver for the live-map browser test (map_test.mjs):
#
#   run.sh WORK_DIR ZONE_SERVER CLIENT_SIM [map_test.mjs options, e.g. --screenshot PATH]
#
# Installs playwright-core (the library only: the browser is Debian's chromium) with
# `npm ci` into WORK_DIR, once per package-lock.json, then runs the test. Exits 77, which
# CTest reports as "skipped" (SKIP_RETURN_CODE), when Node.js, npm or Chromium is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -lt 3 ]]; then
  echo "usage: run.sh WORK_DIR ZONE_SERVER CLIENT_SIM [--screenshot PATH]" >&2
  exit 2
fi
work=$1; shift

skip() {
  echo "SKIP: $* (the live-map browser test needs Node.js >= 20, npm and Debian's chromium;" \
       "install them with: apt-get install -y nodejs npm chromium)"
  exit 77
}

chromium=${CHROMIUM:-/usr/bin/chromium}
command -v node >/dev/null || skip "node is not installed"
[[ -x $chromium ]] || skip "no Chromium at $chromium"
node_major=$(node -p 'process.versions.node.split(".")[0]')
(( node_major >= 20 )) || skip "node $(node --version) is too old for playwright-core"

# npm ci only when the lock changed since the last install, so reruns need no network.
mkdir -p "$work"
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json.installed" \
   || [[ ! -d $work/node_modules/playwright-core ]]; then
  command -v npm >/dev/null || skip "npm is not installed"
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  echo "installing playwright-core into $work/node_modules (npm ci)"
  if ! (cd "$work" && npm ci --silent --no-audit --no-fund); then
    echo "FAIL: npm ci in $work failed (is the npm registry reachable?)" >&2
    exit 1
  fi
  cp "$here/package-lock.json" "$work/package-lock.json.installed"
fi

# The screenshot goes to WORK_DIR unless the caller names a path (docs/map.png is made
# with --screenshot), so a test run does not rewrite a tracked file.
cd "$work"
export ZONE_BROWSER_MODULES=$work CHROMIUM=$chromium
exec node "$here/map_test.mjs" "$@"
