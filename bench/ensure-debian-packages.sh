#!/usr/bin/env bash
# Installs the Debian packages named as arguments when their program is missing:
#   bench/ensure-debian-packages.sh pgbouncer haproxy
# (the program of each package is looked up in /usr/sbin and on PATH). Needs root for apt-get;
# prints what it installs on stderr, nothing when everything is there.
set -euo pipefail
missing=()
for pkg in "$@"; do
  if [ ! -x "/usr/sbin/$pkg" ] && ! command -v "$pkg" >/dev/null 2>&1; then missing+=("$pkg"); fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing ${missing[*]} (Debian packages)" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# The packages start their system service where policy-rc.d allows it: the tests run their own.
for pkg in "${missing[@]}"; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$pkg" 2>/dev/null; then systemctl stop "$pkg" >&2 || true; fi
done
