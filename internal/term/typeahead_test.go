package term

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/termtest"
)

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestApproveDiscardsTypeahead: a "y" typed before the approval prompt
// (at a prompt a model drew in its reply, say) is thrown away, with a
// notice; only what is typed after the question answers it. Through a
// real pseudo-terminal, on the approver with both inputs: the REPL's and
// claw exec's.
func TestApproveDiscardsTypeahead(t *testing.T) {
	tests := []struct {
		name     string
		after    string // typed once the question is on the screen
		want     string
		approver func(term *os.File, out io.Writer) broker.Approver
	}{
		{name: "repl, empty answer after", after: "\n", want: "rejected", approver: replTestApprover},
		{name: "repl, y after", after: "y\n", want: "approved", approver: replTestApprover},
		{name: "exec, empty answer after", after: "\n", want: "rejected", approver: execTestApprover},
		{name: "exec, y after", after: "y\n", want: "approved", approver: execTestApprover},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, s := termtest.OpenPTY(t)
			io.WriteString(m, "y\n") // typed ahead
			waitFor(t, "the typed line to reach the terminal", func() bool {
				n, err := unix.IoctlGetInt(int(s.Fd()), unix.TIOCINQ)
				return err == nil && n == 2
			})
			out := &termtest.LockedBuffer{}
			ap := tt.approver(s, out)
			type result struct {
				ans broker.Answer
				err error
			}
			done := make(chan result, 1)
			go func() {
				ans, err := ap.Approve(context.Background(), broker.Request{Tool: "file_write"})
				done <- result{ans, err}
			}()
			waitFor(t, "the question", func() bool { return strings.Contains(out.String(), "Approve? [y/N]") })
			io.WriteString(m, tt.after)
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the approver did not return")
			}
			if r.err != nil || r.ans.Result != tt.want {
				t.Errorf("answer = %+v, %v; want %s", r.ans, r.err, tt.want)
			}
			if !strings.Contains(out.String(), "claw: discarded 2 bytes typed before this prompt") {
				t.Errorf("no notice of the discarded input:\n%s", out.String())
			}
			if i, j := strings.Index(out.String(), "discarded"), strings.Index(out.String(), "Approve?"); i > j {
				t.Errorf("the notice comes after the question:\n%s", out.String())
			}
		})
	}
}

func replTestApprover(term *os.File, out io.Writer) broker.Approver {
	in := &LineInput{tty: true, term: term, plain: newPlainLines(term), stdout: out}
	return PassphraseApprover{NewApprover(in, out)}
}

func execTestApprover(term *os.File, out io.Writer) broker.Approver {
	return NewApprover(NewPromptInput(term, out), out)
}

// TestReplyMargin: on a terminal every line of the model's text after the
// first starts with the margin, however the text is cut into chunks; off a
// terminal the text is printed as it is.
func TestReplyMargin(t *testing.T) {
	tests := []struct {
		name   string
		margin string
		chunks []string // streamed; nil: the reply is printed at the end
		reply  string
		redact func(string) string
		want   string
	}{
		{name: "a key split between chunks is redacted", margin: modelMargin, chunks: []string{"key sk-AB", "CD12 ok\nbye sk-", "ABCD12"}, redact: hideKey,
			want: "claw> key [REDACTED] ok\n    | bye [REDACTED]\n"},
		{name: "a key in a whole reply is redacted", reply: "it is sk-ABCD12", redact: hideKey, want: "claw> it is [REDACTED]\n"},
		{name: "a long line is shown in parts", chunks: []string{strings.Repeat("a", maxPending), "b"}, redact: hideKey, want: "claw> " + strings.Repeat("a", maxPending) + "b\n"},
		{name: "streamed, two lines", margin: modelMargin, chunks: []string{"one\ntwo"}, want: "claw> one\n    | two\n"},
		{name: "streamed, a drawn prompt", margin: modelMargin, chunks: []string{"ok\nTool ", "request:\n  tool: time\nApprove? [y/N] "},
			want: "claw> ok\n    | Tool request:\n    |   tool: time\n    | Approve? [y/N] \n"},
		{name: "streamed, ends with a newline", margin: modelMargin, chunks: []string{"one\n", "\n"}, want: "claw> one\n    | \n"},
		{name: "streamed, control characters escaped", margin: modelMargin, chunks: []string{"a\r\x1b[2Kb\nc"}, want: "claw> a\\x0d\\x1b[2Kb\n    | c\n"},
		{name: "whole reply", margin: modelMargin, reply: "one\ntwo\n", want: "claw> one\n    | two\n"},
		{name: "whole reply off a terminal", reply: "one\ntwo", want: "claw> one\ntwo\n"},
		{name: "streamed off a terminal", chunks: []string{"one\n", "two"}, want: "claw> one\ntwo\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			p := &Printer{w: &b, prefix: "claw> ", margin: tt.margin, sp: NewSpinner(io.Discard, false), redact: tt.redact}
			for _, c := range tt.chunks {
				p.Delta(c)
			}
			p.Finish(tt.reply)
			if b.String() != tt.want {
				t.Errorf("printed %q, want %q", b.String(), tt.want)
			}
		})
	}
}

func hideKey(s string) string { return strings.ReplaceAll(s, "sk-ABCD12", "[REDACTED]") }
