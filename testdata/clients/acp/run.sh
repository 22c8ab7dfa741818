#!/usr/bin/env bash
# Runs acp-client.test.mjs: the official ACP TypeScript SDK
# (@agentclientprotocol/sdk, pinned in package.json / package-lock.json)
# against the gopi binary in --mode acp. Node 18+ and npm (for the first
# install of the package into node_modules here) needed, and Go: it builds
# the repository's MCP test server (core/mcp/testdata/mcpserver) into a
# temporary directory for the client-supplied MCP server test.
#
#   GOPI_BIN                the gopi binary (default: bin/gopi of this repository)
#   GOPI_MCP_TESTSERVER     that MCP server, already built (skips the build)
#
# Extra arguments go to `node --test` (e.g. --test-name-pattern=cancel).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"
gopi_bin
need_node

# Install exactly what the lock file names, once.
if [[ ! -f $here/node_modules/@agentclientprotocol/sdk/package.json ]]; then
	command -v npm >/dev/null 2>&1 || { echo "run.sh: npm is not installed; it is needed to install @agentclientprotocol/sdk" >&2; exit 1; }
	if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
		echo "run.sh: npm ci failed in $here (is the npm registry reachable?)" >&2
		exit 1
	fi
fi

if [[ -z ${GOPI_MCP_TESTSERVER:-} ]]; then
	command -v go >/dev/null 2>&1 || { echo "run.sh: go is needed to build the MCP test server (or set GOPI_MCP_TESTSERVER)" >&2; exit 1; }
	build=$(mktemp -d)
	trap 'rm -rf "$build"' EXIT
	if ! (cd "$here/../../.." && go build -o "$build/mcpserver" ./core/mcp/testdata/mcpserver); then
		echo "run.sh: could not build the MCP test server" >&2
		exit 1
	fi
	export GOPI_MCP_TESTSERVER=$build/mcpserver
fi

node --test "$@" "$here/acp-client.test.mjs"
