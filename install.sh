#!/bin/sh
# Installs gopi from a release: picks the archive for this platform from the
# release's SHA256SUMS, downloads it, checks its SHA-256, and puts the gopi
# binary in ~/.local/bin (or $GOPI_INSTALL_DIR). Nothing is installed when a
# download or the check fails.
#
#   curl -fsSL https://github.com/gopi-dev/gopi/releases/latest/download/install.sh | sh
#
# Environment:
#   GOPI_VERSION      a release such as 0.1.0 (default: the latest)
#   GOPI_INSTALL_DIR  where gopi goes (default: ~/.local/bin)
#   GOPI_BASE_URL     where SHA256SUMS and the archives are (default: the
#                     GitHub release of GOPI_VERSION); the tests serve a
#                     dist/ folder made by `make release` from loopback
set -eu

repo_url=https://github.com/gopi-dev/gopi
version=${GOPI_VERSION:-latest}
if [ -n "${GOPI_BASE_URL:-}" ]; then
	base=${GOPI_BASE_URL%/}
elif [ "$version" = latest ]; then
	base=$repo_url/releases/latest/download
else
	base=$repo_url/releases/download/v${version#v}
fi
dir=${GOPI_INSTALL_DIR:-${HOME:?HOME is not set; set GOPI_INSTALL_DIR}/.local/bin}

say() { printf 'gopi install: %s\n' "$*" >&2; }
die() {
	say "$*"
	exit 1
}

case $(uname -s) in
Linux) os=linux ext=tar.gz exe= ;;
Darwin) os=darwin ext=tar.gz exe= ;;
MINGW* | MSYS* | CYGWIN*) os=windows ext=zip exe=.exe ;;
*) die "no gopi release for $(uname -s); build it with Go: go install github.com/gopi-dev/gopi/cmd/gopi@latest" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no gopi release for $(uname -m); build it with Go: go install github.com/gopi-dev/gopi/cmd/gopi@latest" ;;
esac
# A shell under Rosetta reports x86_64 on Apple silicon: take the native build.
if [ "$os" = darwin ] && [ "$arch" = amd64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
	arch=arm64
fi

if command -v curl >/dev/null 2>&1; then
	fetch() { curl -fsSL --proto '=https,http' -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
	fetch() { wget -q -O "$2" "$1"; }
else
	die "curl or wget is needed to download gopi"
fi
if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
	sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
	die "sha256sum or shasum is needed to check the download"
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t gopi)
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || die "cannot download $base/SHA256SUMS"
# Lines are "<sha256>  <file>"; the archive is gopi-<version>-<os>-<arch>.<ext>.
suffix="-$os-$arch.$ext"
name=$(awk -v s="$suffix" '{ n = $2; sub(/^\*/, "", n) } n ~ /^gopi-[^\/]*$/ && length(n) > length(s) && substr(n, length(n) - length(s) + 1) == s { print n; exit }' "$tmp/SHA256SUMS")
[ -n "$name" ] || die "$base/SHA256SUMS lists no archive for $os-$arch"
want=$(awk -v n="$name" '{ f = $2; sub(/^\*/, "", f) } f == n { print tolower($1); exit }' "$tmp/SHA256SUMS")

fetch "$base/$name" "$tmp/$name" || die "cannot download $base/$name"
got=$(sha256 "$tmp/$name")
[ "$got" = "$want" ] || die "$name does not match its checksum (SHA256SUMS says $want, the download is $got): nothing installed"

mkdir "$tmp/x"
case $ext in
tar.gz) tar -xzf "$tmp/$name" -C "$tmp/x" ;;
zip)
	command -v unzip >/dev/null 2>&1 || die "unzip is needed to unpack $name"
	unzip -q "$tmp/$name" -d "$tmp/x"
	;;
esac
[ -f "$tmp/x/gopi$exe" ] || die "$name has no gopi$exe at its top"

mkdir -p "$dir"
# Copied beside the target and renamed over it, so a gopi that is running
# keeps its file and a failed copy leaves the old one.
cp "$tmp/x/gopi$exe" "$dir/.gopi$exe.$$"
chmod 755 "$dir/.gopi$exe.$$"
mv -f "$dir/.gopi$exe.$$" "$dir/gopi$exe"

installed=$("$dir/gopi$exe" --version 2>/dev/null | head -n 1) || installed="gopi (it did not run here: check $dir/gopi$exe)"
say "installed $installed to $dir/gopi$exe ($name from $base, SHA-256 checked)"
case ":$PATH:" in
*":$dir:"*) ;;
*) say "$dir is not on your PATH; add it, e.g. in ~/.profile: export PATH=\"$dir:\$PATH\"" ;;
esac
