#!/usr/bin/env bash
# Installs the official MCP test server, @modelcontextprotocol/server-everything,
# into a cache (the npm registry on first use) and prints its entry file, for
# cmd/gopi's TestMCPServerEverything* (GOPI_MCP_EVERYTHING). It runs on the
# system's node (18+). Idempotent.
#
#   everything.sh [VERSION]
set -euo pipefail

version=${1:-2026.8.31}
dest="${XDG_CACHE_HOME:-$HOME/.cache}/gopi/mcp-everything-$version"
entry=node_modules/@modelcontextprotocol/server-everything/dist/index.js

if [[ -f $dest/$entry ]]; then
	echo "$dest/$entry"
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "everything.sh: npm is needed to install the MCP test server" >&2; exit 1; }
stage="$dest.partial.$$"
rm -rf "$stage"
mkdir -p "$stage"
(cd "$stage" && npm init -y >/dev/null &&
	npm install --loglevel=error --no-audit --no-fund "@modelcontextprotocol/server-everything@$version" >&2)
rm -rf "$dest"
mv "$stage" "$dest"
echo "$dest/$entry"
