#!/usr/bin/env bash
# The sandbox in a real terminal: Neovim in a tmux pane (160×45) with the
# plugin set up with sandbox = "read-only" and approval = "writes", and the
# statusline component in 'statusline'. The status names the sandbox gopi
# reports; a command that writes in the project asks first (allowed), the
# sandbox stops it, and the escape question, opened with :GopiReview, offers
# Allow once and Deny; Deny leaves the project unwritten. :checkhealth gopi
# names the sandbox in force. The last screens are kept in
# tests/artifacts/nvim-sandbox-*.txt.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/sandbox-tui.sh
name=sandbox-tui
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
export LC_ALL=C.UTF-8
printf 'package main\n' >"$work/work/main.go"
write_init 'approval = "writes", sandbox = "read-only"'
cat >>"$work/init.lua" <<'LUA'
vim.o.laststatus = 2
vim.o.statusline = "%!v:lua.require'gopi'.status()"
LUA

start_nvim 160 45 main.go
wait_screen "package main"
text ":Gopi"
keys Enter
# The status, in the statusline and the chat's window bar.
wait_screen "gopi · faux-1 · "
wait_screen " · sandbox read-only"

text "ibash: echo no > blocked.txt"
esc
keys Enter
wait_screen "⚑ bash waits"
text ":GopiReview"
keys Enter
# vim.ui.select's own list (inputlist): Allow is the first.
wait_screen "1: Allow"
text "1"
keys Enter
# The command ran in the sandbox, which stopped it: gopi asks again.
wait_screen "⚑ bash outside the sandbox waits"
text ":GopiReview"
keys Enter
wait_screen "Run it once outside the sandbox?"
wait_screen "1: Allow once"
wait_screen "2: Deny"
screen | grep -qF "Allow always" && fail "the escape question offers Allow always"
screen | grep -qF "gopi's sandbox stopped bash: echo no > blocked.txt" || fail "the question does not name the command"
screen >"$here/artifacts/nvim-sandbox-escape.txt"
text "2"
keys Enter
wait_screen "✗ bash"
sleep 0.5
[[ -e $work/work/blocked.txt ]] && fail "read-only: the command wrote blocked.txt in the project"

text ":checkhealth gopi"
keys Enter
wait_screen "the sandbox in force: read-only, network off, enforced by landlock-fs"
screen >"$here/artifacts/nvim-sandbox-health.txt"
echo "ok - sandbox-tui: the status names the sandbox; the escape question offers Allow once and Deny; Deny kept the command in; :checkhealth names the sandbox"
