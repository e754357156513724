package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/clawsec/claw/internal/broker"
)

// maxPassphraseInput bounds one typed passphrase line.
const maxPassphraseInput = 1024

// ttyPassphrase asks for the passphrase on the terminal with echo off. It
// is only used when standard input is a terminal: a pipe can never
// answer.
type ttyPassphrase struct {
	in  *os.File
	out io.Writer
}

func newTTYPassphrase(g *globals) broker.PassphraseAsker {
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &ttyPassphrase{in: f, out: g.stderr}
}

func (t *ttyPassphrase) AskPassphrase(ctx context.Context, r broker.Request) (string, error) {
	writeRequest(t.out, "Passphrase request", r)
	line, err := readNoEcho(ctx, t.in, func() {
		// only what is typed after the question counts (see replApprover)
		discardNotice(t.out, flushTerminalInput(int(t.in.Fd())))
		fmt.Fprint(t.out, "Passphrase: ")
	})
	fmt.Fprintln(t.out)
	return line, err
}

// readNoEcho reads one line from the terminal f with echo off, until ctx
// ends. prompt, when not nil, shows the question once the echo is off, so
// nothing typed in answer is ever shown. The terminal's settings are
// restored before it returns, also when ctx ends first, and nothing is
// left reading the terminal afterwards.
func readNoEcho(ctx context.Context, f *os.File, prompt func()) (string, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", fmt.Errorf("reading the terminal settings: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", fmt.Errorf("turning the echo off: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	if prompt != nil {
		prompt()
	}

	// A non-blocking duplicate goes through the runtime poller, so the
	// read can be abandoned when ctx ends. O_NONBLOCK belongs to the open
	// file, shared with standard input: it is restored on return.
	nfd, err := unix.Dup(fd)
	if err != nil {
		return "", err
	}
	flags, err := unix.FcntlInt(uintptr(nfd), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(nfd)
		return "", err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return "", err
	}
	tf := os.NewFile(uintptr(nfd), "tty")
	defer func() {
		tf.Close()
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
	}()
	stop := context.AfterFunc(ctx, func() { tf.SetReadDeadline(time.Now()) })
	defer stop()

	var buf bytes.Buffer
	b := make([]byte, 256)
	for {
		n, err := tf.Read(b)
		if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
			buf.Write(b[:i])
			break
		}
		buf.Write(b[:n])
		if buf.Len() > maxPassphraseInput {
			clear(buf.Bytes())
			return "", errors.New("the passphrase is too long")
		}
		if err != nil {
			clear(buf.Bytes())
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				return "", errors.New("no passphrase was typed")
			}
			return "", err
		}
	}
	s := string(bytes.TrimSuffix(buf.Bytes(), []byte("\r")))
	clear(buf.Bytes())
	return s, nil
}
