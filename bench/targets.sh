#!/usr/bin/env bash
# Every target of the performance issue (warm workers, the hook's and the
# dry run's fast path, claw sandbox run, the decision), each beside its
# anchor, in one run of this working tree, with the load average before
# and after each part; then one summary table. The parts are the scripts
# next to this one, run as they are:
#   1. the broker's BenchmarkFileRead and BenchmarkShellTrue (with its
#      anchor, a bare bwrap --unshare-all /bin/true, in the same process);
#   2. bench/hook.sh: claw hook through claw serve, in process, and
#      claw version, interleaved;
#   3. bench/startup.sh: claw sandbox run -- /bin/true and bwrap,
#      interleaved;
#   4. bench/gate-opa.sh: the bypass corpus decided in process (and again
#      with the idle collector between decisions, as claw serve runs it), and
#      opa bench on sampled inputs;
#   5. the gate's BenchmarkDecideAfterIdle: a decision after the policies
#      went unused 0, 2, 20 or 200 ms (an agent's calls come seconds
#      apart), beside dependent loads over a 4 MB table after the same gap,
#      which tells what the machine's caches keep meanwhile.
# Usage: bench/targets.sh [N] [ACTIONS]   (process rounds, default 60;
# broker actions per case, default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-60}
actions=${2:-200}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "== kernel $(uname -r), $(nproc) CPUs, load average $(load)"

echo "== 1. warm workers (broker), load average before: $(load)"
CLAW_REQUIRE_SANDBOX=1 go test -count=1 -run '^$' -bench 'BenchmarkFileRead|BenchmarkShellTrue' -benchtime "${actions}x" ./internal/broker |
	awk '/^Benchmark/ {for (i=1;i<=NF;i++) {if ($(i+1)=="p50-ms") p=$i; if ($(i+1)=="p99-ms") q=$i}; sub(/-[0-9]+$/, "", $1); print $1, p, q}' | tee "$out/workers"
echo "== load average after: $(load)"

echo "== 2. bench/hook.sh $n"
bench/hook.sh "$n" | tee "$out/hook"
echo "== 3. bench/startup.sh $n"
bench/startup.sh "$n" | tee "$out/startup"
echo "== 4. bench/gate-opa.sh 3 40"
bench/gate-opa.sh 3 40 | tee "$out/gate"
echo "== 5. the decision after idle, load average before: $(load)"
go test -count=1 -run '^$' -bench 'BenchmarkDecideAfterIdle' -benchtime 20x ./gate |
	awk '/^Benchmark/ {for (i=1;i<=NF;i++) {if ($(i+1)=="p50-µs") p=$i; if ($(i+1)=="anchor-p50-µs") a=$i}; sub(/-[0-9]+$/, "", $1); sub(/^BenchmarkDecideAfterIdle\//, "", $1); print $1, p, a}' | tee "$out/idle"
echo "== load average after: $(load)"

