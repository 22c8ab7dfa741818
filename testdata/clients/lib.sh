# Shared by the client test runners (node/, vscode-jsonrpc/, nvim/run.sh);
# source it, do not run it.

# gopi_bin resolves $GOPI_BIN (default: bin/gopi of this repository) to an
# absolute path and exports it, or fails with how to get one.
gopi_bin() {
	local clients
	clients=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	GOPI_BIN=${GOPI_BIN:-$clients/../../bin/gopi}
	if [[ ! -x $GOPI_BIN ]]; then
		echo "run.sh: gopi binary not found or not executable at $GOPI_BIN (run make build, or set GOPI_BIN)" >&2
		exit 1
	fi
	GOPI_BIN=$(cd "$(dirname "$GOPI_BIN")" && pwd)/$(basename "$GOPI_BIN")
	export GOPI_BIN
}

# need_node fails unless Node 18 or newer is installed.
need_node() {
	command -v node >/dev/null 2>&1 || { echo "run.sh: node is not installed" >&2; exit 1; }
	local major
	major=$(node -p 'process.versions.node.split(".")[0]')
	if ((major < 18)); then
		echo "run.sh: Node 18 or newer is needed, found $(node --version)" >&2
		exit 1
	fi
}
