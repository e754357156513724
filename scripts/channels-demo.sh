#!/usr/bin/env bash
# channels-demo.sh [CLAW]: one claw serve with its three channels, in a
# throwaway home: Discord (against the fake Discord of this repository on
# 127.0.0.1), the SynthesisAgent bridge and PlanckClaw's FIFO bridges.
# An allowed Discord user has the agent list files, a user who is not
# allowed is ignored, a write is approved by code on Discord; a bridge
# client (the node client in testdata/bridge) says hello, calls an allowed
# and a denied tool and asks a permission, which is asked on Discord (the
# session's source) and approved there by code; PlanckClaw's list_tools
# and a denied call go over the FIFOs; a policy reload reaches the three;
# then `claw audit verify` checks the log and every decision is listed
# with its channel and user.
# Needs Go (to build the fake Discord) and node 20 or later (for its WebSocket).
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

# Discord user and channel ids: alice approves, bob talks, mallory is not allowed
alice=100000000000000001 bob=100000000000000002 mallory=100000000000000003
dm_alice=200000000000000001 dm_bob=200000000000000002 dm_mallory=200000000000000003
bridge_asks=200000000000000009 # where session s1's approvals are asked

"$BIN" init --workspace "$tmp/ws" >/dev/null
cat >>"$CLAW_HOME/config.toml" <<EOF

[channels.discord]
token_env = "DISCORD_BOT_TOKEN"
allowed_user_ids = ["$alice", "$bob"]
approver_ids = ["$alice"]
tools_allow = ["file_list", "file_write", "time"]
autonomy = "supervised"

[channels.bridge]
listen = "127.0.0.1:0"
sessions = ["s1"]
sources = { s1 = "discord:$bridge_asks" }
tools_allow = ["time", "shell"]

[channels.planckclaw]
dir = "$tmp/fifos"
autonomy = "readonly"
tools_allow = ["time", "shell"]
EOF
# writes in the workspace may run at supervised; this policy asks for them
cat >"$CLAW_HOME/policies/ask_writes.rego" <<'EOF'
package claw.user.writes

ask contains {"id": "user.writes.ask", "severity": "medium", "msg": "writes need approval here"} if input.kind == "file_write"
EOF
"$BIN" config validate
SYNTHESIS_BRIDGE_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
DISCORD_BOT_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
export SYNTHESIS_BRIDGE_TOKEN DISCORD_BOT_TOKEN

say "a fake Discord on 127.0.0.1"
(cd "$root" && go build -o "$tmp/fakediscord" ./internal/channel/discord/discordtest/fakediscord)
coproc DISCORD { "$tmp/fakediscord"; }
discord() { # discord COMMAND...: one command to the fake Discord; its answer, also in $answer
	printf '%s\n' "$*" >&"${DISCORD[1]}"
	IFS= read -r answer <&"${DISCORD[0]}"
	printf '%s\n' "$answer"
	[[ $answer == ok* ]]
}
IFS= read -r CLAW_DISCORD_API <&"${DISCORD[0]}"
export CLAW_DISCORD_API
echo "Discord API: $CLAW_DISCORD_API"

say "claw serve"
"$BIN" serve 2>"$tmp/serve.log" &
pid=$!
"$BIN" serve call --wait 60s GET /status >"$tmp/status.json"
discord connected 1
url=$(grep -o '"address":"ws://[^"]*"' "$tmp/status.json" | cut -d'"' -f4)
echo "bridge: $url"

say "Discord: bob lists the files, mallory is ignored, alice approves bob's write"
echo hello >"$tmp/ws/hello.txt"
discord send $bob $dm_bob which files are here?
discord wait $dm_bob The tool returned
discord send $mallory $dm_mallory which files are here?
discord send $bob $dm_bob save my notes
discord wait $dm_bob Reply
code=$(sed -n 's/.*(code \([a-z]*\)).*/\1/p' <<<"$answer")
discord send $alice $dm_alice "yes $code"
discord wait $dm_alice Approved
discord wait $dm_bob The tool returned

say "the bridge: hello, an allowed call, a denied call, a permission asked on Discord"
discord answer $alice $bridge_asks yes
NODE_NO_WARNINGS=1 node --experimental-websocket "$root/testdata/bridge/client.mjs" "$url" s1
discord wait $bridge_asks Approved

say "PlanckClaw's claw bridge: list_tools, then a denied call"
fifo() { # fifo NAME [INPUT]: one request on claw_in, its result from claw_out
	if [ $# -gt 1 ]; then printf '%s\t%s\n' "$1" "$2"; else printf '%s\n' "$1"; fi >"$tmp/fifos/claw_in"
	while IFS= read -r line && [ -n "$line" ]; do printf '%s\n' "$line"; done <"$tmp/fifos/claw_out"
}
fifo list_tools | cut -c1-160
fifo shell '{"command":"rm -rf /"}'

say "a policy that denies the time tool, reloaded: every channel has it"
cat >"$CLAW_HOME/policies/notime.rego" <<'EOF'
package claw.user.notime

deny contains {"id": "user.no_time", "severity": "low", "msg": "no clocks today"} if {
	input.kind == "time"
}
EOF
"$BIN" serve call POST /reload
discord connected 2
fifo time '{}'
discord send $bob $dm_bob what time is it?
discord wait $dm_bob user.no_time

say "stop, verify, and every decision with its channel and user"
kill -TERM "$pid"
wait "$pid"
pid=
grep -o 'discord message from a user who is not allowed ignored.*' "$tmp/serve.log"
"$BIN" audit verify | tail -1
"$BIN" receipt list --json | grep '"type":"decision"' |
	sed 's/.*"channel":"\([^"]*\)","user":"\([^"]*\)".*"tool":"\([^"]*\)".*"decision":{"result":"\([^"]*\)".*/\1 \2 \3 \4/'
