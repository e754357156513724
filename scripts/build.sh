#!/usr/bin/env bash
# Builds one Go program, saying what it does: a first build compiles every
# dependency (OPA, SQLite, the MCP SDK, …) and takes minutes on a small
# machine, so it shows how far it got instead of one silent line.
# Usage: scripts/build.sh OUTPUT PACKAGE [go build flags...]
set -euo pipefail
GO=${GO:-go}
out=$1 pkg=$2
shift 2
start=$SECONDS
printf 'claw: building %s from %s\n' "$out" "$pkg" >&2
n=0
# go build -v names each package it compiles, on stderr; errors pass
# through as they are.
status=1
while IFS= read -r line; do
	if [[ $line == "__claw_build_status "* ]]; then
		status=${line#__claw_build_status }
	elif [[ $line =~ ^[A-Za-z0-9._~/-]+$ ]]; then
		n=$((n + 1))
		if [ "$n" -eq 1 ]; then
			printf 'claw: compiling packages (a first build compiles every dependency: minutes on 2 CPUs; later builds take seconds)\n' >&2
		elif [ $((n % 50)) -eq 0 ]; then
			printf 'claw: %d packages compiled (%s)\n' "$n" "$line" >&2
		fi
	else
		printf '%s\n' "$line" >&2
	fi
done < <("$GO" build -v "$@" -o "$out" "$pkg" 2>&1; echo "__claw_build_status $?")
if [ "$status" -ne 0 ]; then
	printf 'claw: building %s failed\n' "$out" >&2
	exit "$status"
fi
printf 'claw: built %s (%d packages compiled, %ds)\n' "$out" "$n" $((SECONDS - start)) >&2
