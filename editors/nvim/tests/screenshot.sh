#!/usr/bin/env bash
# A picture of the plugin at work: Neovim in a tmux pane (120×36) runs
# :Gopi and a prompt with a tool call against the gopi binary on the faux
# model; the pane, colours included, becomes HTML (screenshot.lua) and
# Chromium renders it to tests/artifacts/nvim-chat.png.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/screenshot.sh
name=screenshot
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
[[ -n $chromium ]] || { echo "screenshot.sh: chromium is needed" >&2; exit 1; }
printf 'package main\n\nfunc main() {}\n' >"$work/work/main.go"
write_init 'approval = "off"' colours
start_nvim 120 36 main.go
sleep 1
# :Gopi with text opens the chat and sends it.
text ":Gopi tools: read: main.go; bash: ls -la"
keys Enter
sleep 5
text ":Gopi reply: The **main** package has an empty \`main\`: nothing runs yet."
keys Enter
sleep 3
text ":wincmd p"
keys Enter
sleep 1
picture "$here/artifacts/nvim-chat.png" 1040,720
echo "screenshot.sh: wrote $here/artifacts/nvim-chat.png"
