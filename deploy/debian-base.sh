#!/usr/bin/env bash
# A local base image for the Dockerfile where no container registry can be reached: Debian bookworm
# from Debian's packages (debootstrap) with python3, python3-venv and this machine's CA certificates,
# so that pip inside the build trusts what pip on this machine trusts. Needs root, debootstrap and a
# Docker engine; takes a few minutes. Then:
#   docker build --build-arg BASE_IMAGE=croupier-base:bookworm -t croupier .
# Usage: deploy/debian-base.sh [TAG]   (DEBIAN_MIRROR overrides the mirror)
set -euo pipefail
tag=${1:-croupier-base:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /var/tmp/croupier-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap of bookworm into $root (log: $root.log)"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
  bookworm "$root" "$mirror" >"$root.log" 2>&1 || { tail -20 "$root.log"; exit 1; }
# This machine's own authorities (an egress proxy's, a company's), kept where update-ca-certificates
# finds them again, and the bundle pip and Python read.
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
  cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
tar -C "$root" --numeric-owner -c . \
  | docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' - "$tag" >/dev/null
rm -f "$root.log"
echo "built $tag"