# median (ms) of the row named $2 in the procs table $1
med() { awk -F'|' -v name="$2" '{gsub(/^ +| +$/, "", $2)} $2 == name {gsub(/ ms| /, "", $3); print $3}' "$1"; }
# p50 or p99 (ms) of the benchmark case $1
bm() { awk -v c="$1" -v f="$2" '$1 == c {print (f == "p50" ? $2 : $3)}' "$out/workers"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN {print (a <= b) ? "met" : "not met"}'; }

bw=$(bm BenchmarkShellTrue/bwrap-unshare-all p50)
version=$(med "$out/hook" "claw version")
hookd=$(med "$out/hook" "claw hook, claw serve running (the daemon decides)")
hooki=$(med "$out/hook" "claw hook --no-daemon (in process)")
bwrap=$(med "$out/startup" "bwrap --ro-bind / / --dev /dev --proc /proc /bin/true")
sbx=$(med "$out/startup" "claw sandbox run -- /bin/true")
corpus=$(grep '^corpus:' "$out/gate")
# a Go duration (850ns, 589.037µs, 3.886042ms) in µs
us() { awk '{v = $1 + 0; if ($1 ~ /ms$/) v *= 1000; else if ($1 ~ /ns$/) v /= 1000; else if ($1 ~ /[0-9]s$/) v *= 1e6; print v}' <<<"$1"; }
read -r w50 w99 c50 c99 < <(sed -E 's/.*rounds: p50 ([^ ]+) (p90 [^ ]+ )?p99 ([^,]+), cpu p50 ([^ ]+) (p90 [^ ]+ )?p99 ([^ ]+).*/\1 \3 \4 \6/' <<<"$corpus")
dp50=$(us "$w50") dp99=$(us "$w99") cp50=$(us "$c50") cp99=$(us "$c99")
idlecorpus=$(grep '^corpus, idle collector:' "$out/gate")
read -r w50 w99 c50 c99 < <(sed -E 's/.*rounds: p50 ([^ ]+) (p90 [^ ]+ )?p99 ([^,]+), cpu p50 ([^ ]+) (p90 [^ ]+ )?p99 ([^ ]+).*/\1 \3 \4 \6/' <<<"$idlecorpus")
ip50=$(us "$w50") ip99=$(us "$w99") icp99=$(us "$c99")
echo
echo "| target | measured | anchor (same run) | result |"
echo "|---|---|---|---|"
for c in on-demand prestarted prestarted-back-to-back; do
	p=$(bm "BenchmarkFileRead/$c" p50)
	q=$(bm "BenchmarkFileRead/$c" p99)
	echo "| file_read $c: p50 ≤ 3 ms, p99 ≤ 10 ms | $p / $q ms | — | p50 $(le "$p" 3), p99 $(le "$q" 10) |"
done
for c in on-demand prestarted prestarted-back-to-back; do
	p=$(bm "BenchmarkShellTrue/$c" p50)
	echo "| shell true $c ≤ 1.0× bwrap --unshare-all | $p ms = $(ratio "$p" "$bw")× | $bw ms | $(le "$(ratio "$p" "$bw")" 1.0) |"
done
echo "| hook through claw serve ≤ 0.5× in process | $hookd ms = $(ratio "$hookd" "$hooki")× | $hooki ms | $(le "$(ratio "$hookd" "$hooki")" 0.5) |"
echo "| hook through claw serve ≤ 1.5× claw version | $hookd ms = $(ratio "$hookd" "$version")× | $version ms | $(le "$(ratio "$hookd" "$version")" 1.5) |"
echo "| claw sandbox run ≤ 2× bwrap | $sbx ms = $(ratio "$sbx" "$bwrap")× | $bwrap ms | $(le "$(ratio "$sbx" "$bwrap")" 2.0) |"
echo "| decision p50 ≤ 250 µs (bypass corpus; wall, CPU) | $dp50 µs, $cp50 µs | opa bench: see part 4 | $(le "$dp50" 250) |"
echo "| decision p99 ≤ 2 ms (bypass corpus; wall, CPU) | $dp99 µs, $cp99 µs | — | wall $(le "$dp99" 2000), CPU $(le "$cp99" 2000) |"
echo "| the same, idle collector between decisions (as claw serve) | p50 $ip50 µs, p99 $ip99 µs; CPU p99 $icp99 µs | — | wall $(le "$ip99" 2000), CPU $(le "$icp99" 2000) |"
for a in time shell_ls_-la; do
	read -r hot ahot < <(awk -v c="$a/gap=0s" '$1 == c {print $2, $3}' "$out/idle")
	read -r cold acold < <(awk -v c="$a/gap=200ms" '$1 == c {print $2, $3}' "$out/idle")
	echo "| (not a target) $a decided after 200 ms unused | $cold µs = $(ratio "$cold" "$hot")× back to back ($hot µs) | 4 MB of dependent loads: $acold µs = $(ratio "$acold" "$ahot")× ($ahot µs) | the machine's |"
done
echo
echo "load average at the end: $(load)"
