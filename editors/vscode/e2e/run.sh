#!/usr/bin/env bash
# The end-to-end suite: the extension in real VS Code. Builds the extension
# and a linux-x64 .vsix carrying the gopi binary under test, installs
# code-server (VS Code for the browser; cached in ~/.cache/gopi after the
# first run, see install-code-server.sh), installs the .vsix into a scratch
# extensions folder, and runs e2e/*.test.mjs under `node --test`. Each test
# starts its own code-server (its own user data, HOME and free port on
# 127.0.0.1, no auth, no telemetry) on a scratch folder and drives it
# through headless Chromium with playwright-core (lib.mjs). Screenshots go
# to test-artifacts/e2e/.
#
#   GOPI_BIN   the gopi binary (default: bin/gopi of this repository)
#   CHROMIUM   the browser (default: chromium on PATH)
#   KEEP=1     keep the scratch folder (code-server's logs) after the run
#
# Arguments naming e2e/*.test.mjs files run those files only; the others
# go to `node --test` (e.g. --test-name-pattern=approval).
# No process started here may outlive the run: every gopi and code-server
# left over at the end is killed and the run fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../../../testdata/clients/lib.sh
source "$repo/testdata/clients/lib.sh"
gopi_bin
need_node
cd "$here"

cs=$("$here/e2e/install-code-server.sh")
node24=$cs/node/bin/node
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[[ -x $CHROMIUM ]] || { echo "e2e/run.sh: chromium is not installed" >&2; exit 1; }
export CHROMIUM

if [[ ! -f node_modules/.package-lock.json ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
	npm ci --no-audit --no-fund --loglevel=error >/dev/null || { echo "e2e/run.sh: npm ci failed" >&2; exit 1; }
fi
node esbuild.mjs
GOPI_VSIX_BIN=$GOPI_BIN "$here/package-vsix.sh" linux-x64 >/dev/null
vsix=$(ls "$here"/dist/gopi-linux-x64-*.vsix)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gopi-e2e.XXXXXX")
leftovers() { pgrep -f -- "$tmp" || true; }
cleanup() {
	local pids
	pids=$(leftovers)
	# shellcheck disable=SC2086
	[[ -z $pids ]] || kill -9 $pids 2>/dev/null || true
	if [[ ${KEEP:-0} == 1 ]]; then echo "e2e/run.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
mkdir -p "$tmp/extensions" "$tmp/install-home"
env -i HOME="$tmp/install-home" PATH="$cs/node/bin:/usr/bin:/bin" LANG=C.UTF-8 \
	"$node24" "$cs/node_modules/code-server/out/node/entry.js" \
	--config "$tmp/install-home/config.yaml" --user-data-dir "$tmp/install-home/user-data" \
	--extensions-dir "$tmp/extensions" --install-extension "$vsix" >"$tmp/install.log" 2>&1 \
	|| { cat "$tmp/install.log" >&2; echo "e2e/run.sh: installing $vsix failed" >&2; exit 1; }

files=() args=()
for a in "$@"; do
	if [[ $a == *.test.mjs ]]; then files+=("$a"); else args+=("$a"); fi
done
((${#files[@]})) || files=(e2e/*.test.mjs)

rm -rf test-artifacts/e2e
mkdir -p test-artifacts/e2e
status=0
GOPI_E2E_CODE_SERVER=$cs GOPI_E2E_EXTENSIONS=$tmp/extensions GOPI_E2E_TMP=$tmp \
	GOPI_E2E_ARTIFACTS=$here/test-artifacts/e2e \
	"$node24" --test --test-concurrency=1 "${args[@]}" "${files[@]}" || status=$?

# Every test closes its code-server; anything still running from the
# scratch folder (a gopi, an extension host) escaped that.
pids=$(leftovers)
if [[ -n $pids ]]; then
	echo "e2e/run.sh: processes outlived the suite:" >&2
	# shellcheck disable=SC2086
	ps -o pid=,args= -p $(echo $pids | tr ' ' ,) >&2 || true
	status=1
fi
exit $status
