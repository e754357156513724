#!/usr/bin/env bash
# Agent benchmarks: `claw agent -m` wall time on the mock provider (a text
# reply, and a turn with one sandboxed file_list), against `claw version`
# (the process-start floor) in the same run; and the resident memory of an
# idle REPL on a terminal. Prints a markdown table for bench/README.md.
# Usage: bench/agent.sh [runs]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-30}
out=$(mktemp -d)
trap 'pkill -f "$out/claw agent" 2>/dev/null || true; rm -rf "$out"' EXIT
chmod 755 "$out"
go build -trimpath -o "$out/claw" ./cmd/claw
CGO_ENABLED=0 go build -trimpath -o "$out/claw-sandbox" ./executor/cmd/claw-sandbox
export CLAW_HOME="$out/.claw" HOME="$out/home"
mkdir -p "$HOME"
"$out/claw" init --workspace "$out/ws" >/dev/null
"$out/claw" keys generate --unencrypted >/dev/null 2>&1
echo hi > "$out/ws/a.txt"

# time_ms CMD...: run CMD n times, print median and p90 wall in ms
time_ms() {
	local ts=()
	for _ in $(seq "$n"); do
		local s e
		s=$(date +%s%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s%N)
		ts+=($(((e - s) / 1000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f | %.1f", a[int((NR+1)/2)]/1000, a[int(NR*0.9+0.5)]/1000}'
}

echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $n runs each"
echo
echo "| command | median ms | p90 ms |"
echo "|---|---|---|"
echo "| claw version (process floor) | $(time_ms "$out/claw" version) |"
echo "| claw agent -m 'hello' (text reply) | $(time_ms "$out/claw" agent -m hello) |"
echo "| claw agent -m 'which files are here' (one sandboxed file_list) | $(time_ms "$out/claw" agent -m 'which files are here') |"

# idle REPL on a terminal: RSS after it has drawn its prompt
if command -v script >/dev/null 2>&1; then
	(sleep 4) | script -qec "$out/claw agent" /dev/null >/dev/null 2>&1 &
	sleep 2.5
	pid=$(pgrep -f "^$out/claw agent" | head -1 || true)
	if [ -n "$pid" ]; then
		rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
		hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
		echo
		echo "idle REPL: RSS $((rss / 1024)) MB (peak $((hwm / 1024)) MB)"
	fi
	wait || true
fi
