package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/broker"
)

// An approval prompt that timed out leaves its read in flight: a late y/n
// is dropped, not taken as the next message (or as the next approval), and
// the REPL goes on with the line after it.
func TestLineInputAfterTimeout(t *testing.T) {
	r, w := keyboard(t)
	var out strings.Builder
	in := &LineInput{tty: true, plain: newPlainLines(r), stdout: &out}
	timeOut(t, in, "Approve? [y/N] ", false)
	if _, err := in.ask(context.Background(), "Approve? [y/N] ", false); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("a second prompt while the first read is in flight: %v", err)
	}
	io.WriteString(w, "y\nhello\n")
	line, err := in.Next("you> ")
	if err != nil || line != "hello" {
		t.Fatalf("next = %q, %v; want hello", line, err)
	}
	if !strings.Contains(out.String(), "it was not used") {
		t.Errorf("the dropped answer was not reported:\n%s", out.String())
	}
	// a message typed after a timeout is kept
	timeOut(t, in, "answer> ", false)
	io.WriteString(w, "list the files\n")
	if line, _ := in.Next("you> "); line != "list the files" {
		t.Fatalf("next = %q", line)
	}
}

// A passphrase typed after its prompt timed out (or after an emergency
// stop cancelled the wait) still reaches the read left in flight: it is
// discarded, never the next message nor a line of the history, and an
// approval asked meanwhile asks nobody and approves nothing.
func TestLineInputStalePassphrase(t *testing.T) {
	const secret = "correct-horse-battery"
	tests := []struct {
		name     string
		typed    string // after the prompt timed out
		eof      bool   // then the input ends
		wantLine string
		wantErr  error
	}{
		{name: "then a message", typed: secret + "\nhello\n", wantLine: "hello"},
		{name: "that looks like a yes", typed: "yes\nhello\n", wantLine: "hello"},
		{name: "that looks like a command", typed: "/exit\nhello\n", wantLine: "hello"},
		{name: "an empty line", typed: "\nhello\n", wantLine: "hello"},
		{name: "then the end of input", typed: secret, eof: true, wantErr: io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w := keyboard(t)
			var out strings.Builder
			ed := &fakeEditor{lines: newPlainLines(r)}
			in := &LineInput{tty: true, st: ed, stdout: &out}
			hist := filepath.Join(t.TempDir(), "agent_history")
			in.LoadHistory(hist, broker.Redact)
			timeOut(t, in, "Passphrase: ", true)
			ap := NewApprover(in, &out)
			if ans, err := ap.Approve(context.Background(), broker.Request{Tool: "shell"}); err == nil || ans.Result == "approved" {
				t.Fatalf("an approval while the passphrase read is in flight = %+v, %v; want an error", ans, err)
			}
			io.WriteString(w, tt.typed)
			if tt.eof {
				w.Close()
			}
			line, err := in.Next("you> ")
			if line != tt.wantLine || !errors.Is(err, tt.wantErr) {
				t.Fatalf("next = %q, %v; want %q, %v", line, err, tt.wantLine, tt.wantErr)
			}
			if err == nil {
				in.Remember(line) // as the REPL does with a message
			}
			in.SaveHistory()
			saved, err := os.ReadFile(hist)
			if err != nil {
				t.Fatal(err)
			}
			typed := strings.SplitN(tt.typed, "\n", 2)[0]
			for what, s := range map[string]string{"the history": strings.Join(ed.history, "\n"), "the history file": string(saved), "the output": out.String()} {
				if typed != "" && strings.Contains(s, typed) {
					t.Errorf("%s holds what was typed at the passphrase prompt:\n%s", what, s)
				}
			}
		})
	}
}

// keyboard returns the ends of a pipe that stands for the keyboard.
func keyboard(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		w.Close()
	})
	return r, w
}

// timeOut asks p and lets the prompt time out before anyone types.
func timeOut(t *testing.T, in *LineInput, p string, password bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := in.ask(ctx, p, password); err == nil {
		t.Fatal("ask returned before anyone typed")
	}
}

// fakeEditor reads plain lines for both prompts, and keeps the history in
// memory.
type fakeEditor struct {
	lines   *plainLines
	history []string
}

func (e *fakeEditor) Prompt(string) (string, error)         { return e.lines.next() }
func (e *fakeEditor) PasswordPrompt(string) (string, error) { return e.lines.next() }
func (e *fakeEditor) AppendHistory(s string)                { e.history = append(e.history, s) }
func (e *fakeEditor) Close() error                          { return nil }

func (e *fakeEditor) ReadHistory(r io.Reader) (int, error) {
	p := newPlainLines(r)
	n := 0
	for {
		l, err := p.next()
		if err != nil {
			return n, nil
		}
		e.history = append(e.history, l)
		n++
	}
}

func (e *fakeEditor) WriteHistory(w io.Writer) (int, error) {
	for i, l := range e.history {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return i, err
		}
	}
	return len(e.history), nil
}
