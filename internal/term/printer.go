package term

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/internal/textesc"
)

// Printer prints the model's text as it streams (providers that
// stream), or the whole reply at the end (the others). Text streamed before
// a round of tool calls ends its line when the first call is shown.
//
// On a terminal every line of the model's text after the first starts
// with modelMargin, so no line a model writes can pass for one of claw's
// own (a drawn "Tool request: … Approve? [y/N]" shows as the model's).
type Printer struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	margin  string // before each line after the first; "" off a terminal
	sp      *Spinner
	started bool
	midLine bool // the last text written did not end a line

	// redact cleans the text before it is shown (a provider's key that
	// a server echoes); nil shows it as it is. Streamed text is held
	// until its line ends (or pending reaches maxPending), so that a key
	// split between chunks is still found.
	redact  func(string) string
	pending strings.Builder
}

// maxPending bounds the streamed text held back for redaction.
const maxPending = 4 << 10

// modelMargin starts each continuation line of the model's text on a
// terminal; claw's own prompts and reports never start with it.
const modelMargin = "    | "

// NewPrinter prints to w; the margin is on when w is a terminal.
func NewPrinter(w io.Writer, prefix string, sp *Spinner, redact func(string) string) *Printer {
	p := &Printer{w: w, prefix: prefix, sp: sp, redact: redact}
	if IsTerminal(w) {
		p.margin = modelMargin
	}
	return p
}

// Delta prints a piece of streamed text (agent.TurnRequest.OnDelta).
func (p *Printer) Delta(t string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.sp.Set("")
		fmt.Fprint(p.w, p.prefix)
		p.started, p.midLine = true, true
	}
	if p.redact == nil {
		io.WriteString(p.w, p.margined(SanitizeStream(t)))
		return
	}
	p.pending.WriteString(t)
	held := p.pending.String()
	cut := strings.LastIndexByte(held, '\n') + 1
	if len(held) >= maxPending {
		cut = len(held)
	}
	if cut > 0 {
		p.pending.Reset()
		p.pending.WriteString(held[cut:])
		io.WriteString(p.w, p.margined(SanitizeStream(p.redact(held[:cut]))))
	}
}

// flush shows the streamed text still held back.
func (p *Printer) flush() {
	if p.pending.Len() == 0 {
		return
	}
	t := p.pending.String()
	p.pending.Reset()
	io.WriteString(p.w, p.margined(SanitizeStream(p.redact(t))))
}

// margined puts the margin at the start of every line of s that follows
// a newline, the first line of a later chunk included; a trailing newline
// waits for the text after it.
func (p *Printer) margined(s string) string {
	if p.margin == "" {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		if !p.midLine {
			b.WriteString(p.margin)
			p.midLine = true
		}
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
		p.midLine = false
	}
	return b.String()
}

// Tool is show, after the model's text streamed so far has ended its
// line (agent.TurnRequest.OnTool).
func (p *Printer) Tool(show func(agent.ToolRecord)) func(agent.ToolRecord) {
	return func(r agent.ToolRecord) {
		p.EndLine()
		show(r)
	}
}

// EndLine ends the model's text streamed so far, for a line of claw's own
// (a tool report, a question); the model's next text starts a new line
// with the prefix.
func (p *Printer) EndLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flush()
	if p.started {
		if p.midLine {
			fmt.Fprintln(p.w)
		}
		p.started, p.midLine = false, false
	}
}

// Finish ends the turn's text: the end of what streamed, or the whole
// reply when nothing did.
func (p *Printer) Finish(reply string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		p.flush()
		if p.midLine {
			fmt.Fprintln(p.w)
		}
		p.started = false
		return
	}
	if p.redact != nil {
		reply = p.redact(reply)
	}
	p.midLine = true
	fmt.Fprintln(p.w, p.prefix+strings.TrimSuffix(p.margined(SanitizeStream(reply)), "\n"))
	p.midLine = false
}

// Abort ends a streamed line when the turn failed.
func (p *Printer) Abort() { p.EndLine() }

// SanitizeStream escapes control characters in streamed text but keeps
// newlines and tabs, so a model cannot move the cursor or rewrite the
// terminal while it streams.
func SanitizeStream(t string) string {
	var b strings.Builder
	for _, r := range t {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && !(r >= 0x80 && r < 0xa0)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\x%02x", r)
	}
	return b.String()
}

// ShowTool prints one line per tool call, and the start of a command's
// output, escaped.
func ShowTool(w io.Writer) func(agent.ToolRecord) {
	return func(r agent.ToolRecord) {
		if r.Error != "" {
			msg := strings.TrimPrefix(r.Error, "error: ")
			if r.Status == agent.StatusNotRun {
				msg = strings.TrimPrefix(msg, "not run: ") // the status says it
			}
			fmt.Fprintf(w, "  [%s] %s: %s\n", textesc.String(r.Name), textesc.String(r.Status), textesc.String(msg))
		} else {
			fmt.Fprintf(w, "  [%s] %s\n", textesc.String(r.Name), textesc.String(r.Status))
		}
		if r.Name != "shell" {
			return
		}
		lines := strings.Split(strings.TrimRight(r.Output, "\n"), "\n")
		for i, l := range lines {
			if i == 0 && r.Error != "" {
				continue // already shown
			}
			if i > 8 {
				fmt.Fprintf(w, "    … (%d more lines)\n", len(lines)-i)
				break
			}
			fmt.Fprintf(w, "    %s\n", textesc.String(l))
		}
	}
}

// Spinner shows that the model is thinking, on a terminal only.
type Spinner struct {
	mu     sync.Mutex
	w      io.Writer
	on     bool
	status string
	stop   chan struct{}
}

// NewSpinner draws on w, when on.
func NewSpinner(w io.Writer, on bool) *Spinner { return &Spinner{w: w, on: on} }

// Set shows status: "thinking" turns the spinner, anything else stops
// and erases it (agent.TurnRequest.OnStatus).
func (s *Spinner) Set(status string) {
	if !s.on {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == s.status {
		return
	}
	if s.stop != nil {
		close(s.stop)
		s.stop = nil
		fmt.Fprint(s.w, "\r\033[K")
	}
	s.status = status
	if status != "thinking" {
		return
	}
	stop := make(chan struct{})
	s.stop = stop
	go func() {
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			s.mu.Lock()
			select {
			case <-stop:
				s.mu.Unlock()
				return
			default:
			}
			fmt.Fprintf(s.w, "\r%s thinking", frames[i%len(frames)])
			s.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
}
