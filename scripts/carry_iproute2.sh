#!/usr/bin/env bash
# carry_iproute2.sh: unpacks Debian's iproute2 (ip, tc) and the shared
# libraries it needs into .carry/iproute2 (ignored by git), for a machine
# whose image has no ip or tc. Nothing is installed here; the packages are
# only downloaded and unpacked. There:
#   export PATH=$PWD/.carry/iproute2/bin:$PATH LD_LIBRARY_PATH=$PWD/.carry/iproute2/lib
set -euo pipefail
cd "$(dirname "$0")/.."
out=.carry/iproute2
# libelf's package was renamed in Debian 13 (64-bit time_t).
elf=libelf1; apt-cache show libelf1t64 >/dev/null 2>&1 && elf=libelf1t64
pkgs=(iproute2 libbpf1 "$elf" libmnl0 libcap2 libxtables12 libbsd0 libmd0 zlib1g)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
(cd "$t" && apt-get download "${pkgs[@]}" >/dev/null)
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
for d in "$t"/*.deb; do dpkg -x "$d" "$t/root"; done
cp -p "$t/root/usr/bin/ip" "$t/root/usr/sbin/tc" "$out/bin/" 2>/dev/null || cp -p "$t/root/sbin/ip" "$t/root/sbin/tc" "$out/bin/"
cp -a "$t"/root/usr/lib/*-linux-gnu/*.so* "$out/lib/" 2>/dev/null || true
cp -a "$t"/root/lib/*-linux-gnu/*.so* "$out/lib/" 2>/dev/null || true
du -sh "$out"
