package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Process is a command started by [Start] in a sandbox made for it, whose
// standard input and output are streams rather than a buffer and a
// capture: a long-running server that speaks a protocol over them.
type Process struct {
	// Stdin is the command's standard input; closing it gives the command
	// end of file.
	Stdin io.WriteCloser
	// Stdout is the command's standard output, read as it is written. It
	// reaches end of file once the command has ended. A caller that stops
	// reading stalls the command when the pipe fills; one that closes it
	// lets the command's output go to the Result's capture alone.
	Stdout io.ReadCloser

	done chan struct{}
	res  Result
	err  error
}

// Start starts the command of s (a shell Spec, without Stdin) confined
// exactly as [Run] confines it, and returns at once with its standard
// input and output as streams; [Process.Wait] returns what Run would
// have. The standard error and the head and tail of the standard output
// are captured as by Run, with the digests of both whole streams.
//
// A zero s.Timeout means no wall-clock limit: the command runs until it
// exits or ctx ends, which kills its whole process tree. Start refuses,
// with an error wrapping ErrUnavailable and before anything runs, where
// Run would (the kernel cannot confine the command); a failure of the
// child to confine itself, or a missing command, is Wait's error as it is
// Run's (the Stdout stream then ends at once).
func Start(ctx context.Context, s Spec) (*Process, error) {
	if s.Tool != "" && s.Tool != ToolShell {
		return nil, fmt.Errorf("%w: only a command can be started with streams, not tool %s", ErrInvalidSpec, s.Tool)
	}
	if len(s.Stdin) > 0 {
		return nil, fmt.Errorf("%w: a started command takes its input from Process.Stdin, not Spec.Stdin", ErrInvalidSpec)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	// The probed support, not the inferred one: Run's retry after a wrong
	// guess would lose what the caller already wrote to Stdin.
	sup := Check()
	if err := sup.Require(s.MinLandlockABI); err != nil && (!s.Degraded || sup.Helper == "") {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &Process{Stdin: inW, Stdout: outR, done: make(chan struct{})}
	go func() {
		p.res, p.err = runStdio(ctx, s, sup, stdio{in: inR, out: outW})
		inR.CloseWithError(errEnded)
		outW.Close()
		close(p.done)
	}()
	return p, nil
}

// errEnded is what a write to a Process's Stdin returns once it ended.
var errEnded = errors.New("the sandboxed command has ended")

// Wait waits for the command to end and returns its Result, with the
// errors of [Run].
func (p *Process) Wait() (Result, error) {
	<-p.done
	return p.res, p.err
}

// stdio is where a sandboxed command's standard input comes from and
// where its standard output goes besides the capture. The zero value
// takes the Spec's Stdin (or the tool's Args) and only captures.
type stdio struct {
	in  io.Reader
	out io.Writer
	// ready, when set, is waited for before the child is given its
	// command (see [RunAfter]).
	ready func() error
}

// await waits for ready, when there is one.
func (s stdio) await() error {
	if s.ready == nil {
		return nil
	}
	return s.ready()
}

// streamed reports whether the command's stdio is streams (see [Start]).
func (s stdio) streamed() bool { return s.out != nil }

// tee returns the writer of the command's standard output: c, and the
// stream when there is one.
func (s stdio) tee(c *capture) io.Writer {
	if s.out == nil {
		return c
	}
	return &teeOut{c: c, w: s.out}
}

// teeOut writes to the capture and to the stream; once the stream fails
// (its reader closed it) the capture alone goes on, so the command is
// never stalled by a reader that left.
type teeOut struct {
	c      *capture
	w      io.Writer
	broken bool
}

func (t *teeOut) Write(b []byte) (int, error) {
	t.c.Write(b)
	if !t.broken {
		if _, err := t.w.Write(b); err != nil {
			t.broken = true
		}
	}
	return len(b), nil
}
