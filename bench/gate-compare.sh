#!/usr/bin/env bash
# Decision time of the gate before and after a change, side by side in one
# run: BenchmarkDecide (the benchmark mix, in-process, prepared query) of
# REV (default: the merge base with main) and of the working tree,
# interleaved ROUNDS times so both see the same load. Prints the load
# average before and after and, per round, p50 and p99 of each side.
# Usage: bench/gate-compare.sh [REV] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-$(git merge-base HEAD main)}
rounds=${2:-3}
old=$(mktemp -d)
trap 'git worktree remove --force "$old" >/dev/null 2>&1 || rm -rf "$old"' EXIT
git worktree add -q --detach "$old" "$rev"

bench() { # DIR: one BenchmarkDecide run, "p50 p99" in µs
	(cd "$1" && go test -run '^$' -bench '^BenchmarkDecide$' -benchtime 2000x -count 1 ./gate) |
		awk '/^BenchmarkDecide-/ {for (i=1;i<=NF;i++) {if ($(i+1)=="p50-µs") p=$i; if ($(i+1)=="p99-µs") q=$i}; print p, q}'
}

echo "== before: $(git rev-parse --short "$rev"), after: working tree"
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %12s %12s %12s\n' round "before p50" "before p99" "after p50" "after p99"
for r in $(seq 1 "$rounds"); do
	read -r bp bq < <(bench "$old")
	read -r ap aq < <(bench .)
	printf '%-6s %10s µs %10s µs %10s µs %10s µs\n' "$r" "$bp" "$bq" "$ap" "$aq"
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
