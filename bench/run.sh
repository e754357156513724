#!/usr/bin/env bash
# make bench: every benchmark against its anchor, one after the other.
# Numbers go in bench/README.md. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
for s in gate receipts sandbox agent; do
	echo
	echo "## $s"
	"bench/$s.sh"
done
echo
echo "## broker"
CLAW_REQUIRE_SANDBOX=1 go test -run '^$' -bench 'FileRead|Time' -benchtime 300x ./internal/broker | grep Benchmark
if [ -x bench/serve/run.sh ]; then
	echo
	echo "## serve"
	bench/serve/run.sh
fi
