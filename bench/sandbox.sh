#!/usr/bin/env bash
# Sandbox spawn benchmark: a sandboxed /bin/true against a plain fork/exec
# and bubblewrap, from a warm Go process and as whole processes. Prints
# markdown tables (median, p99, child CPU, ratios) for bench/README.md.
# Usage: bench/sandbox.sh [iterations]   (default 300)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh bubblewrap

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
# claw and its helper, as make installs them; if claw does not build, the
# whole-process rows are skipped
if go build -trimpath -o "$out/claw" ./cmd/claw 2>/dev/null; then
	CGO_ENABLED=0 go build -trimpath -o "$out/claw-sandbox" ./executor/cmd/claw-sandbox
	export CLAW_BIN="$out/claw"
else
	echo "claw: cmd/claw does not build; skipping the whole-process rows" >&2
fi

echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
CLAW_BENCH=1 CLAW_BENCH_N="${1:-300}" go test -count=1 -run TestSpawnReport -v ./bench/sandbox |
	sed -n '/^$/,/^--- /p' | grep -v '^--- '
