#!/bin/sh
# The build step of the plugin's lazy.nvim spec (README.md): puts a gopi in
# bin/ of the clone the plugin is in, where the plugin looks for one. With
# Go installed it builds this checkout (`make build`, else `go build`);
# without Go, or when the build fails, it installs the release binary with
# the repository's install.sh (download, SHA-256 check) into the same bin/.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
if command -v go >/dev/null 2>&1; then
	if command -v make >/dev/null 2>&1 && make build; then
		exit 0
	elif go build -o bin/gopi ./cmd/gopi; then
		exit 0
	fi
	echo "gopi build: building with Go failed; installing the release binary instead" >&2
fi
GOPI_INSTALL_DIR="$repo/bin" sh "$repo/install.sh"
