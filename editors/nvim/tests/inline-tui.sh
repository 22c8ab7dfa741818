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
name=inline-tui
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
printf 'one\ntwo\nthree\nfour\nfive\nsix\n' >"$work/work/a.txt"
write_init 'approval = "writes", review = "inline"' colours

wait_file() {
	local i
	for ((i = 0; i < 100; i++)); do
		[[ $(cat "$work/work/a.txt") == "$1" ]] && return 0
		sleep 0.1
	done
	fail "a.txt holds '$(cat "$work/work/a.txt")', want '$1'"
}

start_nvim 160 45 a.txt
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
[[ -z $chromium ]] || picture "$here/artifacts/nvim-inline.png" 1380,880 || true
[[ $(cat "$work/work/a.txt") == $'one\ntwo\nthree\nfour\nfive\nsix' ]] || fail "a.txt changed before anything was accepted"
keys g a
sleep 0.5
keys g r
wait_file $'one\nTWO\nthree\nfour\nfive\nsix'
wait_screen "gopi was told the edit was denied"
screen | grep -qF "ga accept hunk" && fail "the review is still on screen"
echo "ok - inline-tui: the proposal showed in the file's own window; ga took one hunk, gr refused the other, the file holds that hunk"
