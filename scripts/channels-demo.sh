#!/usr/bin/env bash
# channels-demo.sh [CLAW]: claw serve with the SynthesisAgent bridge and
# PlanckClaw's FIFO bridges, in a throwaway home. A bridge client (the node
# client in testdata/bridge) says hello, calls an allowed and a denied tool
# and asks a permission that `claw serve approve` grants; PlanckClaw's
# list_tools and a denied call go over the FIFOs; then `claw audit verify`
# checks the log and every decision is listed with its channel and user.
# Needs node 20 or later (for its WebSocket).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$root/bin/claw}
tmp=$(mktemp -d)
chmod 755 "$tmp" # as root, sandboxed actions run as nobody
pid=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export CLAW_HOME="$tmp/.claw"
say() { printf '\n== %s\n' "$*"; }

"$BIN" init --workspace "$tmp/ws" >/dev/null
cat >>"$CLAW_HOME/config.toml" <<EOF

[channels.bridge]
listen = "127.0.0.1:0"
sessions = ["s1"]
approver_ids = ["cli:alice"]
tools_allow = ["time", "shell", "file_list"]

[channels.planckclaw]
dir = "$tmp/fifos"
autonomy = "readonly"
tools_allow = ["time", "shell"]
EOF
"$BIN" config validate
SYNTHESIS_BRIDGE_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
export SYNTHESIS_BRIDGE_TOKEN

say "claw serve"
"$BIN" serve 2>"$tmp/serve.log" &
pid=$!
"$BIN" serve call --wait 60s GET /status >"$tmp/status.json"
url=$(grep -o '"address":"ws://[^"]*"' "$tmp/status.json" | cut -d'"' -f4)
echo "bridge: $url"

say "the bridge: hello, an allowed call, a denied call, a permission"
"$BIN" serve approve --oldest --wait 60s --approver cli:alice &
NODE_NO_WARNINGS=1 node --experimental-websocket "$root/testdata/bridge/client.mjs" "$url" s1
wait $!

say "PlanckClaw's claw bridge: list_tools, then a denied call"
fifo() { # fifo NAME [INPUT]: one request on claw_in, its result from claw_out
	if [ $# -gt 1 ]; then printf '%s\t%s\n' "$1" "$2"; else printf '%s\n' "$1"; fi >"$tmp/fifos/claw_in"
	while IFS= read -r line && [ -n "$line" ]; do printf '%s\n' "$line"; done <"$tmp/fifos/claw_out"
}
fifo list_tools | cut -c1-160
fifo shell '{"command":"rm -rf /"}'

say "PlanckClaw's interact FIFOs: claw's agent answers"
printf '42\thello from PlanckClaw\n' >"$tmp/fifos/interact_in"
IFS= read -r reply <"$tmp/fifos/interact_out"
printf '%s\n' "$reply"

say "stop, verify, and every decision with its channel and user"
kill -TERM "$pid"
wait "$pid"
pid=
"$BIN" audit verify | tail -1
"$BIN" receipt list --json | grep '"type":"decision"' |
	sed 's/.*"channel":"\([^"]*\)","user":"\([^"]*\)".*"tool":"\([^"]*\)".*"decision":{"result":"\([^"]*\)".*/\1 \2 \3 \4/'
