#!/usr/bin/env bash
# Builds and tests the VS Code extension against the gopi binary, then
# packages it. Installs exactly what package-lock.json names (npm ci) on
# first use; needs Node 18+, npm and Chromium (CHROMIUM, or chromium on
# PATH).
#
#   GOPI_BIN   the gopi binary (default: bin/gopi of this repository)
#   GOPI_NODE, GOPI_PI_PACKAGE, GOPI_PI_EXAMPLES
#              pi's extension runtime and examples, for
#              test/extension-ui.test.mjs (it skips without them):
#              eval "$(testdata/pi/ext-env.sh)"
#   VSIX=0     skip packaging the linux-x64 .vsix
#
# Extra arguments go to `node --test`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../../testdata/clients/lib.sh
source "$repo/testdata/clients/lib.sh"
gopi_bin
need_node
cd "$here"

if [[ ! -f node_modules/.package-lock.json ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
	command -v npm >/dev/null 2>&1 || { echo "run.sh: npm is not installed" >&2; exit 1; }
	npm ci --no-audit --no-fund --loglevel=error >/dev/null || { echo "run.sh: npm ci failed (is the npm registry reachable?)" >&2; exit 1; }
fi

node esbuild.mjs
node_modules/.bin/tsc --noEmit -p .
node --test --test-concurrency=1 "$@" test/extension.test.mjs test/extension-ui.test.mjs test/webview.test.mjs

if [[ ${VSIX:-1} != 0 ]]; then
	"$here/package-vsix.sh" linux-x64 >/dev/null
	vsix=$(ls "$here"/dist/gopi-linux-x64-*.vsix)
	echo "run.sh: packaged $vsix"
	# The package's own binary starts when gopi.path is unset.
	unpacked=$(mktemp -d)
	trap 'rm -rf "$unpacked"' EXIT
	(cd "$unpacked" && unzip -q "$vsix")
	GOPI_VSIX_DIR=$unpacked/extension node --test --test-name-pattern=shipped test/extension.test.mjs
fi
