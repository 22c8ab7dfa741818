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
# shellcheck source=../lib.sh
source "$here/../lib.sh"
gopi_bin
need_node

"$here/fetch-client.sh" >/dev/null

exec node --test "$@" "$here/rpc-client.test.mjs"
