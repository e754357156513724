package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/clawsec/claw/internal/broker"
	"golang.org/x/sys/unix"
)

// maxPromptArgs bounds the args line of a prompt, in bytes of escaped
// text. It is generous: what is cut is what the person does not see, and
// padding could push the end of a command out of view. A cut line says
// how much is missing.
const maxPromptArgs = 2000

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

// promptArgs renders the arguments of a request (the broker's compact
// JSON, secrets redacted; or its summary when it has none) for a person:
// escaped by sanitizeClip and cut at maxPromptArgs, saying how many
// escaped bytes were left out.
func promptArgs(s string) string {
	full := sanitize(s)
	if len(full) <= maxPromptArgs {
		return full
	}
	cut := sanitizeClip(s, maxPromptArgs)
	return fmt.Sprintf("%s (%d more bytes not shown)", cut, len(full)-len(strings.TrimSuffix(cut, "…")))
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
