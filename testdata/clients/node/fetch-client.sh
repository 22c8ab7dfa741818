#!/usr/bin/env bash
# Fetches pi's published RPC client (dist/modes/rpc/rpc-client.js and the
# jsonl.js it imports) from npm into a git-ignored cache next to this script.
# Idempotent: does nothing when the client is already there.
#
#   PI_VERSION   version of pi's coding agent (default 0.73.1). pi moved from
#                @mariozechner/pi-coding-agent to @earendil-works/pi-coding-agent;
#                versions from 0.74 on are fetched from the new name.
#
# Prints the cache directory on success.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=${PI_VERSION:-0.73.1}
minor=$(printf '%s' "$version" | cut -d. -f2)
if [[ ${version%%.*} == 0 && $minor -lt 74 ]]; then
	pkg="@mariozechner/pi-coding-agent@$version"
else
	pkg="@earendil-works/pi-coding-agent@$version"
fi
dest="$here/.cache/pi-coding-agent-$version"
files=(rpc-client.js jsonl.js)

die() { echo "fetch-client.sh: $*" >&2; exit 1; }

have_all() {
	local f
	for f in "${files[@]}" package.json; do
		[[ -s $dest/$f ]] || return 1
	done
}

if have_all; then
	echo "$dest"
	exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm is not installed; it is needed to fetch $pkg"
command -v tar >/dev/null 2>&1 || die "tar is not installed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pi-client.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if ! tgz=$(cd "$tmp" && npm pack --loglevel=error --pack-destination "$tmp" "$pkg" 2>"$tmp/npm.err"); then
	cat "$tmp/npm.err" >&2
	die "npm pack $pkg failed (is the npm registry reachable?)"
fi
tgz=$(printf '%s\n' "$tgz" | tail -n 1)
[[ -f $tmp/$tgz ]] || die "npm pack did not produce a tarball for $pkg (got '$tgz')"

members=()
for f in "${files[@]}"; do members+=("package/dist/modes/rpc/$f"); done
tar -xzf "$tmp/$tgz" -C "$tmp" "${members[@]}" ||
	die "$pkg does not contain ${members[*]}"

# The client must run with nothing but Node: every import has to be a node:
# built-in or one of the files fetched here.
for f in "${files[@]}"; do
	while IFS= read -r spec; do
		case $spec in
		node:*) ;;
		./jsonl.js | ./rpc-client.js) ;;
		*) die "$f in $pkg imports '$spec'; only node: built-ins and the fetched files are allowed" ;;
		esac
	done < <(grep -oE '(from|import|require)[[:space:]]*\(?[[:space:]]*"[^"]+"' "$tmp/package/dist/modes/rpc/$f" | sed -E 's/.*"([^"]+)"$/\1/')
done

stage="$dest.partial.$$"
rm -rf "$stage"
mkdir -p "$stage"
for f in "${files[@]}"; do cp "$tmp/package/dist/modes/rpc/$f" "$stage/"; done
# The package is ESM ("type": "module"); the extracted files need the same.
printf '{\n  "name": "pi-rpc-client-cache",\n  "private": true,\n  "version": "%s",\n  "type": "module"\n}\n' "$version" >"$stage/package.json"
if have_all; then
	# Another run fetched it meanwhile.
	rm -rf "$stage"
else
	rm -rf "$dest"
	mv "$stage" "$dest"
fi
echo "$dest"
