//go:build linux

// Package ttydrive drives an interactive program through a pseudo-terminal
// the way a person does: it waits for a prompt to appear, then types. The
// end-to-end tests and the demo use it for the parts of claw that talk to a
// terminal, such as approval prompts, which flush whatever was typed before
// the prompt showed and so cannot be fed from a pipe or typed ahead.
//
//	ttydrive [-timeout D] DIALOGUE PROGRAM [ARGS...]
//
// PROGRAM runs with its standard input, output and error on the terminal
// side of a new pseudo-terminal of 120 columns by 40 rows, as the leader of
// a new session whose controlling terminal that is, so that it can open
// /dev/tty. It gets ttydrive's environment, with TERM=xterm when TERM is
// unset or empty. Everything it writes is read as it comes, so it never
// blocks on a full terminal, and the whole of it is printed to standard
// output at the end, cleaned as described below, for a test to assert on;
// there a line the program redrew (a carriage return that does not end the
// line, as a line editor or a spinner writes) shows once, as last drawn.
//
// # Dialogues
//
// DIALOGUE is a file of directives, one a line, run in order. Blank lines
// and lines starting with # are ignored.
//
//	expect REGEX       wait until the output shows a match of REGEX
//	send TEXT          type TEXT and press Enter
//	send               press Enter
//	sendq "QUOTED"     type a Go-quoted string as is, without Enter
//	sleep DURATION     pause, as in 200ms or 1s
//	eof                type ^D (end of input at the start of a line)
//
// For example, to answer a confirmation prompt, then decline a second one
// with ^C:
//
//	# approve the first action, interrupt at the second
//	expect Allow .*\? \[y/N\] $
//	send y
//	expect (?m)^allowed
//	expect Allow .*\? \[y/N\] $
//	sendq "\x03"
//
// The argument of expect, send and sendq is the rest of the line after one
// space, taken literally: trailing spaces count, and "send  x" types " x".
// send ends the text with a carriage return, which is what the Enter key
// sends; the terminal turns it into the newline the program reads.
//
// # Matching
//
// An expect searches the output received since the end of the previous
// expect's match, so each prompt is matched once, in order. REGEX is Go
// regexp syntax, matched on the output with escape sequences (CSI "ESC [
// ... X", OSC "ESC ] ... BEL" or "ESC ] ... ESC \", and other ESC
// sequences of one final character) and carriage returns removed; that is
// also the form printed at the end. ^ and $ match at the ends of the text
// searched unless the expression starts with (?m). The terminal echoes what
// is typed, so after "send yes" the next expect sees "yes" first.
//
// An expect that is not satisfied within the step timeout (-timeout, 30s
// by default), or before the program closes the terminal, fails: ttydrive
// reports
//
//	ttydrive: DIALOGUE:LINE: timed out waiting for REGEX
//
// and the last 2000 bytes of the output on standard error, kills the
// program's process group, and exits 1. A send that cannot be delivered
// within the step timeout fails the same way.
//
// After the last directive, ttydrive waits up to the step timeout for the
// program to exit (and kills its process group if it does not), then reads
// what is left of its output.
//
// # Exit status
//
// ttydrive exits with the program's status, or 128+N when the program was
// killed by signal N; 1 when a step failed or the program could not be
// started; and 2 for a usage error, including a malformed dialogue, which is
// reported as DIALOGUE:LINE before the program is started.
package ttydrive

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

const usage = `usage: ttydrive [-timeout D] DIALOGUE PROGRAM [ARGS...]

Runs PROGRAM on a new pseudo-terminal and plays DIALOGUE against it:
expect REGEX, send TEXT, sendq "QUOTED", sleep DURATION, eof.
Prints the program's output, without escape sequences, when it is done.

  -timeout D   how long one step may take (default 30s)
`

const (
	// tailBytes is how much of the output a failure shows.
	tailBytes = 2000
	// searchBatch is how much unmatched output makes an expect search
	// less often.
	searchBatch = 64 << 10
	// maxLine bounds one line of a dialogue.
	maxLine = 64 << 10
)

