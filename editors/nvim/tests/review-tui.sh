#!/usr/bin/env bash
# The review in a real terminal: Neovim in a tmux pane (160×45) with the
# plugin, gopi on the faux model and approval = "writes". A prompt asks for
# an edit, and at once the user goes back to their file (<C-w>h), opens a
# line (o) and types on while gopi's question arrives. The keys must all
# land in the user's file, no review may open by itself; then :GopiReview
# opens it (its keys on screen, out of insert mode), ga accepts, and the
# file holds gopi's proposal. The last screens are kept in
# tests/artifacts/nvim-review-*.txt.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/review-tui.sh
name=review-tui
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
printf 'hello world\n' >"$work/work/a.txt"
printf 'mine\n' >"$work/work/b.txt"
write_init 'approval = "writes"'

# The editor's state, written by the editor into a file: what it holds, as
# it is, read after the keys were typed (a command line typed in normal mode).
state() {
	rm -f "$work/state"
	esc
	text ":lua vim.fn.writefile({ vim.fn.bufname(), tostring(#vim.api.nvim_list_tabpages()), tostring(#(require('gopi.review').pending or {})), table.concat(vim.api.nvim_buf_get_lines(vim.fn.bufnr('b.txt'), 0, -1, false), '|') }, '$work/state')"
	keys Enter
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s $work/state ]] && return 0
		sleep 0.1
	done
	fail "the editor did not write its state"
}

start_nvim 160 45 b.txt
wait_screen "mine"
text ":Gopi"
keys Enter
wait_screen "gopi · faux-1"
# The prompt window has the cursor: type the prompt and send it with <CR>.
text "iedit: a.txt :: hello => bye"
esc
keys Enter
# At once back to the file, a new line, and typing on while gopi asks.
keys C-w h
text "Go"
words=()
for i in $(seq 1 30); do
	text "w$i "
	words+=("w$i")
	sleep 0.1
done
esc
typed="${words[*]} "
# Where the keys went, and what opened meanwhile.
sleep 1
state
mapfile -t st <"$work/state"
[[ ${st[0]} == b.txt ]] || fail "the cursor left the user's window: in ${st[0]}"
[[ ${st[1]} == 1 ]] || fail "a tab opened by itself (${st[1]} tabs)"
[[ ${st[3]} == "mine|$typed" ]] || fail "the typed keys are not all in b.txt: '${st[3]}', want 'mine|$typed'"
# gopi's question has come: it waits, announced.
wait_screen "⚑ edit a.txt waits" 10
state
mapfile -t st <"$work/state"
[[ ${st[2]} == 1 ]] || fail "no question waiting (${st[2]})"
screen | grep -qF "(proposed)" && fail "a review is on screen"
screen | grep -qF "w30" || fail "the typing is not on screen"
screen >"$here/artifacts/nvim-review-announced.txt"
[[ $(cat "$work/work/a.txt") == "hello world" ]] || fail "a.txt changed before the review was accepted"

# The user opens the review, from insert mode.
text "A!"
esc
text ":GopiReview"
keys Enter
wait_screen "a.txt (proposed)"
wait_screen "ga accept · gr reject · gA allow always"
screen | grep -qF -- "-- INSERT --" && fail "the review is in insert mode"
screen >"$here/artifacts/nvim-review-open.txt"
# A picture of the review, when Chromium is there to render it.
[[ -z $chromium ]] || picture "$here/artifacts/nvim-review.png" 1380,880 || true
keys g a
for ((i = 0; i < 100; i++)); do
	[[ $(cat "$work/work/a.txt") == "bye world" ]] && break
	sleep 0.1
done
[[ $(cat "$work/work/a.txt") == "bye world" ]] || fail "a.txt does not hold gopi's proposal after ga: $(cat "$work/work/a.txt")"
state
mapfile -t st <"$work/state"
[[ ${st[1]} == 1 && ${st[2]} == 0 ]] || fail "the review did not close (${st[1]} tabs, ${st[2]} waiting)"
[[ ${st[3]} == "mine|$typed!" ]] || fail "b.txt changed: '${st[3]}'"
echo "ok - review-tui: typing stayed in the user's window while gopi asked; :GopiReview opened it, ga wrote the proposal"
