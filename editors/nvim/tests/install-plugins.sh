#!/usr/bin/env bash
# Prints, as export lines for eval, where the completion plugins are that
# the end-to-end tests of gopi's completion sources load:
#
#   GOPI_NVIM_CMP    a checkout of nvim-cmp (hrsh7th/nvim-cmp; tested with
#                    commit a1d5048 of 2026-03-25)
#   GOPI_BLINK_CMP   a checkout of blink.cmp (saghen/blink.cmp; tested with
#                    v1.10.2, the newest that runs on Neovim 0.10, and with
#                    v1.8.0-2-g73ea297b)
#
# A variable already set is used; otherwise ~/.cache/gopi/nvim-plugins/NAME
# (nvim-cmp, blink.cmp) is. The repository does not carry the plugins and
# the test machines reach no git host, so without them the tests under the
# plugins are skipped (run.sh says so); clone them there to run them:
#
#   git clone https://github.com/hrsh7th/nvim-cmp ~/.cache/gopi/nvim-plugins/nvim-cmp
#   git clone -b v1.10.2 https://github.com/saghen/blink.cmp ~/.cache/gopi/nvim-plugins/blink.cmp
#
#   eval "$(tests/install-plugins.sh)"
set -euo pipefail

cache=${XDG_CACHE_HOME:-$HOME/.cache}/gopi/nvim-plugins

# variable, directory name in the cache, and a module the copy must have.
plugins=(
	"GOPI_NVIM_CMP nvim-cmp lua/cmp/init.lua"
	"GOPI_BLINK_CMP blink.cmp lua/blink/cmp/init.lua"
)
for p in "${plugins[@]}"; do
	read -r var name module <<<"$p"
	dir=${!var:-$cache/$name}
	[[ -f $dir/$module ]] || { echo "install-plugins.sh: no $name at $dir (set $var to a checkout)" >&2; exit 1; }
	printf 'export %s=%q\n' "$var" "$dir"
done
