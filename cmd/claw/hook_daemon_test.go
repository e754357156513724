package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// A standard input that never ends is bounded by the hook's deadline: the
// call blocks (exit 2), it does not hang until the agent kills it.
func TestHookStdinThatNeverEnds(t *testing.T) {
	home := operatorHome(t, "")
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"hook_event_name":"PreToolUse",`)) // and nothing more
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runClaw(&globals{stdin: pr, stdout: &out, stderr: &errb}, home, "hook", "claude-code", "--deadline", "300ms")
	}()
	select {
	case code := <-done:
		if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "claw: blocked: no decision within 300ms") {
			t.Errorf("exit %d, stdout %q, stderr %q; want a block for the deadline", code, out.String(), errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hook still runs 20 s after its 300 ms deadline")
	}
}
