#!/bin/sh
# Receipt benchmarks: durable append with 1 and 8 writers, verify speed, and
# the time to verify 1,000,000 receipts. Numbers go in bench/README.md
# under "## Receipts".
set -eu
cd "$(dirname "$0")/.."
N=${RECEIPTS_N:-1000000}
BIN=${CLAW_BIN:-bin/claw}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/claw

echo "== go benchmarks (append: fsync before returning)"
go test ./receipts ./receipts/store -run '^$' -bench 'Append|ParseLine' -benchtime 3000x -count 3
go test ./audit -run '^$' -bench 'Verify' -benchtime 3x -count 3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== writing $N receipts"
go run ./bench/receiptsgen -dir "$tmp/receipts" -pub "$tmp/receipt.pub" -n "$N"
du -sh "$tmp/receipts"
echo "== claw audit verify over $N receipts"
/usr/bin/time -f '%e s wall, %U s user, %M KiB max RSS' "$BIN" audit verify --key "$tmp/receipt.pub" "$tmp/receipts" | tail -1
echo "== claw audit verify --fast over $N receipts"
/usr/bin/time -f '%e s wall, %U s user, %M KiB max RSS' "$BIN" audit verify --fast --key "$tmp/receipt.pub" "$tmp/receipts" | tail -1
