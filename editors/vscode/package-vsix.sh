#!/usr/bin/env bash
# Packages the extension as .vsix files, offline. Each platform target gets
# gopi cross-compiled for it (CGO_ENABLED=0) in bin/, which the extension
# starts when gopi.path is unset; "universal" ships no binary and looks on
# PATH. Output: dist/gopi-<target>-<version>.vsix.
#
#   ./package-vsix.sh [target ...]   default: every target below
#
#   GOPI_VSIX_BIN  a gopi binary already built for the one target named,
#                  shipped as it is instead of compiling one (the end-to-end
#                  suite packages the binary it tests; `make release` the
#                  release build)
#   GOPI_VSIX_OUT  the folder the packages go to (default: dist)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"
targets=("$@")
((${#targets[@]})) || targets=(universal linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)
version=$(node -p 'require("./package.json").version')
gopi_version=$(cd "$repo" && git describe --tags --always --dirty 2>/dev/null || echo dev)

out=${GOPI_VSIX_OUT:-dist}
[[ -f dist/extension.js && -f dist/webview.js ]] || node esbuild.mjs
trap 'rm -rf "$here/bin"' EXIT
for target in "${targets[@]}"; do
	rm -rf bin
	if [[ $target != universal ]]; then
		os=${target%-*} arch=${target#*-}
		case $os in win32) goos=windows exe=.exe ;; *) goos=$os exe= ;; esac
		case $arch in x64) goarch=amd64 ;; *) goarch=$arch ;; esac
		mkdir -p bin
		if [[ -n ${GOPI_VSIX_BIN:-} ]]; then
			((${#targets[@]} == 1)) || { echo "package-vsix.sh: GOPI_VSIX_BIN needs exactly one target" >&2; exit 1; }
			cp "$GOPI_VSIX_BIN" "$here/bin/gopi$exe"
		else
			(cd "$repo" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "-s -w -X main.version=$gopi_version" -o "$here/bin/gopi$exe" ./cmd/gopi)
		fi
		node_modules/.bin/vsce package --no-dependencies --skip-license --allow-missing-repository --no-rewrite-relative-links --target "$target" -o "$out/gopi-$target-$version.vsix"
	else
		node_modules/.bin/vsce package --no-dependencies --skip-license --allow-missing-repository --no-rewrite-relative-links -o "$out/gopi-universal-$version.vsix"
	fi
done
