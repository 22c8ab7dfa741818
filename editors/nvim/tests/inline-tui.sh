#!/usr/bin/env bash
# The inline review in a real terminal: Neovim in a tmux pane (160×45)
# with the plugin, gopi on the faux model, approval = "writes" and
# review = "inline". A prompt asks for an edit of two hunks; the user goes
# back to the file and opens the question there (:GopiReview): the
# proposal shows in the file's own window (its added lines as virtual
# lines, no tab), ga takes the first hunk, gr refuses the second, and the
# file holds the first hunk only. The last screen is kept in
# tests/artifacts/nvim-inline.txt (and, with Chromium, nvim-inline.png).
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/inline-tui.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(cd "$here/.." && pwd)
nvim=${GOPI_TEST_NVIM:?}
gopi=${GOPI_BIN:?}
command -v tmux >/dev/null || { echo "inline-tui.sh: tmux is needed" >&2; exit 1; }

work=$(mktemp -d)
sock=gopi-inline-tui-$$
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; sleep 0.5; rm -rf "$work"' EXIT
mkdir -p "$work/agent" "$work/work" "$here/artifacts"
printf 'one\ntwo\nthree\nfour\nfive\nsix\n' >"$work/work/a.txt"
cat >"$work/init.lua" <<LUA
vim.opt.rtp:prepend("$plugin")
vim.o.termguicolors = true
vim.cmd("colorscheme habamax")
vim.cmd("runtime plugin/gopi.lua")
require("gopi").setup({ cmd = "$gopi", provider = "faux", model = "faux-1", approval = "writes", review = "inline" })
LUA

fail() {
	echo "not ok - inline-tui: $*"
	echo "--- screen:"
	tmux -L "$sock" capture-pane -p 2>/dev/null || true
	exit 1
}
screen() { tmux -L "$sock" capture-pane -p; }
keys() { tmux -L "$sock" send-keys "$@"; }
esc() {
	tmux -L "$sock" send-keys Escape
	sleep 0.3
}
text() { tmux -L "$sock" send-keys -l "$1"; }
wait_screen() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	fail "the screen never showed: $1"
}
wait_file() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(cat "$work/work/a.txt") == "$1" ]] && return 0
		sleep 0.1
	done
	fail "a.txt holds '$(cat "$work/work/a.txt")', want '$1'"
}

tmux -L "$sock" -f /dev/null new-session -d -x 160 -y 45 -c "$work/work" \
	env PI_CODING_AGENT_DIR="$work/agent" HOME="$work" ANTHROPIC_API_KEY= OPENAI_API_KEY= GEMINI_API_KEY= TERM=xterm-256color \
	"$nvim" --clean -n -u "$work/init.lua" a.txt
wait_screen "six"
text ":Gopi"
keys Enter
wait_screen "gopi · faux-1"
# A prompt of several lines (<CR> in insert mode is a new line), sent with
# <CR> in normal mode.
text "iedit: a.txt :: two"
keys Enter
text "three"
keys Enter
text "four => TWO"
keys Enter
text "three"
keys Enter
text "FOUR"
esc
keys Enter
keys C-w h
wait_screen "⚑ edit a.txt waits" 10
screen | grep -qE "^ *TWO " && fail "the proposal is on screen before it was opened"
text ":GopiReview"
keys Enter
wait_screen "ga accept hunk"
screen | grep -A1 -E "^- two " | grep -qE "^  TWO " || fail "the added line is not on screen below the removed one"
[[ $(tmux -L "$sock" display -p '#{window_panes}') == 1 ]] || fail "a pane opened"
screen >"$here/artifacts/nvim-inline.txt"
tmux -L "$sock" capture-pane -e -p >"$work/inline.ansi"
[[ $(cat "$work/work/a.txt") == $'one\ntwo\nthree\nfour\nfive\nsix' ]] || fail "a.txt changed before anything was accepted"
keys g a
sleep 0.5
keys g r
wait_file $'one\nTWO\nthree\nfour\nfive\nsix'
wait_screen "gopi was told the edit was denied"
screen | grep -qF "ga accept hunk" && fail "the review is still on screen"
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -n $chromium ]]; then
	"$nvim" --headless --clean -l "$here/screenshot.lua" "$work/inline.ansi" "$work/inline.html"
	"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1380,880 \
		--screenshot="$here/artifacts/nvim-inline.png" "file://$work/inline.html" >/dev/null 2>&1 || true
fi
echo "ok - inline-tui: the proposal showed in the file's own window; ga took one hunk, gr refused the other, the file holds that hunk"
