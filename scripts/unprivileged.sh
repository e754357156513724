#!/usr/bin/env bash
# The command examples of README.md and docs/*.md again, as an
# unprivileged user (nobody) with a fresh HOME, the way a newcomer without
# root runs them; make test runs it after the suite. Run as root it builds
# the cmd/claw test binary and runs its TestDocExamples as uid 65534 on a
# copy of the documents (a checkout under a private directory may not be
# readable by nobody). Not root: nothing to do, the suite already ran
# unprivileged.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
go test -c -o "$dir/claw.test" ./cmd/claw
mkdir -p "$dir/repo/cmd/claw" "$dir/home" "$dir/tmp"
cp -R README.md docs "$dir/repo/"
chown 65534:65534 "$dir/home" "$dir/tmp"
cd "$dir/repo/cmd/claw"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	env -i HOME="$dir/home" TMPDIR="$dir/tmp" PATH=/usr/local/bin:/usr/bin:/bin \
	CLAW_REQUIRE_SANDBOX="${CLAW_REQUIRE_SANDBOX:-}" \
	"$dir/claw.test" -test.run '^TestDocExamples$' -test.count=1
echo "claw: the documents' examples pass as an unprivileged user"
