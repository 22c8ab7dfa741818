#!/usr/bin/env bash
# A picture of the context chips (:help gopi-context): Neovim in a tmux pane
# (120×36) with a file in a git repository, changed and not saved, a
# diagnostic on it and a selection, sends a prompt naming #buffer,
# #selection, #diagnostics and #diff to the gopi binary on the faux model;
# the chat shows one chip each. The pane becomes HTML (screenshot.lua) and
# Chromium renders it to tests/artifacts/nvim-context.png.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/screenshot-context.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(cd "$here/.." && pwd)
nvim=${GOPI_TEST_NVIM:?}
gopi=${GOPI_BIN:?}
chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || { echo "screenshot-context.sh: chromium is needed" >&2; exit 1; }
command -v tmux >/dev/null || { echo "screenshot-context.sh: tmux is needed" >&2; exit 1; }

work=$(mktemp -d)
sock=gopi-shot-context-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/agent" "$work/work" "$here/artifacts"
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n' >"$work/work/main.go"
git -C "$work/work" init -q
git -C "$work/work" add main.go
git -C "$work/work" -c user.name=gopi -c user.email=gopi@example.com commit -q -m "hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello, world")\n}\n' >"$work/work/main.go"
cat >"$work/init.lua" <<LUA
vim.opt.rtp:prepend("$plugin")
vim.o.termguicolors = true
vim.cmd("colorscheme habamax")
vim.cmd("runtime plugin/gopi.lua")
require("gopi").setup({ cmd = "$gopi", provider = "faux", model = "faux-1", approval = "off" })
LUA
tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 36 -c "$work/work" \
	env PI_CODING_AGENT_DIR="$work/agent" ANTHROPIC_API_KEY= OPENAI_API_KEY= GEMINI_API_KEY= TERM=xterm-256color \
	"$nvim" --clean -u "$work/init.lua" main.go
sleep 1
keys() { tmux -L "$sock" send-keys "$@"; }
# An unsaved change, a diagnostic and a selection (lines 5-7).
keys -l 'Gofunc unused() {}'
keys Escape
keys -l ':lua vim.diagnostic.set(vim.api.nvim_create_namespace("demo"), 0, { { lnum = 7, col = 5, severity = 2, message = "unused is unused" } })'
keys Enter
keys -l '5GVjj'
keys Escape
keys -l ':Gopi'
keys Enter
sleep 1
keys -l 'iWhat does #selection do? See #buffer #diagnostics #diff'
keys Escape
keys Enter
sleep 4
# The chat from its top: the message and its chips.
keys Escape
keys -l ":call win_execute(bufwinid('gopi://chat'), 'normal! gg')"
keys Enter
sleep 1
tmux -L "$sock" capture-pane -e -p >"$work/screen.ansi"
"$nvim" --headless --clean -l "$here/screenshot.lua" "$work/screen.ansi" "$work/screen.html"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1040,720 \
	--screenshot="$here/artifacts/nvim-context.png" "file://$work/screen.html" >/dev/null 2>&1
echo "screenshot-context.sh: wrote $here/artifacts/nvim-context.png"
