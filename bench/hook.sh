#!/usr/bin/env bash
# claw hook as Claude Code runs it, one whole process per tool call: with
# a claw serve of the same config running (the daemon decides), and in
# process (--no-daemon), next to `claw version` (the start-up floor), in
# one interleaved run; and `claw gate test` of one action the same two
# ways. CLAW_BASE=REV adds the hook and the gate test built from revision
# REV, in process (with --no-daemon; for a revision before the
# hook's daemon path, which lacks the flag, set CLAW_BASE_HOOK_FLAGS=,
# and CLAW_BASE_GATE_FLAGS= for one before the gate test's);
# with CLAW_BASE_DAEMON=1 also REV's hook through REV's own claw serve,
# in a claw home of its own, right after REV's in-process hook.
# Usage: [CLAW_BASE=REV [CLAW_BASE_DAEMON=1]] bench/hook.sh [rounds]   (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
pid=
bpid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$bpid" ] && kill "$bpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
go build -trimpath -o "$out/claw" ./cmd/claw
go build -o "$out/procs" ./bench/procs
base=()
if [ -n "${CLAW_BASE:-}" ]; then
	mkdir -p "$out/base-src"
	git archive "$CLAW_BASE" | tar -x -C "$out/base-src"
	(cd "$out/base-src" && go build -trimpath -o "$out/claw-base" ./cmd/claw)
	base=(-c "hook, revision $CLAW_BASE (in process)|$out/read.json|$out/claw-base hook claude-code ${CLAW_BASE_HOOK_FLAGS---no-daemon}"
		-c "gate test, revision $CLAW_BASE (in process)||$out/claw-base gate test ${CLAW_BASE_GATE_FLAGS---no-daemon} file_read notes.txt")
fi
export CLAW_HOME="$out/home"
mkdir -p "$out/ws"
"$out/claw" init --workspace "$out/ws" >/dev/null 2>&1
cat >"$out/read.json" <<'JSON'
{"session_id":"s1","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"notes.txt"},"tool_use_id":"toolu_1"}
JSON
"$out/claw" serve >"$out/serve.log" 2>&1 &
pid=$!
"$out/claw" serve call --wait 60s GET /health >/dev/null
if [ -n "${CLAW_BASE:-}" ] && [ -n "${CLAW_BASE_DAEMON:-}" ]; then
	bhome="$out/base-home"
	"$out/claw-base" init --home "$bhome" --workspace "$out/ws" >/dev/null 2>&1
	"$out/claw-base" serve --home "$bhome" >"$out/base-serve.log" 2>&1 &
	bpid=$!
	"$out/claw-base" serve call --home "$bhome" --wait 60s GET /health >/dev/null
	base=("${base[@]:0:2}" -c "hook, revision $CLAW_BASE, its claw serve running|$out/read.json|$out/claw-base hook claude-code --home $bhome" "${base[@]:2}")
fi
cd "$out/ws"
# the daemon must be the one answering, or the row means nothing
CLAW_HOOK_DEBUG=1 "$out/claw" hook claude-code <"$out/read.json" 2>&1 >/dev/null | grep -q '^claw: answered by claw serve$' ||
	{ echo "hook.sh: the daemon did not answer" >&2; exit 1; }
CLAW_GATE_DEBUG=1 "$out/claw" gate test file_read notes.txt 2>&1 >/dev/null | grep -q '^claw: answered by claw serve$' ||
	{ echo "hook.sh: the daemon did not answer the gate test" >&2; exit 1; }
echo "kernel $(uname -r), $(nproc) CPUs"
"$out/procs" -n "${1:-100}" \
	-c "claw version||$out/claw version" \
	"${base[@]}" \
	-c "claw hook --no-daemon (in process)|$out/read.json|$out/claw hook claude-code --no-daemon" \
	-c "claw hook, claw serve running (the daemon decides)|$out/read.json|$out/claw hook claude-code" \
	-c "claw gate test --no-daemon (in process)||$out/claw gate test --no-daemon file_read notes.txt" \
	-c "claw gate test, claw serve running (the daemon decides)||$out/claw gate test file_read notes.txt"