// Main runs ttydrive with args (without the program name) and returns its
// exit status.
func Main(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ttydrive", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	timeout := fs.Duration("timeout", 30*time.Second, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "ttydrive: %v\n%s", err, usage)
		return 2
	}
	if fs.NArg() < 2 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "ttydrive: -timeout must be positive, not %v\n", *timeout)
		return 2
	}
	steps, err := parseFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "ttydrive: %v\n", err)
		return 2
	}

	d, err := start(fs.Arg(1), fs.Args()[2:])
	if err != nil {
		fmt.Fprintf(stderr, "ttydrive: %v\n", err)
		return 1
	}
	failure := d.play(steps, *timeout)
	if failure == nil {
		failure = d.finish(*timeout, stderr)
	}
	if failure != nil {
		d.stop(*timeout)
	}
	out := d.output()
	stdout.Write(out)
	if failure != nil {
		fmt.Fprintf(stderr, "ttydrive: %v\n", failure)
		if len(out) > 0 {
			t := tail(out, tailBytes)
			if !bytes.HasSuffix(t, []byte("\n")) {
				t = append(t[:len(t):len(t)], '\n')
			}
			fmt.Fprintf(stderr, "ttydrive: the output ended with:\n%s", t)
		}
		return 1
	}
	return d.status()
}

// step is one directive of a dialogue.
type step struct {
	pos   string // DIALOGUE:LINE, for messages
	op    string
	re    *regexp.Regexp // expect
	text  string         // send, sendq, eof
	sleep time.Duration
}

func parseFile(name string) ([]step, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("failed to read the dialogue: %w", err)
	}
	defer f.Close()
	return parse(name, f)
}

// parse reads a dialogue; name is used in messages.
func parse(name string, r io.Reader) ([]step, error) {
	var steps []step
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimLeft(strings.TrimSuffix(sc.Text(), "\r"), " \t")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := step{pos: fmt.Sprintf("%s:%d", name, n)}
		op, arg, _ := strings.Cut(line, " ")
		s.op = op
		switch op {
		case "expect":
			if arg == "" {
				return nil, fmt.Errorf("%s: expect needs a regular expression", s.pos)
			}
			re, err := regexp.Compile(arg)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s.pos, err)
			}
			s.re = re
		case "send":
			s.text = arg + "\r"
		case "sendq":
			text, err := strconv.Unquote(strings.TrimSpace(arg))
			if err != nil {
				return nil, fmt.Errorf("%s: sendq needs one Go-quoted string, as in sendq \"\\x03\"", s.pos)
			}
			s.text = text
		case "sleep":
			d, err := time.ParseDuration(strings.TrimSpace(arg))
			if err != nil || d < 0 {
				return nil, fmt.Errorf("%s: sleep needs a duration, as in sleep 200ms", s.pos)
			}
			s.sleep = d
		case "eof":
			if strings.TrimSpace(arg) != "" {
				return nil, fmt.Errorf("%s: eof takes no argument", s.pos)
			}
			s.text = "\x04"
		default:
			return nil, fmt.Errorf("%s: unknown directive %q (want expect, send, sendq, sleep or eof)", s.pos, op)
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("failed to read the dialogue %s: %w", name, err)
	}
	return steps, nil
}

// driver is a program running on a pseudo-terminal.
type driver struct {
	name   string
	cmd    *exec.Cmd
	master *os.File

	mu   sync.Mutex
	out  []byte  // cleaned output so far
	raw  []byte  // the output as written, for the screen at the end
	cl   cleaner // the state of the cleaning of out
	pos  int     // where the next expect starts searching in out
	more chan struct{}

	readDone chan struct{} // closed when the terminal is closed on the far side
	exited   chan struct{} // closed when the program has exited and been reaped
	waitErr  error
}

