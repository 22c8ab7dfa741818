#!/usr/bin/env bash
# A picture of the plugin at work: Neovim in a tmux pane (120×36) runs
# :Gopi and a prompt with a tool call against the gopi binary on the faux
# model; the pane, colours included, becomes HTML (screenshot.lua) and
# Chromium renders it to tests/artifacts/nvim-chat.png.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/screenshot.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(cd "$here/.." && pwd)
nvim=${GOPI_TEST_NVIM:?}
gopi=${GOPI_BIN:?}
chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || { echo "screenshot.sh: chromium is needed" >&2; exit 1; }
command -v tmux >/dev/null || { echo "screenshot.sh: tmux is needed" >&2; exit 1; }

work=$(mktemp -d)
sock=gopi-shot-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/agent" "$work/work" "$here/artifacts"
printf 'package main\n\nfunc main() {}\n' >"$work/work/main.go"
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
# :Gopi with text opens the chat and sends it.
tmux -L "$sock" send-keys -l ":Gopi tools: read: main.go; bash: ls -la"
tmux -L "$sock" send-keys Enter
sleep 5
tmux -L "$sock" send-keys -l ":Gopi reply: The **main** package has an empty \`main\`: nothing runs yet."
tmux -L "$sock" send-keys Enter
sleep 3
tmux -L "$sock" send-keys -l ":wincmd p"
tmux -L "$sock" send-keys Enter
sleep 1
tmux -L "$sock" capture-pane -e -p >"$work/screen.ansi"
"$nvim" --headless --clean -l "$here/screenshot.lua" "$work/screen.ansi" "$work/screen.html"
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1040,720 \
	--screenshot="$here/artifacts/nvim-chat.png" "file://$work/screen.html" >/dev/null 2>&1
echo "screenshot.sh: wrote $here/artifacts/nvim-chat.png"
