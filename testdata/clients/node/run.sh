#!/usr/bin/env bash
# Runs rpc-client.test.mjs: pi's published RpcClient against the gopi binary,
# once with each client version: pi 0.73.1 (the older protocol document) and
# pi 1.6.0 (today's protocol; its client waits for agent_settled). Builds
# nothing. Node 20+ and npm (for the first fetch of each client) needed; the
# client is plain JavaScript, so Node 20 runs 1.6.0's client too.
#
#   GOPI_BIN     the gopi binary (default: bin/gopi of this repository)
#   PI_VERSIONS  client versions to run (default "0.73.1 1.6.0")
#
# Extra arguments go to `node --test` (e.g. --test-name-pattern=approval).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"
gopi_bin
need_node

status=0
for v in ${PI_VERSIONS:-0.73.1 1.6.0}; do
	echo "# pi's RpcClient $v"
	PI_VERSION=$v "$here/fetch-client.sh" >/dev/null
	PI_VERSION=$v node --test "$@" "$here/rpc-client.test.mjs" || status=1
done
exit $status
