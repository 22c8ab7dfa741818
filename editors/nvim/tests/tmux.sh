# shellcheck shell=bash
# What the tests of Neovim's real TUI share (tui.sh, review-tui.sh,
# inline-tui.sh, screenshot.sh, screenshot-context.sh): sourced after
# `name` is set to the script's name. It makes $work, a temporary home
# with agent/ (gopi's agent directory) and work/ (the editor's working
# directory), and a tmux server of its own on $sock; both go at exit.
#
#   GOPI_BIN      the gopi binary
#   GOPI_TEST_NVIM the Neovim to run (0.10 or newer)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plugin=$(cd "$here/.." && pwd)
nvim=${GOPI_TEST_NVIM:?}
gopi=${GOPI_BIN:?}
command -v tmux >/dev/null || { echo "$name: tmux is needed" >&2; exit 1; }

work=$(mktemp -d)
sock=gopi-$name-$$
# The editor is given a moment to go before its files do.
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; sleep 0.5; rm -rf "$work"' EXIT
mkdir -p "$work/agent" "$work/work" "$here/artifacts"

# write_init FIELDS [colours]: $work/init.lua loads the plugin and sets it
# up on the faux model with FIELDS added to setup()'s table; "colours"
# also gives the editor true colour and the habamax scheme (for pictures).
write_init() {
	local colours=
	if [[ ${2:-} == colours ]]; then
		colours=$'vim.o.termguicolors = true\nvim.cmd("colorscheme habamax")'
	fi
	cat >"$work/init.lua" <<LUA
vim.opt.rtp:prepend("$plugin")
$colours
vim.cmd("runtime plugin/gopi.lua")
require("gopi").setup({ cmd = "$gopi", provider = "faux", model = "faux-1", $1 })
LUA
}

# start_nvim COLUMNS ROWS FILE: the editor on FILE in a pane that size, in
# $work/work, with no key of any provider (gopi runs on faux).
start_nvim() {
	tmux -L "$sock" -f /dev/null new-session -d -x "$1" -y "$2" -c "$work/work" \
		env PI_CODING_AGENT_DIR="$work/agent" HOME="$work" ANTHROPIC_API_KEY= OPENAI_API_KEY= GEMINI_API_KEY= TERM=xterm-256color \
		"$nvim" --clean -n -u "$work/init.lua" "$3"
}

screen() { tmux -L "$sock" capture-pane -p; }
keys() { tmux -L "$sock" send-keys "$@"; }
text() { tmux -L "$sock" send-keys -l "$1"; }
# <Esc> alone: a key right after it would read as an Alt chord.
esc() {
	keys Escape
	sleep 0.3
}

# fail ends the test, showing the screen; a script that counts its
# checks defines its own.
fail() {
	echo "not ok - $name: $*"
	echo "--- screen:"
	screen 2>/dev/null || true
	exit 1
}

# Waits up to $2 seconds (default 10) for the screen to show $1.
wait_screen() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	fail "the screen never showed: $1"
}

chromium=$(command -v chromium || command -v chromium-browser || true)

# picture PNG WIDTH,HEIGHT: the pane as it is now, colours included,
# rendered by Chromium (through screenshot.lua's HTML) into PNG.
picture() {
	local shot
	shot=$(mktemp -d "$work/shot.XXXX")
	tmux -L "$sock" capture-pane -e -p >"$shot/screen.ansi"
	"$nvim" --headless --clean -l "$here/screenshot.lua" "$shot/screen.ansi" "$shot/screen.html"
	"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$2" \
		--screenshot="$1" "file://$shot/screen.html" >/dev/null 2>&1
}
