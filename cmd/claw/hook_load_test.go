package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/busytest"
)

// TestHookDaemonUnderLoad: with every CPU busy many times over (a load
// average of about 20 on two cores), claw hook gives the answers it gives
// on a quiet machine, whether the running claw serve answers within its
// share of the deadline or the hook decides in process.
func TestHookDaemonUnderLoad(t *testing.T) {
	requireSandboxForTest(t)
	if testing.Short() {
		t.Skip("loads every CPU")
	}
	ws := t.TempDir()
	home := filepath.Join(t.TempDir(), ".claw")
	var initOut bytes.Buffer
	if code := runClaw(&globals{stdin: strings.NewReader(""), stdout: &initOut, stderr: &initOut}, home, "init", "--workspace", ws); code != 0 {
		t.Fatalf("claw init: exit %d: %s", code, initOut.String())
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	events := []string{
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"notes.txt"},"tool_use_id":"t1"}`,
		`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"t2"}`,
	}
	hookCall := func(ev string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := runClaw(&globals{stdin: strings.NewReader(ev), stdout: &out, stderr: &errb}, home,
			append([]string{"hook", "claude-code", "--workspace", ws}, args...)...)
		return code, out.String(), errb.String()
	}
	want := make([]string, len(events))
	for i, ev := range events {
		code, out, errb := hookCall(ev, "--no-daemon")
		if code != 0 || out == "" {
			t.Fatalf("event %d in process: exit %d, stdout %q, stderr %q", i, code, out, errb)
		}
		want[i] = out
	}
	if !strings.Contains(want[0], `"permissionDecision":"allow"`) || !strings.Contains(want[1], `"permissionDecision":"deny"`) {
		t.Fatalf("quiet answers: %q", want)
	}
	startDaemon(t, home)
	t.Setenv("CLAW_HOOK_DEBUG", "1")

	stop := busytest.Spin(16 * runtime.NumCPU())
	defer stop()
	byDaemon := 0
	for round := range 8 {
		for i, ev := range events {
			code, out, errb := hookCall(ev)
			if code != 0 || out != want[i] {
				t.Errorf("round %d, event %d under load: exit %d, stdout %q (want %q), stderr %q", round, i, code, out, want[i], errb)
			}
			if strings.Contains(errb, "answered by claw serve") {
				byDaemon++
			}
		}
	}
	stop()
	t.Logf("%d of %d hook calls under load answered by claw serve", byDaemon, 8*len(events))
	if byDaemon == 0 {
		t.Error("claw serve answered no hook call under load: the fast path is gone exactly when it matters")
	}
}
