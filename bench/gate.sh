#!/usr/bin/env bash
# Gate benchmarks, side by side in one run:
#   1. in-process decisions (BenchmarkDecide: prepared query, Go parsing);
#   2. the anchor: one `opa eval` process per decision, on the same policies,
#      data and input (the opa CLI is built from the module proxy);
#   3. one whole `claw gate test` process (policy compile included), and
#      `claw version` for the start-up floor.
# Usage: bench/gate.sh [N]   (N processes per measured command, default 40)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-40}
OPA_VERSION=v1.22.2
out=bench/out
mkdir -p "$out"
scripts/deps.sh hyperfine
export CLAW_HOME="$PWD/$out/gate-home"

go build -trimpath -o "$out/claw" ./cmd/claw
if [ ! -x "$out/opa" ]; then
	echo "bench: building opa $OPA_VERSION" >&2
	GOBIN="$PWD/$out" go install "github.com/open-policy-agent/opa@$OPA_VERSION"
fi

rm -rf "$CLAW_HOME" "$out/export"
"$out/claw" init --workspace "$PWD/$out/ws" >/dev/null
"$out/claw" gate export "$out/export" --autonomy full shell 'git status && git diff -- ./gate | head -n 50' >/dev/null

# stats FILE: median and p99 of one-number-per-line milliseconds
stats() { sort -n "$1" | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; p=a[int(NR*0.99+0.999)]; printf "%.2f %.2f\n", m, p}'; }
# timeit FILE CMD…: N runs of CMD after 3 warm-ups, timed by hyperfine
# without a shell (a fork of date(1) around each run would add 1-2 ms),
# one wall time in milliseconds per line of FILE
timeit() {
	local f=$1; shift
	hyperfine -N -i -w 3 -r "$N" --export-json "$f.json" -- "$(printf '%q ' "$@")" >/dev/null 2>&1
	awk '/"times"/ {on=1; next} on && /\]/ {on=0} on {gsub(/[ ,]/, ""); printf "%.3f\n", $0*1000}' "$f.json" >"$f"
}

echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== in-process (go test -bench BenchmarkDecide, 3 runs)"
go test -run '^$' -bench 'BenchmarkDecide$|BenchmarkDecideParallel|BenchmarkCompile' -benchmem -count 3 ./gate | grep -E '^Benchmark' | tee "$out/gate-inproc.txt"

echo "== opa eval per decision ($N processes)"
timeit "$out/opa-eval.ms" "$out/opa" eval -d "$out/export/policies" -d "$out/export/data.json" \
	-i "$out/export/input.json" --format raw data.claw.gate.result.decision
read -r opa_med opa_p99 < <(stats "$out/opa-eval.ms")
echo "opa eval: median ${opa_med} ms, p99 ${opa_p99} ms"

echo "== claw gate test, whole process ($N processes)"
timeit "$out/claw-gate.ms" "$out/claw" gate test --autonomy full --workspace "$PWD/$out/ws" shell 'git status && git diff -- ./gate | head -n 50'
read -r cl_med cl_p99 < <(stats "$out/claw-gate.ms")
echo "claw gate test: median ${cl_med} ms, p99 ${cl_p99} ms"

echo "== claw version, whole process ($N processes)"
timeit "$out/claw-version.ms" "$out/claw" version
read -r v_med v_p99 < <(stats "$out/claw-version.ms")
echo "claw version: median ${v_med} ms, p99 ${v_p99} ms"

p50=$(awk '/^BenchmarkDecide-/ {for (i=1;i<=NF;i++) if ($(i+1)=="p50-µs") print $i}' "$out/gate-inproc.txt" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
awk -v o="$opa_med" -v p="$p50" 'BEGIN {printf "== ratio: opa eval median / in-process p50 = %.0fx\n", o*1000/p}'
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
