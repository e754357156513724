package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/hook"
)

// TestReadEvent: the hook reads standard input once, for the daemon and
// then for the decision in process, which gets the very same bytes: all
// of them, however the read for the daemon ended (whole, too large, cut
// by the deadline, or by an error, which it gets too).
func TestReadEvent(t *testing.T) {
	event := []byte(`{"hook_event_name":"PreToolUse"}`)
	rest := func(t *testing.T, r io.Reader) []byte {
		t.Helper()
		b, _ := io.ReadAll(r)
		return b
	}

	got, complete, stdin := readEvent(context.Background(), bytes.NewReader(event))
	if !complete || !bytes.Equal(got, event) || !bytes.Equal(rest(t, stdin), event) {
		t.Errorf("a small event: complete %v, read %q; want it whole, and again on stdin", complete, got)
	}

	big := bytes.Repeat([]byte("x"), hook.MaxInput+10)
	_, complete, stdin = readEvent(context.Background(), bytes.NewReader(big))
	if complete || !bytes.Equal(rest(t, stdin), big) {
		t.Errorf("an event over the limit: complete %v; want incomplete, and all of it on stdin", complete)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw := io.Pipe()
	got, complete, stdin = readEvent(ctx, pr)
	if complete || got != nil {
		t.Errorf("past the deadline: complete %v, read %q; want nothing", complete, got)
	}
	go func() { pw.Write(event); pw.Close() }()
	if b := rest(t, stdin); !bytes.Equal(b, event) {
		t.Errorf("past the deadline, stdin gives %q; want the event once it comes", b)
	}

	broken := errors.New("broken pipe")
	_, complete, stdin = readEvent(context.Background(), io.MultiReader(bytes.NewReader(event), errReader{broken}))
	b, err := io.ReadAll(stdin)
	if complete || !bytes.Equal(b, event) || !errors.Is(err, broken) {
		t.Errorf("a read that fails: complete %v, stdin %q, %v; want the bytes read, then the error", complete, b, err)
	}
}

// The fast path keeps the hook's deadline: with a daemon's socket there
// and a standard input that never ends, it gives up at the deadline, does
// not ask again, and hands the command the input and the call's start,
// so that the command's own run ends at the same deadline.
func TestAskFirstStdinThatNeverEnds(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(home, "run", "claw.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"hook_event_name":"PreToolUse",`)) // and nothing more
	var out, errb bytes.Buffer
	h := &Hook{Format: HookClaudeCode, Deadline: 300 * time.Millisecond, Stdin: pr, Stdout: &out, Stderr: &errb}
	start := time.Now()
	_, answered, retry := h.AskFirst(context.Background(), home, "")
	if answered || retry {
		t.Fatalf("answered %v, retry %v; want neither", answered, retry)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("gave up after %v, past the 300ms deadline", d)
	}
	if h.Start.Before(start) || h.Start.After(time.Now()) || h.Stdin == io.Reader(pr) {
		t.Errorf("start %v (called at %v), stdin %T: want the call's start and the input read so far", h.Start, start, h.Stdin)
	}
	pw.Write([]byte(`"tool_name":"Read"}`))
	pw.Close()
	if b, _ := io.ReadAll(h.Stdin); string(b) != `{"hook_event_name":"PreToolUse","tool_name":"Read"}` {
		t.Errorf("the command would read %q", b)
	}
}
