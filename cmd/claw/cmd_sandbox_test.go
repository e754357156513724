package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSandboxRunDegradedWarns: --unsafe-degraded prints its warning before
// the command runs, whether or not the sandbox can then start here; when
// the kernel lacks what the command asked for (a Landlock ABI no kernel
// has) a run without the option refuses with exit 5 and no such warning,
// and a run that went ahead with it names what was missing.
func TestSandboxRunDegradedWarns(t *testing.T) {
	const warning = "claw: warning: --unsafe-degraded: the command runs with whatever confinement this kernel offers"
	home := t.TempDir()
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		code := runClaw(&globals{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, home, append([]string{"sandbox", "run", "--min-landlock-abi", "99"}, args...)...)
		return errb.String(), code
	}
	stderr, code := run("--", "true")
	if code != exitSandbox || strings.Contains(stderr, "unsafe-degraded") {
		t.Errorf("without --unsafe-degraded: exit %d, stderr %q; want %d and no warning", code, stderr, exitSandbox)
	}
	stderr, code = run("--unsafe-degraded", "--", "true")
	if !strings.HasPrefix(stderr, warning) {
		t.Errorf("--unsafe-degraded: stderr %q does not start with the warning", stderr)
	}
	if code == 0 && !strings.Contains(stderr, "claw: warning: DEGRADED sandbox: ") {
		t.Errorf("--unsafe-degraded ran without naming what was missing: %q", stderr)
	}
}
