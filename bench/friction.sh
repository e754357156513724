#!/usr/bin/env bash
# Friction: how often a supervised session of everyday coding work stops to
# ask a person, without grants and with them. Builds the Go driver
# (bench/friction), runs the 104-action session of bench/friction/session.go
# through the broker twice (real gate, receipts and sandbox; no network),
# and prints the actions that asked, the denials, the grants created, the
# attack corpus checked against those grants, and as its last line
#   friction: N prompts per 100 actions without grants, M with grants
# Usage: bench/friction.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -trimpath -o "$out/friction" ./bench/friction
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$out/friction" | tee "$out/report"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - start)) s" >&2
# the friction line stays the last line of standard output
tail -n 1 "$out/report" | grep -q '^friction: ' || { echo "friction: no result line" >&2; exit 1; }
