package term

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/peterh/liner"
)

// LineInput reads lines: with line editing and history on a terminal,
// plainly otherwise. Approvals and ask_user read through it too, so one
// reader owns the terminal.
type LineInput struct {
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

// NewLineInput reads stdin: with line editing and history when stdin and
// stdout are terminals, plainly otherwise. Its own messages (a prompt that
// timed out, input thrown away) go to stderr.
func NewLineInput(stdin io.Reader, stdout, stderr io.Writer) *LineInput {
	// A person at a terminal can approve; line editing also needs the
	// terminal on the output side.
	in := NewPromptInput(stdin, stderr)
	if in.tty && IsTerminal(stdout) {
		st := liner.NewLiner()
		st.SetCtrlCAborts(true)
		st.SetMultiLineMode(true)
		in.st, in.plain = st, nil
	}
	return in
}

// NewPromptInput reads stdin plainly, never with line editing: the input
// of the questions of a command whose standard output carries data (claw
// exec, claw tool run). Prompts and messages go to stderr.
func NewPromptInput(stdin io.Reader, stderr io.Writer) *LineInput {
	in := &LineInput{tty: IsTerminal(stdin), stdout: stderr, plain: newPlainLines(stdin)}
	if in.tty {
		in.term = stdin.(*os.File)
	}
	return in
}

// ErrPromptAborted is Next's error when Ctrl-C aborted the line.
var ErrPromptAborted = liner.ErrPromptAborted

// TTY reports whether standard input is a terminal: only then can a
// person approve.
func (in *LineInput) TTY() bool { return in.tty }

// Close ends line editing, giving the terminal back as it was.
func (in *LineInput) Close() {
	if in.st != nil {
		in.st.Close()
	}
}

// ask reads one line (without echo when password is set), or gives up
// when ctx ends. A read given up on stays in flight (a terminal read
// cannot be taken back); Next deals with the line it returns.
func (in *LineInput) ask(ctx context.Context, p string, password bool) (string, error) {
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
func (in *LineInput) discardTypeahead(out io.Writer) {
	discardNotice(out, in.DiscardPending())
}

// DiscardPending throws away what was typed and not yet read, and says
// how much (0 while a read given up on is still in flight).
func (in *LineInput) DiscardPending() int {
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

func (in *LineInput) busy() bool {
	in.staleMu.Lock()
	defer in.staleMu.Unlock()
	return in.stale.ch != nil
}

// Next reads the REPL's next line. After a timed-out prompt, the line the
// person types first still goes to that read. What a passphrase prompt
// reads is discarded: it is never a message, nor kept in the history. A
// y/n answer to an old question is dropped too (it answered nothing and
// approves nothing); anything else is the next message.
func (in *LineInput) Next(p string) (string, error) {
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
func (in *LineInput) password(p string) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.st != nil {
		return in.st.PasswordPrompt(p)
	}
	return "", errors.New("the passphrase can only be typed on a terminal")
}

func (in *LineInput) prompt(p string) (string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.st != nil {
		return in.st.Prompt(p)
	}
	fmt.Fprint(in.stdout, p)
	return in.plain.next()
}

// Remember adds a message to the history (redacted).
func (in *LineInput) Remember(line string) {
	if in.st == nil || line == "" {
		return
	}
	if in.redact != nil {
		line = in.redact(line)
	}
	in.st.AppendHistory(line)
}

// LoadHistory reads the history from path; SaveHistory writes it back
// there, and redact cleans every line added from now on.
func (in *LineInput) LoadHistory(path string, redact func(string) string) {
	in.hist, in.redact = path, redact
	if in.st == nil {
		return
	}
	if f, err := os.Open(path); err == nil {
		in.st.ReadHistory(io.LimitReader(f, 1<<20))
		f.Close()
	}
}

// SaveHistory writes the history to the file LoadHistory read.
func (in *LineInput) SaveHistory() {
	if in.st == nil || in.hist == "" {
		return
	}
	var buf bytes.Buffer
	if _, err := in.st.WriteHistory(&buf); err == nil {
		atomicfile.WriteFile(in.hist, buf.Bytes(), 0o600) //nolint:errcheck // history is a convenience
	}
}

// AskUser answers the ask_user tool on the terminal.
func (in *LineInput) AskUser(out io.Writer) func(ctx context.Context, q string) (string, error) {
	return func(ctx context.Context, q string) (string, error) {
		fmt.Fprintf(out, "The agent asks: %s\n", textesc.String(q))
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

// Messages sends each non-empty line of r as a message of the person (to
// an autonomous run, which it interrupts). The channel is closed at the
// end of r, or at a line too long to be a message (said on errw).
func Messages(ctx context.Context, r io.Reader, errw io.Writer) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), agent.MaxMessageBytes)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			select {
			case ch <- line:
			case <-ctx.Done():
				return
			}
		}
		if err := sc.Err(); err != nil {
			fmt.Fprintf(errw, "claw: standard input: %v; no more messages are read from it\n", err)
		}
	}()
	return ch
}
