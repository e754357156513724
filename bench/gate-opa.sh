#!/usr/bin/env bash
# The gate's decisions next to OPA's own evaluation of the same policies,
# data and input, in one run:
#   1. bench/gateopa decides the whole bypass corpus in process (p50, p99,
#      wall and CPU time) and writes the policies, data and SAMPLE inputs
#      spread over the corpus, each with its in-process p50;
#   2. `opa bench` (v1.22.2, built from the module proxy) evaluates
#      data.claw.gate.result on each sampled input: a running OPA with the
#      query prepared once, as claw does;
#   3. the corpus again with the idle collector (internal/idlegc) run
#      between decisions, untimed, as claw serve and the broker run it
#      between an agent's calls.
# Prints, per sampled input, claw's p50, OPA's median evaluation time and
# ns/op, and their ratio, then the median ratio; and the load average
# before and after. With CLAW_BASE=REV it first times the corpus with the
# gateopa of revision REV and of the working tree, alternating, ROUNDS
# times each, one pass per turn, so that both sides see the same load.
# SAMPLE=0 leaves out OPA (and building it).
# Usage: [CLAW_BASE=REV] bench/gate-opa.sh [ROUNDS] [SAMPLE]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
sample=${2:-40}
OPA_VERSION=v1.22.2
out=bench/out
mkdir -p "$out"
if [ "$sample" != 0 ] && [ ! -x "$out/opa" ]; then
	echo "bench: building opa $OPA_VERSION" >&2
	GOBIN="$PWD/$out" go install "github.com/open-policy-agent/opa@$OPA_VERSION"
fi
go build -o "$out/gateopa" ./bench/gateopa
rm -rf "$out/gateopa-mix"

echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${CLAW_BASE:-}" ]; then
	rm -rf "$out/base-src" && mkdir -p "$out/base-src"
	git archive "$CLAW_BASE" | tar -x -C "$out/base-src"
	(cd "$out/base-src" && go build -o ../gateopa-rev ./bench/gateopa)
	for r in $(seq 1 "$rounds"); do
		for side in base this; do
			bin=$out/gateopa
			[ "$side" = base ] && bin=$out/gateopa-rev
			printf '%-5s %s ' "$side" "$(cut -d' ' -f1 /proc/loadavg)"
			"$bin" -out "$out/gateopa-$side" -rounds 1 -sample 1 | sed -n 1p
		done
	done
	rm -rf "$out/gateopa-base" "$out/gateopa-this"
fi
if [ "$sample" = 0 ]; then
	echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	exit 0
fi
"$out/gateopa" -out "$out/gateopa-mix" -rounds "$rounds" -sample "$sample"
# the same passes with the idle collector run between decisions, as claw
# serve and the broker run it between an agent's calls
"$out/gateopa" -out "$out/gateopa-idle" -rounds "$rounds" -sample 0 -idle | sed -n 1p
rm -rf "$out/gateopa-idle"
mix=$out/gateopa-mix
printf '%-10s %-12s %-12s %-8s %s\n' "claw p50" "opa median" "opa ns/op" "ratio" case
while read -r f ours name; do
	js=$("$out/opa" bench --format json --data "$mix/policies" --data "$mix/data.json" --input "$f" data.claw.gate.result)
	med=$(printf '%s' "$js" | grep -o '"histogram_timer_rego_query_eval_ns_median": *[0-9.]*' | grep -o '[0-9.]*$')
	n=$(printf '%s' "$js" | grep -o '"N": *[0-9]*' | grep -o '[0-9]*$')
	t=$(printf '%s' "$js" | grep -o '"T": *[0-9]*' | grep -o '[0-9]*$')
	nsop=$((t / n))
	printf '%-10s %-12s %-12s %-8s %s\n' "$((ours / 1000))µs" "$(printf '%.0f' "${med:-0}" | awk '{printf "%dµs", $1/1000}')" \
		"$(printf '%.0f' "${nsop:-0}" | awk '{printf "%dµs", $1/1000}')" "$(awk -v a="${med:-0}" -v b="$ours" 'BEGIN {printf "%.2f", a/b}')" "$name"
done <"$mix/inputs.txt" | tee "$out/gate-opa.txt"
awk '{print $4}' "$out/gate-opa.txt" | sort -n | awk '{a[NR]=$1} END {print "== median ratio (OPA median / claw p50): " a[int((NR+1)/2)]}'
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
