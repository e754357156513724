#!/usr/bin/env bash
# The commands that run one action as a whole process, each compiling the
# policies first: `claw exec -- true`, `claw tool run file_read`, and `claw
# gate test` and `claw hook claude-code` decided in process
# (--no-daemon), of revision REV and of the working tree, interleaved, next
# to `claw version` (the start-up floor); then the peak resident memory of
# each, from one more run. Needs the sandbox (exec and tool run use it).
# Usage: bench/oneshot.sh [REV] [N]   (defaults: the merge base with main, 40)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-$(git merge-base HEAD main)}
n=${2:-40}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/base-src"
git archive "$rev" | tar -x -C "$out/base-src"
(cd "$out/base-src" && go build -trimpath -o "$out/base/claw" ./cmd/claw && go build -trimpath -o "$out/base/claw-sandbox" ./executor/cmd/claw-sandbox)
go build -trimpath -o "$out/this/claw" ./cmd/claw
go build -trimpath -o "$out/this/claw-sandbox" ./executor/cmd/claw-sandbox
go build -o "$out/procs" ./bench/procs
export CLAW_HOME="$out/home"
mkdir -p "$out/ws"
"$out/this/claw" init --workspace "$out/ws" >/dev/null 2>&1
echo hello >"$out/ws/notes.txt"
chmod a+rx "$out"; chmod -R a+rX "$out/ws"
cat >"$out/read.json" <<'JSON'
{"session_id":"s1","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"notes.txt"},"tool_use_id":"toolu_1"}
JSON
cd "$out/ws"
cs=(-c "claw version||$out/this/claw version")
for cmd in "exec -- true" 'tool run file_read --args {"path":"notes.txt"}' "gate test --no-daemon file_read notes.txt" "hook claude-code --no-daemon"; do
	stdin=
	case $cmd in hook*) stdin=$out/read.json ;; esac
	for side in base this; do
		name="claw $cmd ($side)"
		[ "$side" = base ] && name="claw $cmd (revision $(git -C "$OLDPWD" rev-parse --short "$rev"))"
		cs+=(-c "$name|$stdin|$out/$side/claw $cmd")
	done
done
echo "kernel $(uname -r), $(nproc) CPUs"
"$out/procs" -n "$n" "${cs[@]}"
echo
echo "peak resident memory, one run each (KB):"
for side in base this; do
	for cmd in "exec -- true" "hook claude-code --no-daemon"; do
		stdin=/dev/null
		case $cmd in hook*) stdin=$out/read.json ;; esac
		# shellcheck disable=SC2086
		/usr/bin/time -f "%M" -o "$out/rss" "$out/$side/claw" $cmd <"$stdin" >/dev/null 2>&1 || true
		printf '  %-5s claw %-32s %s\n' "$side" "$cmd" "$(cat "$out/rss")"
	done
done
