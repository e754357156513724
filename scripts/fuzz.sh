#!/usr/bin/env bash
# make fuzz: run every fuzz target of the module for FUZZTIME each.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-30s}
fail=0
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "== $pkg $f ($t)"
		if ! go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg"; then
			fail=1
		fi
	done
done
exit $fail
