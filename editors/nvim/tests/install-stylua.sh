#!/usr/bin/env bash
# Prints the path of stylua, the Neovim plugin's formatter (make lint checks
# the plugin with it). The version below, installed from npm
# (@johnnymorganz/stylua-bin, which brings the release's binary) into
# ~/.cache/gopi/stylua-VERSION on first use; npm is all it needs.
set -euo pipefail

version=2.5.2
dest="${XDG_CACHE_HOME:-$HOME/.cache}/gopi/stylua-$version"
bin=$dest/node_modules/.bin/stylua

ok() { [[ -x $1 ]] && [[ $("$1" --version 2>/dev/null) == "stylua $version" ]]; }
if ok "$bin"; then
	echo "$bin"
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install-stylua.sh: npm is needed to install stylua $version" >&2; exit 1; }
stage="$dest.partial.$$"
rm -rf "$stage"
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
(cd "$stage" && npm init -y >/dev/null && npm install --loglevel=error --no-audit --no-fund "@johnnymorganz/stylua-bin@$version" >&2)
rm -rf "$dest"
mv "$stage" "$dest"
ok "$bin" || { echo "install-stylua.sh: the installed stylua does not run" >&2; exit 1; }
echo "$bin"
