#!/usr/bin/env bash
# Runs the plugin's unit tests and its end-to-end tests (child Neovims
# against the gopi binary) under Neovim 0.10 or newer: the one on PATH
# when it is new enough, else Debian trixie's, set up by install-nvim.sh.
#
#   GOPI_BIN   the gopi binary (default: bin/gopi of this repository)
#   GOPI_NODE, GOPI_PI_PACKAGE, GOPI_PI_EXAMPLES
#              the extension host's runtime and pi's examples, for the tests
#              of extensions' UI (skipped without them):
#              eval "$(testdata/pi/ext-env.sh)" sets them
#   GOPI_NVIM_CMP, GOPI_BLINK_CMP
#              nvim-cmp and blink.cmp, for the tests of gopi's completion
#              sources under them: install-plugins.sh sets them (it keeps
#              what is set); without checkouts of them those tests are
#              skipped
#
# An argument filters the end-to-end tests by name; without one, the tests
# in a real terminal (tmux) run too: tui.sh (the chat), review-tui.sh (the
# review), inline-tui.sh (the inline review) and sandbox-tui.sh (the
# sandbox); these three also run when their name contains the filter.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
# shellcheck source=../../../testdata/clients/lib.sh
source "$repo/testdata/clients/lib.sh"
gopi_bin
nvim=$("$here/install-nvim.sh")
export GOPI_TEST_NVIM=$nvim
echo "run.sh: $("$nvim" --version | head -n 1)"
if plugins=$("$here/install-plugins.sh"); then
	eval "$plugins"
	echo "run.sh: nvim-cmp from $GOPI_NVIM_CMP, blink.cmp from $GOPI_BLINK_CMP"
else
	echo "run.sh: nvim-cmp and blink.cmp are not installed: the tests under them will be skipped" >&2
fi

guard=()
command -v timeout >/dev/null 2>&1 && guard=(timeout --kill-after=10 900)
cd "$here/.."
status=0
${guard[@]+"${guard[@]}"} "$nvim" --headless --clean -l tests/unit.lua </dev/null || status=1
${guard[@]+"${guard[@]}"} "$nvim" --headless --clean -l tests/e2e.lua "$@" </dev/null || status=1
# The chat in a real terminal.
if [[ $# -eq 0 ]]; then
	${guard[@]+"${guard[@]}"} "$here/tui.sh" || status=1
fi
# The review in a real terminal (tmux): keys typed while gopi asks stay
# where they were typed. Runs with the others, or by a filter it contains.
if [[ $# -eq 0 || review-tui == *"$1"* ]]; then
	${guard[@]+"${guard[@]}"} "$here/review-tui.sh" || status=1
fi
# The inline review in a real terminal: the proposal in the file's own
# window, one hunk taken and one refused.
if [[ $# -eq 0 || inline-tui == *"$1"* ]]; then
	${guard[@]+"${guard[@]}"} "$here/inline-tui.sh" || status=1
fi
# The sandbox in a real terminal: the statusline names it, the escape
# question offers Allow once and Deny, :checkhealth names it.
if [[ $# -eq 0 || sandbox-tui == *"$1"* ]]; then
	${guard[@]+"${guard[@]}"} "$here/sandbox-tui.sh" || status=1
fi
# A picture of the chat (tests/artifacts/nvim-chat.png), as a user sees it.
if ((status == 0)) && [[ $# -eq 0 ]]; then
	${guard[@]+"${guard[@]}"} "$here/screenshot.sh" || status=1
fi
# A picture of a codemode call (tests/artifacts/nvim-codemode.png): its
# script, its calls under it, what it returned. Runs with the others, or by
# a filter it contains.
if ((status == 0)) && [[ $# -eq 0 || screenshot-codemode == *"$1"* ]]; then
	${guard[@]+"${guard[@]}"} "$here/screenshot-codemode.sh" || status=1
fi
exit "$status"
