#!/usr/bin/env bash
# Runs editor-client.lua: Neovim's LSP RPC client (vim.lsp.rpc) against
# the gopi binary in its JSON-RPC 2.0 dialect. Builds nothing. Needs nvim
# 0.7 or newer (Debian's neovim package will do).
#
#   GOPI_BIN    the gopi binary (default: bin/gopi of this repository)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"
gopi_bin

command -v nvim >/dev/null 2>&1 || { echo "run.sh: nvim is not installed" >&2; exit 1; }
# vim.lsp.rpc.start with extra spawn parameters (cwd, env) came in 0.7.
if ! nvim --headless --clean -c 'if !has("nvim-0.7") | cquit | endif' -c 'qall!' </dev/null >/dev/null 2>&1; then
	echo "run.sh: Neovim 0.7 or newer is needed, found: $(nvim --version | head -n 1)" >&2
	exit 1
fi

# Every wait in the script is bounded; the outer timeout only catches nvim
# itself stuck (a prompt waiting for a key, say), which would block CI.
guard=()
command -v timeout >/dev/null 2>&1 && guard=(timeout --kill-after=10 300)

# The script's path goes through the environment, so no quoting of it in
# an Ex command is needed. stdin from /dev/null: nvim would otherwise read
# a non-terminal stdin as a buffer. The script quits nvim itself; the
# trailing cquit fails the run should the script die before it can.
export GOPI_NVIM_SCRIPT=$here/editor-client.lua
${guard[@]+"${guard[@]}"} nvim --headless --clean -c 'lua dofile(vim.env.GOPI_NVIM_SCRIPT)' -c cquit </dev/null && status=0 || status=$?
if ((status == 124)); then
	echo "run.sh: nvim did not finish within 300 s" >&2
fi
exit "$status"
