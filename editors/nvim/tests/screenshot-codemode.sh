#!/usr/bin/env bash
# A picture of a codemode call in the chat (:help gopi-codemode): Neovim in
# a tmux pane (120×40) asks the gopi binary on the faux model (codemode on:
# --tools +codemode) to run a script that runs bash and reads a file at
# once. The card shows the script as a javascript block (Vim's markdown
# syntax highlights it, as g:markdown_fenced_languages asks), the two calls
# indented under it and what the script returned. The pane becomes HTML
# (screenshot.lua) and Chromium renders it to
# tests/artifacts/nvim-codemode.png.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/screenshot-codemode.sh
name=screenshot-codemode
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
[[ -n $chromium ]] || { echo "screenshot-codemode.sh: chromium is needed" >&2; exit 1; }
printf 'remember the milk\n' >"$work/work/notes.txt"
write_init 'approval = "off", args = { "--tools", "+codemode" }' colours
echo 'vim.g.markdown_fenced_languages = { "javascript" }' >>"$work/init.lua"
start_nvim 120 40 notes.txt
sleep 1
script='const [cmd, notes] = await Promise.all([\n  tools.bash({ command: \"echo nested\" }),\n  tools.read({ path: \"notes.txt\" }),\n]);\nconsole.log(\"bash exited with\", cmd.exit_code);\ntext(\"bash said: \" + cmd.output.trim());\nreturn notes;'
text ":Gopi call: codemode {\"code\": \"$script\"}"
keys Enter
wait_screen "Tool said" 30
# The finished card folds closed: open it, and show the chat from the card.
text ":call win_execute(bufwinid('gopi://chat'), 'normal! zR')"
keys Enter
text ":call win_execute(bufwinid('gopi://chat'), 'call search(\"codemode:\") | normal! zt')"
keys Enter
wait_screen "Script completed in"
wait_screen '```javascript'
wait_screen "    ✓ bash: echo nested"
wait_screen "    ✓ read: notes.txt"
picture "$here/artifacts/nvim-codemode.png" 1040,800
screen >"$here/artifacts/nvim-codemode.txt"
echo "screenshot-codemode.sh: wrote $here/artifacts/nvim-codemode.png"
