package runtime

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

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