// start runs name with args on a new pseudo-terminal.
func start(name string, args []string) (*driver, error) {
	master, slave, err := openPTY()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = os.Environ()
	if os.Getenv("TERM") == "" {
		cmd.Env = append(cmd.Env, "TERM=xterm")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err = cmd.Start()
	// The program holds its own copies; with ours closed, reading the
	// master fails once the program and its children close theirs.
	slave.Close()
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("failed to start %s: %w", name, err)
	}
	d := &driver{
		name:     name,
		cmd:      cmd,
		master:   master,
		more:     make(chan struct{}, 1),
		readDone: make(chan struct{}),
		exited:   make(chan struct{}),
	}
	go d.read()
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// openPTY opens a new pseudo-terminal pair. The master is non-blocking and
// served by the runtime's poller, so that reads and writes can have
// deadlines and a Close interrupts them; the slave is blocking, as a
// program expects its terminal to be.
func openPTY() (master, slave *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to open /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("failed to unlock the pseudo-terminal: %w", err)
	}
	n, err := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("failed to get the pseudo-terminal's number: %w", err)
	}
	ws := &unix.Winsize{Col: 120, Row: 40}
	if err := unix.IoctlSetWinsize(mfd, unix.TIOCSWINSZ, ws); err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("failed to set the window size: %w", err)
	}
	path := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	sfd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("failed to open %s: %w", path, err)
	}
	if err := unix.SetNonblock(mfd, true); err != nil {
		unix.Close(mfd)
		unix.Close(sfd)
		return nil, nil, fmt.Errorf("failed to set up the pseudo-terminal: %w", err)
	}
	return os.NewFile(uintptr(mfd), "/dev/ptmx"), os.NewFile(uintptr(sfd), path), nil
}

// read appends everything the program writes to d.out until the terminal
// is closed on the program's side (EIO) or the master is closed.
func (d *driver) read() {
	defer func() {
		close(d.readDone)
		d.notify()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := d.master.Read(buf)
		if n > 0 {
			d.mu.Lock()
			d.out = d.cl.append(d.out, buf[:n])
			d.raw = append(d.raw, buf[:n]...)
			d.mu.Unlock()
			d.notify()
		}
		if err != nil {
			return
		}
	}
}

func (d *driver) notify() {
	select {
	case d.more <- struct{}{}:
	default:
	}
}

// play runs the steps and returns why one failed.
func (d *driver) play(steps []step, timeout time.Duration) error {
	for _, s := range steps {
		var err error
		switch s.op {
		case "expect":
			err = d.expect(s, timeout)
		case "sleep":
			time.Sleep(s.sleep)
		default:
			err = d.send(s, timeout)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) expect(s step, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		closed := isClosed(d.readDone)
		// The output only grows, so the text can be searched without
		// holding the lock while the reader appends to it.
		d.mu.Lock()
		text := d.out[d.pos:]
		d.mu.Unlock()
		if loc := s.re.FindIndex(text); loc != nil {
			d.pos += loc[1]
			return nil
		}
		if closed {
			return fmt.Errorf("%s: timed out waiting for %s: %s", s.pos, s.re, d.gone())
		}
		select {
		case <-d.more:
		case <-timer.C:
			return fmt.Errorf("%s: timed out waiting for %s", s.pos, s.re)
		}
		if len(text) > searchBatch {
			// Each search goes over all the text again: let a
			// flood of output gather before the next.
			select {
			case <-time.After(10 * time.Millisecond):
			case <-timer.C:
				return fmt.Errorf("%s: timed out waiting for %s", s.pos, s.re)
			}
		}
	}
}

// gone says how the program left the terminal.
func (d *driver) gone() string {
	select {
	case <-d.exited:
		return fmt.Sprintf("%s exited first (%s)", d.name, d.describeStatus())
	case <-time.After(time.Second):
		return d.name + " closed the terminal first"
	}
}

func (d *driver) send(s step, timeout time.Duration) error {
	d.master.SetWriteDeadline(time.Now().Add(timeout))
	defer d.master.SetWriteDeadline(time.Time{})
	if _, err := io.WriteString(d.master, s.text); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%s: timed out typing %q: %s is not reading its input", s.pos, s.text, d.name)
		}
		return fmt.Errorf("%s: failed to type %q: %w", s.pos, s.text, err)
	}
	return nil
}

