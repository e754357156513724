package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/internal/broker"
)

type agentOptions struct {
	actionOptions
	message      string
	conversation string
	newConv      bool
	asJSON       bool
	autonomous   bool
	maxTurns     int
}

func newAgentCommand(g *globals) *cobra.Command {
	var o agentOptions
	c := &cobra.Command{
		Use:   "agent",
		Short: "Talk to the agent: a supervised REPL, or one turn with -m",
		Long: `Talk to the agent. Every tool call the model proposes goes through the gate,
is approved by you when the policy says so, runs in the sandbox, and is receipted.

Without -m, claw agent is a REPL that resumes the last conversation:
  /exit            leave (or Ctrl-D)
  /tools           the tools the model may call, with their risk
  /memory QUERY    search past conversations
  /policy          autonomy level and workspace boundary
  /clear           start a new conversation (the old one stays in memory)
  /help            this list

With -m MESSAGE, claw agent runs one turn, prints the answer and exits.
Approvals are asked on the terminal; without one, actions that need
approval are denied and the model is told why.

With --autonomous, claw agent works on its own: -m is the task, and it
takes turn after turn (states engaged, working, foraging, resting, with
the intervals of [autonomous] in the config) until the model calls
yield_to_user and rests, a bound of [autonomous] is reached, or the
emergency stop is engaged. Each line on standard input is a message that
interrupts it at once. Nobody is asked for approval in a run.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.autonomous {
				return runAutonomous(c.Context(), g, &o)
			}
			if c.Flags().Changed("max-turns") {
				return usageErrorf("--max-turns needs --autonomous")
			}
			if c.Flags().Changed("message") {
				return runAgentOnce(c.Context(), g, &o)
			}
			if o.asJSON {
				return usageErrorf("-o json needs -m")
			}
			return runREPL(c.Context(), g, &o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.message, "message", "m", "", "send one message, print the answer and exit")
	f.StringVar(&o.conversation, "conversation", "", "continue this conversation id (default: the latest)")
	f.BoolVar(&o.newConv, "new", false, "start a new conversation")
	f.BoolVar(&o.autonomous, "autonomous", false, "work on its own, turn after turn, until it yields or a bound stops it")
	f.IntVar(&o.maxTurns, "max-turns", 0, "with --autonomous: the most turns of the run (default [autonomous].max_turns)")
	addOutputFlag(c, &o.asJSON)
	o.actionOptions.addFlags(f)
	return c
}

// isTTY reports whether r is a terminal.
func isTTY(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func runAgentOnce(ctx context.Context, g *globals, o *agentOptions) error {
	if strings.TrimSpace(o.message) == "" {
		return usageErrorf("-m needs a message")
	}
	var approver broker.Approver
	var in *lineInput
	var ap *replApprover
	if isTTY(g.stdin) {
		in = newLineInput(g)
		defer in.Close()
		ap = &replApprover{in: in, out: g.stderr}
		approver = ap
	}
	rt, err := newAgentRuntime(ctx, g, &o.actionOptions, "cli", approver, func(ro *runtimeOptions) {
		if in != nil {
			ro.AskUser = in.askUser(g.stderr)
		}
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	sp := newSpinner(g.stderr, isTTY(g.stderr) && isTTY(g.stdin))
	prefix := ""
	if isTTY(g.stdout) {
		prefix = "claw> " // as in the REPL: the model's text is marked
	}
	pr := newReplyPrinter(g.stdout, prefix, sp, rt.Redact)
	if ap != nil {
		ap.printing(pr)
	}
	req := agent.TurnRequest{
		Conversation:    o.conversation,
		NewConversation: o.newConv,
		Message:         o.message,
		OnStatus:        sp.set,
		OnTool:          pr.tool(showTool(g.stderr)),
	}
	if !o.asJSON {
		req.OnDelta = pr.delta
	}
	res, err := rt.Agent.Turn(ctx, req)
	sp.set("")
	if err != nil {
		pr.abort()
		if ctx.Err() != nil {
			return withCode(exitInterrupted, errors.New("interrupted"))
		}
		return agentError(err)
	}
	if o.asJSON {
		res.Reply = rt.Redact(res.Reply) // as memory keeps it
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	pr.finish(res.Reply)
	return nil
}

// replyPrinter prints the model's text as it streams (providers that
// stream), or the whole reply at the end (the others). Text streamed before
// a round of tool calls ends its line when the first call is shown.
//
// On a terminal every line of the model's text after the first starts
// with modelMargin, so no line a model writes can pass for one of claw's
// own (a drawn "Tool request: … Approve? [y/N]" shows as the model's).
type replyPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	margin  string // before each line after the first; "" off a terminal
	sp      *spinner
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

// newReplyPrinter prints to w; the margin is on when w is a terminal.
func newReplyPrinter(w io.Writer, prefix string, sp *spinner, redact func(string) string) *replyPrinter {
	p := &replyPrinter{w: w, prefix: prefix, sp: sp, redact: redact}
	if isTTY(w) {
		p.margin = modelMargin
	}
	return p
}

func (p *replyPrinter) delta(t string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.sp.set("")
		fmt.Fprint(p.w, p.prefix)
		p.started, p.midLine = true, true
	}
	if p.redact == nil {
		io.WriteString(p.w, p.margined(sanitizeStream(t)))
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
		io.WriteString(p.w, p.margined(sanitizeStream(p.redact(held[:cut]))))
	}
}

// flush shows the streamed text still held back.
func (p *replyPrinter) flush() {
	if p.pending.Len() == 0 {
		return
	}
	t := p.pending.String()
	p.pending.Reset()
	io.WriteString(p.w, p.margined(sanitizeStream(p.redact(t))))
}

// margined puts the margin at the start of every line of s that follows
// a newline, the first line of a later chunk included; a trailing newline
// waits for the text after it.
func (p *replyPrinter) margined(s string) string {
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

func (p *replyPrinter) tool(show func(agent.ToolRecord)) func(agent.ToolRecord) {
	return func(r agent.ToolRecord) {
		p.endLine()
		show(r)
	}
}

// endLine ends the model's text streamed so far, for a line of claw's own
// (a tool report, a question); the model's next text starts a new line
// with the prefix.
func (p *replyPrinter) endLine() {
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

func (p *replyPrinter) finish(reply string) {
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
	fmt.Fprintln(p.w, p.prefix+strings.TrimSuffix(p.margined(sanitizeStream(reply)), "\n"))
	p.midLine = false
}

// abort ends a streamed line when the turn failed.
func (p *replyPrinter) abort() { p.endLine() }

// sanitizeStream escapes control characters in streamed text but keeps
// newlines and tabs, so a model cannot move the cursor or rewrite the
// terminal while it streams.
func sanitizeStream(t string) string {
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

// showTool prints one line per tool call, and the start of a command's
// output, escaped.
func showTool(w io.Writer) func(agent.ToolRecord) {
	return func(r agent.ToolRecord) {
		if r.Error != "" {
			msg := strings.TrimPrefix(r.Error, "error: ")
			if r.Status == agent.StatusNotRun {
				msg = strings.TrimPrefix(msg, "not run: ") // the status says it
			}
			fmt.Fprintf(w, "  [%s] %s: %s\n", sanitize(r.Name), sanitize(r.Status), sanitize(msg))
		} else {
			fmt.Fprintf(w, "  [%s] %s\n", sanitize(r.Name), sanitize(r.Status))
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
			fmt.Fprintf(w, "    %s\n", sanitize(l))
		}
	}
}

// agentError maps a turn's error to a claw error with a hint.
func agentError(err error) error {
	switch {
	case errors.Is(err, agent.ErrEmptyMessage):
		return usageErrorf("the message is empty")
	default:
		return withCode(exitError, err, "check the provider with 'claw provider test NAME'; the conversation is saved")
	}
}

func runREPL(ctx context.Context, g *globals, o *agentOptions) error {
	in := newLineInput(g)
	defer in.Close()
	ap := &replApprover{in: in, out: g.stderr}
	rt, err := newAgentRuntime(ctx, g, &o.actionOptions, "cli", ap, func(ro *runtimeOptions) {
		ro.AskUser = in.askUser(g.stderr)
		ro.Prestart = true
	})
	if err != nil {
		return err
	}
	defer rt.Close()
	in.loadHistory(filepath.Join(rt.Env.Home, "agent_history"), rt.Redact)
	defer in.saveHistory()

	conv := o.conversation
	newConv := o.newConv
	if !newConv && conv == "" {
		if c, err := rt.Memory.Latest(ctx, "cli"); err == nil {
			conv = c.ID
			fmt.Fprintf(g.stderr, "claw: resuming conversation %s (%d messages); /clear starts a new one\n", c.ID, c.Messages)
		}
	}
	fmt.Fprintf(g.stderr, "claw: provider %s, autonomy %s, workspace %s; /help for commands\n", rt.Provider.Name(), rt.Autonomy, rt.Work)
	sp := newSpinner(g.stderr, in.tty && isTTY(g.stderr))
	afterTurn := false
	for {
		if afterTurn {
			// Typed while the model answered: maybe at a prompt the
			// model drew (a passphrase, say). It is never sent on.
			if n := in.discardPending(); n > 0 {
				fmt.Fprintf(g.stderr, "claw: discarded %d bytes typed while the model was answering; type your message again\n", n)
			}
			afterTurn = false
		}
		line, err := in.next("you> ")
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(g.stderr)
			return nil
		}
		if errors.Is(err, liner.ErrPromptAborted) {
			fmt.Fprintln(g.stderr, "claw: (Ctrl-D or /exit to leave)")
			continue
		}
		if err != nil {
			return withCode(exitError, fmt.Errorf("reading input: %w", err))
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		in.remember(line)
		if strings.HasPrefix(line, "/") {
			quit, err := replCommand(ctx, g, rt, line, &conv, &newConv)
			if err != nil {
				printError(g.stderr, err)
			}
			if quit {
				return nil
			}
			continue
		}
		tctx, stop := signal.NotifyContext(ctx, os.Interrupt)
		pr := newReplyPrinter(g.stdout, "claw> ", sp, rt.Redact)
		ap.printing(pr)
		res, err := rt.Agent.Turn(tctx, agent.TurnRequest{Conversation: conv, NewConversation: newConv, Message: line,
			OnStatus: sp.set, OnTool: pr.tool(showTool(g.stderr)), OnDelta: pr.delta})
		sp.set("")
		afterTurn = true
		interrupted := tctx.Err() != nil && ctx.Err() == nil
		stop()
		if res.Conversation != "" {
			conv, newConv = res.Conversation, false
		}
		if err != nil {
			pr.abort()
			if interrupted {
				fmt.Fprintln(g.stderr, "claw: interrupted")
				continue
			}
			printError(g.stderr, agentError(err))
			continue
		}
		pr.finish(res.Reply)
	}
}

// replCommand runs a slash command; it reports whether to leave.
func replCommand(ctx context.Context, g *globals, rt *agentRuntime, line string, conv *string, newConv *bool) (bool, error) {
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	w := g.stdout
	switch cmd {
	case "/exit", "/quit":
		return true, nil
	case "/help":
		fmt.Fprint(w, `/exit            leave (or Ctrl-D)
/tools           the tools the model may call, with their risk
/memory QUERY    search past conversations
/policy          autonomy level and workspace boundary
/clear           start a new conversation (the old one stays in memory)
/help            this list
`)
	case "/tools":
		for _, t := range rt.Agent.Tools() {
			fmt.Fprintf(w, "%-14s %-7s %s\n", t.Name, t.Risk, t.Description)
		}
	case "/policy":
		fmt.Fprintln(w, policySummary(rt.Autonomy, rt.Work))
		fmt.Fprintf(w, "Policy digest: %s\n", rt.Broker.PolicyDigest())
		fmt.Fprintln(w, "Every tool call is decided by the gate and receipted; see 'claw gate test --explain'.")
	case "/memory":
		if arg == "" {
			return false, usageErrorf("/memory needs a query")
		}
		hits, err := rt.Memory.Search(ctx, arg, 10)
		if err != nil {
			return false, err
		}
		if len(hits) == 0 {
			fmt.Fprintln(w, "no matches")
		}
		for _, h := range hits {
			fmt.Fprintf(w, "%s  %s  %-9s %s\n", h.Message.ConversationID, h.Message.CreatedAt.Local().Format("2006-01-02 15:04"), h.Message.Role, sanitize(h.Snippet))
		}
	case "/clear":
		*conv, *newConv = "", true
		fmt.Fprintln(g.stderr, "claw: the next message starts a new conversation")
	default:
		return false, usageErrorf("unknown command %s (try /help)", sanitize(cmd))
	}
	return false, nil
}

// lineInput reads lines: with line editing and history on a terminal,
// plainly otherwise. Approvals and ask_user read through it too, so one
// reader owns the terminal.
type lineInput struct {
	mu     sync.Mutex
	tty    bool       // standard input is a terminal
	term   *os.File   // standard input when it is a terminal
	st     lineEditor // nil: plain
	plain  *plainLines
	hist   string
	redact func(string) string
	stdout io.Writer

	staleMu sync.Mutex
	stale   staleRead // a read given up on (a timed-out prompt), still in flight
}

// lineEditor is the line editor on a terminal (liner).
type lineEditor interface {
	Prompt(p string) (string, error)
	PasswordPrompt(p string) (string, error)
	AppendHistory(item string)
	ReadHistory(r io.Reader) (int, error)
	WriteHistory(w io.Writer) (int, error)
	Close() error
}

type lineReply struct {
	s   string
	err error
}

// staleRead is a read whose prompt timed out.
type staleRead struct {
	ch     chan lineReply
	secret bool // the passphrase prompt: what it reads is never used
}

// errTerminalBusy is ask's answer while a read given up on is still in
// flight.
var errTerminalBusy = errors.New("the terminal is still reading an answer to a prompt that timed out; press Enter and try again")

func newLineInput(g *globals) *lineInput {
	// A person at a terminal can approve; line editing also needs the
	// terminal on the output side.
	in := &lineInput{tty: isTTY(g.stdin), stdout: g.stderr}
	if in.tty {
		in.term = g.stdin.(*os.File)
	}
	if in.tty && isTTY(g.stdout) {
		st := liner.NewLiner()
		st.SetCtrlCAborts(true)
		st.SetMultiLineMode(true)
		in.st = st
	} else {
		in.plain = newPlainLines(g.stdin)
	}
	return in
}

func (in *lineInput) Close() {
	if in.st != nil {
		in.st.Close()
	}
}

// ask reads one line (without echo when password is set), or gives up
// when ctx ends. A read given up on stays in flight (a terminal read
// cannot be taken back); next deals with the line it returns.
func (in *lineInput) ask(ctx context.Context, p string, password bool) (string, error) {
	if in.busy() {
		return "", errTerminalBusy
	}
	ch := make(chan lineReply, 1)
	go func() {
		var r lineReply
		if password {
			r.s, r.err = in.password(p)
		} else {
			r.s, r.err = in.prompt(p)
		}
		ch <- r
	}()
	select {
	case <-ctx.Done():
		in.staleMu.Lock()
		in.stale = staleRead{ch: ch, secret: password}
		in.staleMu.Unlock()
		return "", ctx.Err()
	case r := <-ch:
		return r.s, r.err
	}
}

// discardTypeahead throws away what was typed before an approval or
// passphrase prompt and says so on out: an answer counts only when typed
// after its question is on the screen, so a "y" typed at a prompt a model
// drew in its text approves nothing. A read still in flight (a prompt that
// timed out) is left alone; ask refuses to start then.
func (in *lineInput) discardTypeahead(out io.Writer) {
	discardNotice(out, in.discardPending())
}

// discardPending throws away what was typed and not yet read, and says
// how much (0 while a read given up on is still in flight).
func (in *lineInput) discardPending() int {
	if in.busy() {
		return 0
	}
	in.mu.Lock()
	n := 0
	if in.plain != nil {
		n = in.plain.discard()
	}
	in.mu.Unlock()
	if in.term != nil {
		n += flushTerminalInput(int(in.term.Fd()))
	}
	return n
}

func (in *lineInput) busy() bool {
	in.staleMu.Lock()
	defer in.staleMu.Unlock()
	return in.stale.ch != nil
}

// next reads the REPL's next line. After a timed-out prompt, the line the
// person types first still goes to that read. What a passphrase prompt
// reads is discarded: it is never a message, nor kept in the history. A
// y/n answer to an old question is dropped too (it answered nothing and
// approves nothing); anything else is the next message.
func (in *lineInput) next(p string) (string, error) {
	in.staleMu.Lock()
	stale := in.stale
	in.staleMu.Unlock()
	if stale.ch != nil {
		if stale.secret {
			fmt.Fprintln(in.stdout, "claw: the passphrase prompt timed out; press Enter to go on (what is typed there is discarded)")
		} else {
			fmt.Fprintln(in.stdout, "claw: the last prompt timed out; type your next message")
		}
		r := <-stale.ch
		in.staleMu.Lock()
		in.stale = staleRead{}
		in.staleMu.Unlock()
		a := strings.ToLower(strings.TrimSpace(r.s))
		switch {
		case r.err != nil:
			return "", r.err
		case stale.secret:
			if a != "" {
				fmt.Fprintln(in.stdout, "claw: (what was typed after the passphrase prompt timed out was discarded)")
			}
		case a == "" || a == "y" || a == "yes" || a == "n" || a == "no":
			fmt.Fprintln(in.stdout, "claw: (that answer came after the prompt timed out; it was not used)")
		default:
			return r.s, nil
		}
	}
	return in.prompt(p)
}

// password reads a line without echo.
func (in *lineInput) password(p string) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.st != nil {
		return in.st.PasswordPrompt(p)
	}
	return "", errors.New("the passphrase can only be typed on a terminal")
}

func (in *lineInput) prompt(p string) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.st != nil {
		return in.st.Prompt(p)
	}
	fmt.Fprint(in.stdout, p)
	return in.plain.next()
}

func (in *lineInput) remember(line string) {
	if in.st == nil || line == "" {
		return
	}
	if in.redact != nil {
		line = in.redact(line)
	}
	in.st.AppendHistory(line)
}

func (in *lineInput) loadHistory(path string, redact func(string) string) {
	in.hist, in.redact = path, redact
	if in.st == nil {
		return
	}
	if f, err := os.Open(path); err == nil {
		in.st.ReadHistory(io.LimitReader(f, 1<<20))
		f.Close()
	}
}

func (in *lineInput) saveHistory() {
	if in.st == nil || in.hist == "" {
		return
	}
	tmp := in.hist + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	_, werr := in.st.WriteHistory(f)
	if cerr := f.Close(); werr == nil && cerr == nil {
		os.Rename(tmp, in.hist)
	} else {
		os.Remove(tmp)
	}
}

// askUser answers the ask_user tool on the terminal.
func (in *lineInput) askUser(out io.Writer) func(ctx context.Context, q string) (string, error) {
	return func(ctx context.Context, q string) (string, error) {
		fmt.Fprintf(out, "The agent asks: %s\n", sanitize(q))
		in.discardTypeahead(out) // what answers goes to the model: typed after the question
		ans, err := in.ask(ctx, "answer> ", false)
		if err != nil {
			return "", errors.New("the user did not answer")
		}
		return strings.TrimSpace(ans), nil
	}
}

// plainLines reads bounded lines from a non-terminal.
type plainLines struct {
	r   io.Reader
	buf []byte
	eof bool
}

func newPlainLines(r io.Reader) *plainLines { return &plainLines{r: r} }

// discard drops what was read but not yet returned, and says how much.
func (p *plainLines) discard() int {
	n := len(p.buf)
	p.buf = nil
	return n
}

const maxLine = 256 << 10

func (p *plainLines) next() (string, error) {
	for {
		if i := strings.IndexByte(string(p.buf), '\n'); i >= 0 {
			line := string(p.buf[:i])
			p.buf = p.buf[i+1:]
			return strings.TrimSuffix(line, "\r"), nil
		}
		if p.eof {
			if len(p.buf) > 0 {
				line := string(p.buf)
				p.buf = nil
				return line, nil
			}
			return "", io.EOF
		}
		if len(p.buf) > maxLine {
			p.buf = nil
			return "", fmt.Errorf("a line is longer than %d bytes", maxLine)
		}
		chunk := make([]byte, 4096)
		n, err := p.r.Read(chunk)
		p.buf = append(p.buf, chunk[:n]...)
		if err != nil {
			p.eof = true
		}
	}
}

// replApprover asks inline, through the REPL's own line reader.
type replApprover struct {
	in  *lineInput
	out io.Writer

	mu sync.Mutex
	pr *replyPrinter // the turn's, whose line a question ends first
}

// printing makes pr the printer of the turn now running.
func (a *replApprover) printing(pr *replyPrinter) {
	a.mu.Lock()
	a.pr = pr
	a.mu.Unlock()
}

// endLine ends a line of the model's text left open, so a question starts
// on a line of its own.
func (a *replApprover) endLine() {
	a.mu.Lock()
	pr := a.pr
	a.mu.Unlock()
	if pr != nil {
		pr.endLine()
	}
}

func (a *replApprover) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	if !a.in.tty {
		// Piped input can never approve.
		return broker.Answer{Result: "rejected", By: "cli:no-tty"}, nil
	}
	a.endLine()
	writeRequest(a.out, "Tool request", r)
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
func (a *replApprover) AskPassphrase(ctx context.Context, r broker.Request) (string, error) {
	if !a.in.tty || a.in.st == nil {
		return "", errors.New("the passphrase can only be typed on a terminal")
	}
	a.endLine()
	writeRequest(a.out, "Passphrase request", r)
	a.in.discardTypeahead(a.out)
	return a.in.ask(ctx, "Passphrase: ", true)
}

// spinner shows that the model is thinking, on a terminal only.
type spinner struct {
	mu     sync.Mutex
	w      io.Writer
	on     bool
	status string
	stop   chan struct{}
}

func newSpinner(w io.Writer, on bool) *spinner { return &spinner{w: w, on: on} }

func (s *spinner) set(status string) {
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
