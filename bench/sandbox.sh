#!/usr/bin/env bash
# Sandbox spawn benchmark: a sandboxed /bin/true against a plain fork/exec
# and bubblewrap, from a warm Go process and as whole processes. Prints
# markdown tables (median, p99, child CPU, ratios) for bench/README.md.
# Usage: [CLAW_BASE=REV] bench/sandbox.sh [iterations]   (default 300)
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

# CLAW_BASE=REV: also time a whole `claw sandbox run` (with its helper)
# built from the git revision REV, in the same run
if [ -n "${CLAW_BASE:-}" ] && [ -n "${CLAW_BIN:-}" ]; then
	mkdir -p "$out/base-src" "$out/base"
	git archive "$CLAW_BASE" | tar -x -C "$out/base-src"
	(cd "$out/base-src" && go build -trimpath -o "$out/base/claw" ./cmd/claw &&
		CGO_ENABLED=0 go build -trimpath -o "$out/base/claw-sandbox" ./executor/cmd/claw-sandbox)
	export CLAW_BIN_BASE="$out/base/claw"
fi

echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
CLAW_BENCH=1 CLAW_BENCH_N="${1:-300}" go test -count=1 -run TestSpawnReport -v ./bench/sandbox |
	sed -n '/^$/,/^--- /p' | grep -v '^--- '
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
