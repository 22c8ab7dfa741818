#!/usr/bin/env bash
# Prints the path of a Neovim 0.10 or newer to test with. The one on PATH
# when it is new enough; otherwise Debian trixie's neovim 0.10.4, unpacked
# (dpkg -x, with trixie's own libc and its loader) into
# ~/.cache/gopi/nvim-0.10.4-trixie on first use. The nvim binary there is
# pointed at trixie's loader and libraries with patchelf (its TUI re-runs
# its own executable, so starting it through the loader would not do),
# and a wrapper script sets VIMRUNTIME. The system's packages are not
# touched: apt runs with a private state directory, from the mirror the
# system's own sources name.
set -euo pipefail

ok() { "$1" --headless --clean -c 'if !has("nvim-0.10") | cquit | endif' -c 'qall!' </dev/null >/dev/null 2>&1; }
if command -v nvim >/dev/null 2>&1 && ok nvim; then
	command -v nvim
	exit 0
fi

root=${XDG_CACHE_HOME:-$HOME/.cache}/gopi/nvim-0.10.4-trixie
wrapper=$root/bin/nvim
if [[ -x $wrapper ]] && ok "$wrapper"; then
	echo "$wrapper"
	exit 0
fi

if ! command -v patchelf >/dev/null 2>&1; then
	apt-get install -y -qq patchelf >/dev/null 2>&1 || { echo "install-nvim.sh: patchelf is needed (apt-get install patchelf)" >&2; exit 1; }
fi
mirror=$(grep -rhoE '^(URIs:|deb) +[a-z]+://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | awk '{print $2}' | grep -E '/debian/?$' | head -n 1 || true)
[[ -n $mirror ]] || { echo "install-nvim.sh: no Debian mirror found in /etc/apt sources" >&2; exit 1; }
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
mkdir -p "$state"/{lists/partial,cache/archives/partial,debs}
echo "deb $mirror trixie main" >"$state/sources.list"
apt=(-o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o Dir::State::Lists="$state/lists" -o Dir::Cache="$state/cache" -o Dir::State::status=/dev/null
	-o APT::Sandbox::User=root)
apt-get "${apt[@]}" -qq update >&2
pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances neovim | grep -v '^ ' | grep -v '^<' | sort -u)
# shellcheck disable=SC2086
(cd "$state/debs" && apt-get "${apt[@]}" -qq download $pkgs >&2)
rm -rf "$root"
mkdir -p "$root/bin"
for deb in "$state"/debs/*.deb; do dpkg -x "$deb" "$root"; done
lib=$root/usr/lib/x86_64-linux-gnu
# DT_RPATH (not RUNPATH) so the libraries nvim loads find trixie's libc too.
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" "$root/usr/bin/nvim"
cat >"$wrapper" <<WRAP
#!/bin/sh
# Neovim 0.10.4 from Debian trixie, on trixie's libc (see install-nvim.sh).
export VIMRUNTIME="$root/usr/share/nvim/runtime"
exec "$root/usr/bin/nvim" "\$@"
WRAP
chmod +x "$wrapper"
ok "$wrapper" || { echo "install-nvim.sh: the unpacked Neovim does not start" >&2; exit 1; }
echo "$wrapper"
