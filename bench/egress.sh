#!/bin/sh
# The egress proxy's added latency per connection: one new connection and
# one request, straight to a loopback server and through the proxy, side
# by side in one run (plain HTTP and CONNECT + TLS); and what an egress
# grant adds to starting an action. Numbers go in
# bench/README.md under "## Egress proxy".
set -eu
cd "$(dirname "$0")/.."
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./executor/internal/egress -run '^$' -bench 'Egress' -benchtime ${EGRESS_N:-2000}x -count ${EGRESS_COUNT:-5}
go test ./executor -run '^$' -bench 'EgressSpawn' -benchtime ${EGRESS_SPAWN_N:-100}x -count 3
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
