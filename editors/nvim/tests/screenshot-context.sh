#!/usr/bin/env bash
# A picture of the context chips (:help gopi-context): Neovim in a tmux pane
# (120×36) with a file in a git repository, changed and not saved, a
# diagnostic on it and a selection, sends a prompt naming #buffer,
# #selection, #diagnostics and #diff to the gopi binary on the faux model;
# the chat shows one chip each. The pane becomes HTML (screenshot.lua) and
# Chromium renders it to tests/artifacts/nvim-context.png.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/screenshot-context.sh
name=screenshot-context
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
[[ -n $chromium ]] || { echo "screenshot-context.sh: chromium is needed" >&2; exit 1; }
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n' >"$work/work/main.go"
git -C "$work/work" init -q
git -C "$work/work" add main.go
git -C "$work/work" -c user.name=gopi -c user.email=gopi@example.com commit -q -m "hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello, world")\n}\n' >"$work/work/main.go"
write_init 'approval = "off"' colours
start_nvim 120 36 main.go
sleep 1
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
picture "$here/artifacts/nvim-context.png" 1040,720
echo "screenshot-context.sh: wrote $here/artifacts/nvim-context.png"
