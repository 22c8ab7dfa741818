#!/usr/bin/env bash
# A picture of :GopiRewind's preview (:help gopi-rewind): Neovim in a tmux
# pane (120×36) in a git repository, where two prompts to the gopi binary on
# the faux model edit main.go and write notes.md; :GopiRewind lists the two
# checkpoints through the default vim.ui.select, the older one is picked,
# and the question that follows is dismissed, which leaves the preview: the
# files restoring it would change and their diffs. The pane becomes HTML
# (screenshot.lua) and Chromium renders it to tests/artifacts/nvim-rewind.png.
# Then the rewind goes ahead through the same lists, and the script checks
# the files on disk and that its message waits for no key.
#
#   GOPI_BIN=... GOPI_TEST_NVIM=... tests/screenshot-rewind.sh
name=screenshot-rewind
# shellcheck source=tmux.sh
source "$(dirname "${BASH_SOURCE[0]}")/tmux.sh"
[[ -n $chromium ]] || { echo "screenshot-rewind.sh: chromium is needed" >&2; exit 1; }
printf 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello")\n}\n' >"$work/work/main.go"
git -C "$work/work" init -q
git -C "$work/work" add main.go
git -C "$work/work" -c user.name=gopi -c user.email=gopi@example.com commit -q -m "hello"
write_init 'approval = "off"' colours
start_nvim 120 36 main.go
sleep 1
keys -l ':Gopi'
keys Enter
sleep 1
text 'iedit: main.go :: "hello" => "hello, world"'
esc
keys Enter
wait_screen '"hello, world"'
sleep 1
text 'iwrite: notes.md :: # Notes'
esc
keys Enter
sleep 2
keys -l ':GopiRewind'
keys Enter
# The default vim.ui.select: a numbered list; 2 is the older checkpoint.
wait_screen 'gopi: rewind to'
screen | sed -n '/gopi: rewind to/,$p'
keys -l '2'
keys Enter
wait_screen 'gopi: rewind what?'
esc
wait_screen 'restore…'
sleep 0.5
picture "$here/artifacts/nvim-rewind.png" 1040,720
echo "screenshot-rewind.sh: wrote $here/artifacts/nvim-rewind.png"
# Then the rewind itself, through the same lists: the code and the
# conversation, confirmed; it ends on one line that waits for no key.
keys Enter
wait_screen 'gopi: rewind what?'
keys -l '1'
keys Enter
wait_screen '2: Cancel'
keys -l '1'
keys Enter
wait_screen 'rewound to'
screen | tail -n 3
! screen | grep -qF 'Press ENTER' || fail "a message waits for a key"
grep -qF 'fmt.Println("hello")' "$work/work/main.go" || fail "main.go was not restored"
[[ ! -e $work/work/notes.md ]] || fail "notes.md, added since, is still there"
