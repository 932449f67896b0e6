#!/usr/bin/env bash
# Installs the Debian packages the zone server needs, and only those that are missing.
# Idempotent; needs root (or sudo) only when something is actually missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libenet-dev
  libflatbuffers-dev flatbuffers-compiler
  libfmt-dev
  libyaml-cpp-dev
  doctest-dev
  libcli11-dev
  nlohmann-json3-dev
  libcpp-httplib-dev
  libnats-dev
  liblua5.4-dev
  libsodium-dev
  libsqlite3-dev
  libpq-dev
  libsdl2-dev
)
# What the tests use beyond the build (--tests): Chromium for the live-map browser test
# (tests/browser, with Node.js >= 20 and npm from the machine) and promtool, from the
# prometheus package, for the /metrics check (tests/metrics), and nats-server for the
# tests of a world of several zones (tests/cluster), with openssl for their throwaway TLS
# certificates, and postgresql for the tests of the shared character store (tests/persist,
# which start a throwaway server of their own), and xvfb (with xauth, which xvfb-run
# needs) for the sample client's screenshot test (tests/client/viewer_test.cpp). `make
# test` asks for them.
test_packages=(chromium prometheus nats-server openssl postgresql xvfb xauth)
# Extra packages for optional tooling, requested with --with NAME.
while [[ $# -gt 0 ]]; do
  case "$1" in
    --with) packages+=("$2"); shift 2 ;;
    --tests) packages+=("${test_packages[@]}"); shift ;;
    *) echo "install-deps: unknown argument '$1' (expected --tests or --with PACKAGE)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"
