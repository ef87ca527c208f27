#!/bin/sh
# Test stand-in for mmdebstrap (same command line: options… SUITE TARGET MIRROR): prints mmdebstrap's
# stage lines and lays out a tiny root filesystem with a dpkg database, so the image builder's steps
# (progress, finishing, version detection, failure reporting) run without downloading Debian.
# Fails like mmdebstrap does when asked for python3-torch, to exercise the failure path.
set -e
include=""
for a in "$@"; do case "$a" in --include=*) include="${a#--include=}";; esac; done
n=$#; eval "target=\${$((n - 1))}"
echo "I: chroot architecture amd64 is equal to the host's architecture" >&2
echo "I: running apt-get update..." >&2
echo "I: downloading packages with apt..." >&2
case ",$include," in *,python3-torch,*) echo "E: Unable to locate package python3-torch (stand-in)" >&2; exit 1;; esac
echo "I: extracting archives..." >&2
mkdir -p "$target/etc" "$target/usr/lib" "$target/var/lib/dpkg/info" "$target/root"
printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n' > "$target/usr/lib/os-release"
cat > "$target/var/lib/dpkg/status" <<'STATUS'
Package: bash
Status: install ok installed
Priority: required
Section: shells
Maintainer: test
Architecture: amd64
Version: 5.2.15-2+b7
Description: GNU Bourne Again SHell

Package: python3.11
Status: install ok installed
Priority: optional
Section: python
Maintainer: test
Architecture: amd64
Version: 3.11.2-6+deb12u6
Description: Interactive high-level object-oriented language

STATUS
echo "I: installing remaining packages inside the chroot..." >&2
echo "I: cleaning package lists and apt cache..." >&2
echo "I: success in 1.0000 seconds" >&2