// finish waits for the program to exit after the dialogue, then for the
// rest of its output.
func (d *driver) finish(timeout time.Duration, stderr io.Writer) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-d.exited:
	case <-timer.C:
		return fmt.Errorf("%s did not exit within %v of the end of the dialogue", d.name, timeout)
	}
	timer.Reset(timeout)
	select {
	case <-d.readDone:
	case <-timer.C:
		// Closing the master hangs the terminal up.
		fmt.Fprintf(stderr, "ttydrive: %s exited, but something it started still has the terminal open after %v; hanging up\n", d.name, timeout)
	}
	d.master.Close()
	<-d.readDone
	return nil
}

// stop kills the program's process group after a failure and collects what
// it wrote.
func (d *driver) stop(timeout time.Duration) {
	// The program leads its own session, so its pid is its process group.
	// Once it is reaped, the group lives on (and its id is not reused)
	// for as long as any member does.
	unix.Kill(-d.cmd.Process.Pid, unix.SIGKILL)
	select {
	case <-d.exited:
	case <-time.After(timeout):
	}
	select {
	case <-d.readDone:
	case <-time.After(time.Second):
	}
	d.master.Close()
	<-d.readDone
}

func (d *driver) output() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return screen(d.raw)
}

// screen is p as the lines a terminal ends up showing, roughly: escape
// sequences removed, and a carriage return that does not end a line
// starting the line again (as does moving to the first column), so a line
// redrawn (a line editor echoing what is typed, a spinner) shows once, as
// last drawn.
func screen(p []byte) []byte {
	// moving to the first column (CSI G, CSI 1G) is a carriage return
	p = bytes.ReplaceAll(p, []byte("\x1b[1G"), []byte("\r"))
	p = bytes.ReplaceAll(p, []byte("\x1b[G"), []byte("\r"))
	var c cleaner
	var out []byte
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\r')
		if i < 0 {
			out = c.append(out, p)
			break
		}
		out = c.append(out, p[:i])
		j := i
		for j < len(p) && p[j] == '\r' {
			j++
		}
		if c.state == plain && (j == len(p) || p[j] != '\n') {
			out = out[:bytes.LastIndexByte(out, '\n')+1]
		}
		p = p[j:]
	}
	return out
}

// status returns the exit status to pass on: the program's own, or 128+N
// for signal N.
func (d *driver) status() int {
	<-d.exited
	if d.cmd.ProcessState == nil {
		return 1
	}
	ws, ok := d.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return d.cmd.ProcessState.ExitCode()
}

func (d *driver) describeStatus() string {
	if d.cmd.ProcessState == nil {
		return d.waitErr.Error()
	}
	ws, ok := d.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "status " + strconv.Itoa(d.cmd.ProcessState.ExitCode())
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// tail returns the last n bytes of b or fewer, starting at a character.
func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[len(b)-n:]
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}

// A cleaner removes terminal escape sequences and carriage returns from a
// stream that arrives in pieces; a sequence may be split between pieces.
type cleaner struct {
	state int
}

const (
	plain    = iota
	esc      // after ESC
	escInter // in ESC intermediate bytes (as in ESC ( B), before the final one
	csi      // in ESC [ parameters, before the final byte
	osc      // in ESC ] text, before BEL or ESC \
)

// append appends the cleaned form of p to dst.
func (c *cleaner) append(dst, p []byte) []byte {
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch c.state {
		case plain:
			switch b {
			case 0x1b:
				c.state = esc
			case '\r':
			default:
				dst = append(dst, b)
			}
		case esc:
			switch {
			case b == '[':
				c.state = csi
			case b == ']':
				c.state = osc
			case 0x20 <= b && b <= 0x2f:
				c.state = escInter
			default:
				c.state = plain
			}
		case escInter:
			if b < 0x20 || b > 0x2f {
				c.state = plain
			}
		case csi:
			switch {
			case 0x20 <= b && b <= 0x3f:
			case 0x40 <= b && b <= 0x7e:
				c.state = plain
			default:
				// Not part of a sequence: it ends the sequence and
				// counts as itself.
				c.state = plain
				i--
			}
		case osc:
			switch b {
			case 0x07:
				c.state = plain
			case 0x1b: // ESC \ ends it, and any other ESC starts anew
				c.state = esc
			}
		}
	}
	return dst
}

// clean returns p without escape sequences and carriage returns.
func clean(p []byte) []byte {
	var c cleaner
	return c.append(nil, p)
}
