#!/usr/bin/env bash
# Runs rpc-client.test.mjs: pi's published RpcClient against the gopi binary.
# Builds nothing. Node 20+ and npm (for the first fetch of the client) needed.
#
#   GOPI_BIN    the gopi binary (default: bin/gopi of this repository)
#   PI_VERSION  version of pi's client (default 0.73.1)
#
# Extra arguments go to `node --test` (e.g. --test-name-pattern=approval).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GOPI_BIN=${GOPI_BIN:-$here/../../../bin/gopi}
if [[ ! -x $GOPI_BIN ]]; then
	echo "run.sh: gopi binary not found or not executable at $GOPI_BIN (run make build, or set GOPI_BIN)" >&2
	exit 1
fi
GOPI_BIN=$(cd "$(dirname "$GOPI_BIN")" && pwd)/$(basename "$GOPI_BIN")
export GOPI_BIN

command -v node >/dev/null 2>&1 || { echo "run.sh: node is not installed" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 18)); then
	echo "run.sh: Node 18 or newer is needed, found $(node --version)" >&2
	exit 1
fi

"$here/fetch-client.sh" >/dev/null

exec node --test "$@" "$here/rpc-client.test.mjs"
