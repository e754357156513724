package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/textesc"
	"golang.org/x/sys/unix"
)

// Approver asks a person at the terminal whether an action may run,
// through the LineInput that owns the terminal: the one terminal approver
// of claw agent, claw exec, claw tool run and claw sop. What was typed
// before the question is thrown away first; an answer counts only when
// typed after it.
type Approver struct {
	in  *LineInput
	out io.Writer

	mu sync.Mutex
	pr *Printer // the turn's, whose line a question ends first
}

// NewApprover asks through in, and shows its questions on out.
func NewApprover(in *LineInput, out io.Writer) *Approver {
	return &Approver{in: in, out: out}
}

// PassphraseApprover is an Approver that also asks for the passphrase,
// through the same reader and without echo, so no other read of the
// terminal can take it (the REPL's and claw agent -m's).
type PassphraseApprover struct{ *Approver }

// Printing makes pr the printer of the turn now running.
func (a *Approver) Printing(pr *Printer) {
	a.mu.Lock()
	a.pr = pr
	a.mu.Unlock()
}

// endLine ends a line of the model's text left open, so a question starts
// on a line of its own.
func (a *Approver) endLine() {
	a.mu.Lock()
	pr := a.pr
	a.mu.Unlock()
	if pr != nil {
		pr.EndLine()
	}
}

// Approve asks r on the terminal. Piped input can never approve: it is
// rejected, by cli:no-tty.
func (a *Approver) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	if !a.in.tty {
		// Piped input can never approve.
		return broker.Answer{Result: "rejected", By: "cli:no-tty"}, nil
	}
	a.endLine()
	WriteRequest(a.out, "Tool request", r)
	writeProposal(a.out, r.Proposal)
	a.in.discardTypeahead(a.out)
	line, err := a.in.ask(ctx, "Approve? [y/N] ", false)
	if ctx.Err() != nil {
		fmt.Fprintln(a.out)
		return broker.Answer{Result: "timeout", By: "cli:tty"}, nil
	}
	if errors.Is(err, errTerminalBusy) {
		// nobody was asked: not a rejection
		fmt.Fprintf(a.out, "claw: %v\n", err)
		return broker.Answer{}, err
	}
	if err != nil {
		return broker.Answer{Result: "rejected", By: "cli:tty"}, nil
	}
	return parseApproval(line, r.Proposal, "cli:tty"), nil
}

// AskPassphrase asks for the passphrase through the REPL's own reader,
// without echo, so no other read of the terminal can take it.
func (a PassphraseApprover) AskPassphrase(ctx context.Context, r broker.Request) (string, error) {
	if !a.in.tty || a.in.st == nil {
		return "", errors.New("the passphrase can only be typed on a terminal")
	}
	a.endLine()
	WriteRequest(a.out, "Passphrase request", r)
	a.in.discardTypeahead(a.out)
	return a.in.ask(ctx, "Passphrase: ", true)
}

// WriteRequest shows what a person is asked to approve, or to type the
// passphrase for: the tool, its risk, the rules that asked, the arguments
// and the sandbox plan. Everything in it is escaped, so a model cannot
// write a line of its own into the prompt.
func WriteRequest(w io.Writer, title string, r broker.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	fmt.Fprintf(&b, "  tool: %s\n", textesc.String(string(r.Tool)))
	fmt.Fprintf(&b, "  risk: %s\n", textesc.String(r.Decision.Risk))
	for _, rs := range r.Decision.Reasons {
		fmt.Fprintf(&b, "  reason: %s (rule %s)\n", textesc.String(rs.Msg), textesc.String(rs.ID))
	}
	args := r.Summary
	if len(r.Args) > 0 {
		args = string(r.Args)
		if r.Args[0] != '{' {
			// not the arguments' object (too large, or not decodable):
			// the summary says what the action is
			fmt.Fprintf(&b, "  summary: %s\n", PromptArgs(r.Summary))
		}
	}
	fmt.Fprintf(&b, "  args: %s\n", PromptArgs(args))
	sb := r.Decision.Sandbox
	fmt.Fprintf(&b, "  sandbox: read=%s write=%s net=%t\n", textesc.String(ListOrNone(sb.Read)), textesc.String(ListOrNone(sb.Write)), sb.Net)
	if len(sb.Network.Hosts) > 0 {
		fmt.Fprintf(&b, "  network: %s (through claw's egress proxy only)\n", textesc.String(strings.Join(sb.Network.Hosts, " ")))
	}
	io.WriteString(w, b.String())
}

// PromptArgs renders the arguments of a request for a person: escaped,
// and cut at textesc.MaxArgs saying how much was left out.
func PromptArgs(s string) string { return textesc.Args(s) }

// writeProposal shows the grant an approver may accept instead of a
// one-time approval, in words and in the grant syntax, before the question.
func writeProposal(w io.Writer, p *broker.Proposal) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "  grant offered: %s\n", textesc.String(p.Words))
	fmt.Fprintf(w, "  grant scope: %s\n", textesc.String(p.Text))
	fmt.Fprintln(w, "  answer y for this action only, c for this conversation, g for the grant above")
}

// parseApproval reads a typed answer: y/yes approves once; c and g
// (conversation, grant) only when a grant was offered; anything else is a
// no.
func parseApproval(line string, p *broker.Proposal, by string) broker.Answer {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return broker.Answer{Result: "approved", By: by, Remember: broker.RememberOnce}
	case "c", "conversation":
		if p != nil {
			return broker.Answer{Result: "approved", By: by, Remember: broker.RememberConversation}
		}
	case "g", "grant":
		if p != nil {
			return broker.Answer{Result: "approved", By: by, Remember: broker.RememberGrant}
		}
	}
	return broker.Answer{Result: "rejected", By: by}
}

// discardNotice tells the person that n bytes typed ahead of a question
// were thrown away (nothing when n is 0).
func discardNotice(out io.Writer, n int) {
	if n > 0 {
		fmt.Fprintf(out, "claw: discarded %d bytes typed before this prompt; answer it now\n", n)
	}
}

// flushTerminalInput discards the input the terminal fd holds that no
// read has taken yet, and returns how many bytes that was (0 when fd is
// not a terminal).
func flushTerminalInput(fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		return 0
	}
	if err := unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return 0
	}
	return n
}

// ListOrNone shows a list of paths as "[a b]", and an empty one as "[]".
func ListOrNone(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	return "[" + strings.Join(s, " ") + "]"
}
