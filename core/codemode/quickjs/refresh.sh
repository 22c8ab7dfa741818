#!/bin/sh
# Copies quickjs.wasm (gzipped, as quickjs.wasm.gz) and its LICENSE from the npm package quickjs-wasi
# (the version given) into this directory and prints its SHA-256.
set -eu
version=${1:?usage: refresh.sh VERSION}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "quickjs-wasi@$version" >/dev/null && tar -xzf quickjs-wasi-*.tgz)
gzip -9 -n -c "$tmp/package/quickjs.wasm" >"$here/quickjs.wasm.gz"
cp "$tmp/package/LICENSE" "$here/LICENSE"
sha256sum "$tmp/package/quickjs.wasm"
