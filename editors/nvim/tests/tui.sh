#!/usr/bin/env bash
# Tests of the chat in a real terminal: Neovim's TUI in a tmux pane, driven
# with send-keys and read with capture-pane, against the gopi binary on the
# faux model.
#
#   - the chat keeps its configured width (0.4 of the columns) when the
#     terminal is resized;
#   - a reply longer than the chat's window scrolls it while it streams, and
#     its end is on screen when it is done.
#
# Ends with "N passed, N failed" and exits 1 on any failure.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/tui.sh
name=tui
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
export LC_ALL=C.UTF-8
printf 'package main\n\nfunc main() {}\n' >"$work/work/main.go"
write_init 'approval = "off"'

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() {
	failed=$((failed + 1))
	echo "not ok - $1"
	screen | sed 's/^/    | /'
}
# The column (0-based) the chat's window starts at: after the vertical
# separator of the file's window on its left (on the third row).
chat_col() {
	local row prefix
	row=$(screen | sed -n 3p)
	[[ $row == *"│"* ]] || { echo -1; return; }
	prefix=${row%%"│"*}
	echo "$((${#prefix} + 1))"
}
# Waits up to $2 seconds for the command $1 to succeed.
until_ok() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		if eval "$1"; then return 0; fi
		sleep 0.1
	done
	return 1
}
# The largest number the chat's window shows (the streamed reply's "1 2 3 …").
chat_max() {
	local col
	col=$(chat_col)
	((col >= 0)) || { echo 0; return; }
	local line
	screen | while IFS= read -r line; do
		# The window ends at its status line (with the cursor's position).
		[[ $line == *gopi://chat* ]] && break
		# (Not the prompt's "stream: N" the chat shows above the reply.)
		[[ $line == *stream:* ]] || printf '%s\n' "${line:col}"
	done | grep -o '[0-9]\+' | sort -n | tail -n 1
}

start_nvim 160 45 main.go
until_ok '[[ $(screen) == *"package main"* ]]' 10 || true
text ":Gopi"
keys Enter

name="the chat is 0.4 of 160 columns, then of 100 after the terminal is resized"
if until_ok '[[ $(chat_col) == 96 ]]' 10; then
	tmux -L "$sock" resize-window -x 100 -y 30
	if until_ok '[[ $(chat_col) == 60 ]]' 10; then
		pass "$name"
	else
		fail "$name (the chat starts at column $(chat_col), not 60)"
	fi
else
	fail "$name (the chat starts at column $(chat_col), not 96)"
fi

# faux-1 streams a number each 25 ms: 800 of them take 20 s. The chat's
# window (40 columns, 22 rows) holds about the first 200.
name="a long reply scrolls the chat while it streams, and ends on screen"
text ":Gopi stream: 800"
keys Enter
if ! until_ok '(( $(chat_max) >= 400 ))' 30; then
	fail "$name (the chat shows no number past $(chat_max) while streaming)"
elif ! until_ok '[[ $(screen) == *"799 800"* ]]' 30; then
	fail "$name (the end of the reply is not on screen)"
else
	pass "$name"
fi

echo "$passed passed, $failed failed"
((failed == 0))
