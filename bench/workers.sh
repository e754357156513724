#!/usr/bin/env bash
# Armed workers before and after, side by side in one run: the broker's
# BenchmarkFileRead (on demand, prestarted, back to back) and
# BenchmarkShellTrue (the same three for a shell `true`, beside its anchor,
# a bare `bwrap --unshare-all` running /bin/true), with BenchmarkTime (the
# gate and two durable receipts, no sandbox: the broker's part of each), of
# REV (default: the merge base with main) and of the working tree,
# interleaved ROUNDS times
# so both see the same load. Prints the load average before and after
# each round and, per case, p50 and p99 of each side.
# Needs root or unprivileged user namespaces, and bwrap for the anchor.
# Usage: bench/workers.sh [REV] [N] [ROUNDS]   (defaults: merge base, 200, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-$(git merge-base HEAD main)}
n=${2:-200}
rounds=${3:-2}
scripts/deps.sh bubblewrap
old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
git archive "$rev" | tar -x -C "$old"
# the measure is this tree's benchmark file, run against REV's code
cp internal/broker/bench_test.go "$old/internal/broker/bench_test.go"

bench() { # DIR: "case p50 p99" per line, in ms
	(cd "$1" && CLAW_REQUIRE_SANDBOX=1 go test -count=1 -run '^$' -bench 'BenchmarkFileRead|BenchmarkShellTrue|BenchmarkTime' -benchtime "${n}x" ./internal/broker) |
		awk '/^Benchmark/ {for (i=1;i<=NF;i++) {if ($(i+1)=="p50-ms") p=$i; if ($(i+1)=="p99-ms") q=$i}; sub(/-[0-9]+$/, "", $1); print $1, p, q}'
}

echo "== before: $(git rev-parse --short "$rev"), after: working tree; n=$n; kernel $(uname -r), $(nproc) CPUs"
for r in $(seq 1 "$rounds"); do
	echo "== round $r, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	before=$(bench "$old")
	after=$(bench .)
	printf '%-52s %10s %10s %10s %10s\n' case "before p50" "before p99" "after p50" "after p99"
	join <(sort <<<"$before") <(sort <<<"$after") | while read -r c bp bq ap aq; do
		printf '%-52s %7s ms %7s ms %7s ms %7s ms\n' "$c" "$bp" "$bq" "$ap" "$aq"
	done
	echo "== round $r, load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
