#!/usr/bin/env bash
# Installs the system packages claw needs to build and test, when missing.
# Usage: scripts/deps.sh [extra-debian-package...]
set -euo pipefail

need=()
dpkg -s libseccomp-dev >/dev/null 2>&1 || need+=(libseccomp-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
# claw service: systemd-analyze scores the unit; setpriv recreates its restrictions in tests
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
# The MCP foreign-client tests need node and npm when CLAW_REQUIRE_NODE is set.
if [ -n "${CLAW_REQUIRE_NODE:-}" ] && ! command -v npm >/dev/null 2>&1; then
	need+=(nodejs npm)
fi
for p in "$@"; do
	dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
[ ${#need[@]} -eq 0 ] && exit 0

echo "claw: installing missing packages: ${need[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
	$sudo apt-get update -qq
	$sudo apt-get install -y --no-install-recommends "${need[@]}"
fi
