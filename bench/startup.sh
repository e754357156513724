#!/usr/bin/env bash
# Whole processes at start, side by side in one interleaved run
# (bench/procs): bwrap running /bin/true (the anchor), `claw sandbox run
# -- /bin/true`, the same run from a program that links only the executor
# (bench/startup/sandboxonly: the floor of a sandbox command that does not
# start the whole claw binary), `claw version`, and a hello-world Go
# program alone and with one of the libraries claw links
# (bench/startup/linked, by build tag). CLAW_BASE=REV adds `claw version`,
# `claw sandbox run` and (when REV has it) sandboxonly built from revision
# REV.
# Usage: [CLAW_BASE=REV] bench/startup.sh [rounds]   (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh bubblewrap

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
go build -trimpath -o "$out/claw" ./cmd/claw
CGO_ENABLED=0 go build -trimpath -o "$out/claw-sandbox" ./executor/cmd/claw-sandbox
go build -trimpath -o "$out/sandboxonly" ./bench/startup/sandboxonly
go build -o "$out/procs" ./bench/procs
for tag in none opa sigstore mcp seccomp; do
	go build -trimpath -tags "$tag" -o "$out/linked-$tag" ./bench/startup/linked
done
base=()
if [ -n "${CLAW_BASE:-}" ]; then
	mkdir -p "$out/base-src" "$out/base"
	git archive "$CLAW_BASE" | tar -x -C "$out/base-src"
	(cd "$out/base-src" && go build -trimpath -o "$out/base/claw" ./cmd/claw &&
		CGO_ENABLED=0 go build -trimpath -o "$out/base/claw-sandbox" ./executor/cmd/claw-sandbox)
	base=(-c "claw version, revision $CLAW_BASE||$out/base/claw version"
		-c "claw sandbox run, revision $CLAW_BASE||$out/base/claw sandbox run -- /bin/true")
	if [ -d "$out/base-src/bench/startup/sandboxonly" ]; then
		(cd "$out/base-src" && go build -trimpath -o "$out/base/sandboxonly" ./bench/startup/sandboxonly)
		base+=(-c "executor.Run alone, revision $CLAW_BASE||$out/base/sandboxonly /bin/true")
	fi
fi

echo "kernel $(uname -r), $(nproc) CPUs"
"$out/procs" -n "${1:-100}" \
	-c "bwrap --ro-bind / / --dev /dev --proc /proc /bin/true||bwrap --ro-bind / / --dev /dev --proc /proc /bin/true" \
	-c "claw sandbox run -- /bin/true||$out/claw sandbox run -- /bin/true" \
	-c "executor.Run alone (sandboxonly /bin/true)||$out/sandboxonly /bin/true" \
	-c "claw version||$out/claw version" \
	"${base[@]}" \
	-c "hello (Go)||$out/linked-none" \
	-c "hello + OPA rego||$out/linked-opa" \
	-c "hello + sigstore signature||$out/linked-sigstore" \
	-c "hello + MCP SDK + SQLite||$out/linked-mcp" \
	-c "hello + libseccomp (cgo)||$out/linked-seccomp"
