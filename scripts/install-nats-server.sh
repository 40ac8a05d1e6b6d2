#!/usr/bin/env bash
# Installs nats-server >= 2.10.23 (Debian trixie's 2.10.27) on this Debian machine, as root. Cluster mode needs
# `sync_interval: always` (fsync before a JetStream write is acknowledged): nats-server 2.9 (Debian bookworm's)
# does not have it, and 2.10.20-2.10.22 can lose whole streams on a process crash. Only this one package comes
# from trixie: its index is read into a private apt directory (the system's sources stay as they are) and its .deb
# is fetched with `apt-get download` and installed with dpkg (it depends on libc6 >= 2.34 and adduser only).
# Does nothing when a new enough nats-server is already installed. Used by .ci/run; docs/cluster.md.
set -euo pipefail

MIN_VERSION=2.10.23
export PATH="$PATH:/usr/sbin"

installed_version() {
  command -v nats-server >/dev/null || return 0
  nats-server --version 2>/dev/null | sed -nE 's/^nats-server: v?([0-9.]+).*/\1/p'
}

new_enough() {
  local have=$1
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$MIN_VERSION" "$have" | sort -V | head -n 1)" = "$MIN_VERSION" ]
}

have=$(installed_version)
if new_enough "$have"; then
  echo "nats-server $have is installed (>= $MIN_VERSION)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "nats-server ${have:-(none)} is older than $MIN_VERSION and this is not root: run $0 as root" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work" # apt's download sandbox (user _apt) writes here
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/parts"
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" >"$work/sources.list"
apt_private=(
  -o "Dir::Etc::SourceList=$work/sources.list"
  -o "Dir::Etc::SourceParts=$work/parts"
  -o "Dir::State::Lists=$work/lists"
  -o "Dir::Cache::Archives=$work/archives"
  -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
  -o "APT::Get::List-Cleanup=0"
)
echo "reading Debian trixie's index for nats-server ..."
apt-get "${apt_private[@]}" update -qq
(cd "$work" && apt-get "${apt_private[@]}" download nats-server)
deb=$(ls "$work"/nats-server_*.deb)
mv "$deb" "$work/nats-server.deb"
# apt-get installs the local .deb with its dependencies (adduser, from the system's own sources) and waits for a
# dpkg lock another install holds instead of failing.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "$work/nats-server.deb"
have=$(installed_version)
new_enough "$have" || { echo "installed nats-server is $have, still older than $MIN_VERSION" >&2; exit 1; }
echo "nats-server $have installed from $(basename "$deb")"
