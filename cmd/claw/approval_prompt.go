package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/textesc"
	"golang.org/x/sys/unix"
)

// writeRequest shows what a person is asked to approve, or to type the
// passphrase for: the tool, its risk, the rules that asked, the arguments
// and the sandbox plan. Everything in it is escaped, so a model cannot
// write a line of its own into the prompt.
func writeRequest(w io.Writer, title string, r broker.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	fmt.Fprintf(&b, "  tool: %s\n", sanitize(r.Tool))
	fmt.Fprintf(&b, "  risk: %s\n", sanitize(r.Decision.Risk))
	for _, rs := range r.Decision.Reasons {
		fmt.Fprintf(&b, "  reason: %s (rule %s)\n", sanitize(rs.Msg), sanitize(rs.ID))
	}
	args := r.Summary
	if len(r.Args) > 0 {
		args = string(r.Args)
		if r.Args[0] != '{' {
			// not the arguments' object (too large, or not decodable):
			// the summary says what the action is
			fmt.Fprintf(&b, "  summary: %s\n", promptArgs(r.Summary))
		}
	}
	fmt.Fprintf(&b, "  args: %s\n", promptArgs(args))
	sb := r.Decision.Sandbox
	fmt.Fprintf(&b, "  sandbox: read=%s write=%s net=%t\n", sanitize(listOrNone(sb.Read)), sanitize(listOrNone(sb.Write)), sb.Net)
	if len(sb.Network.Hosts) > 0 {
		fmt.Fprintf(&b, "  network: %s (through claw's egress proxy only)\n", sanitize(strings.Join(sb.Network.Hosts, " ")))
	}
	io.WriteString(w, b.String())
}

// promptArgs renders the arguments of a request for a person: escaped,
// and cut at textesc.MaxArgs saying how much was left out.
func promptArgs(s string) string { return textesc.Args(s) }

// writeProposal shows the grant an approver may accept instead of a
// one-time approval, in words and in the grant syntax, before the question.
func writeProposal(w io.Writer, p *broker.Proposal) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "  grant offered: %s\n", sanitize(p.Words))
	fmt.Fprintf(w, "  grant scope: %s\n", sanitize(p.Text))
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
