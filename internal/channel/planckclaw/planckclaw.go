// Package planckclaw serves PlanckClaw's FIFO bridges from claw serve, so
// that PlanckClaw's unmodified agent runs every tool through claw's gate
// and sandbox, and PlanckClaw's Discord bridge script can front claw's own
// agent. docs/planckclaw.md has the formats as claw speaks them.
//
// # The claw bridge: claw_in → claw_out
//
//	list_tools\n  (or __list_tools__\n)   →  [{"name","description","input_schema"},…]\n\n
//	NAME\tINPUT_JSON\n                     →  RESULT_TEXT\n\n
//
// A call goes to the broker as the channel's user "claw_in" (the FIFO
// carries no identity); a denial comes back as "error: denied by policy:
// <rule ids>", a failure as "error: …", so the model can read either.
// Results never hold a blank line (runs of newlines collapse to one) and
// are cut at MaxResult. One request is served at a time, in order.
//
// # The interact channel: interact_in → interact_out
//
//	CHANNEL_ID\tTEXT\n   →   CHANNEL_ID\tREPLY\n
//
// TEXT and REPLY escape newline, tab and backslash as \n, \t and \\. Each
// line is a turn of claw's own agent for the user CHANNEL_ID, one
// conversation per channel id, one turn at a time.
//
// # The FIFOs
//
// The directory is made 0700 and the FIFOs 0600 (see [Prepare]); every
// open uses O_NOFOLLOW and checks what it opened (a FIFO, ours, closed to
// others). claw holds claw_in and interact_in read-write, so a writer that
// goes away is no end-of-file.
//
// claw holds claw_out read-write too, for as long as it runs: a result
// waits in the pipe until PlanckClaw's agent opens claw_out to read it,
// and the agent never sees an end-of-file between results. (Opening
// claw_out for each result, as the seed's shell bridge does, races: the
// agent may open claw_out for the next result while the previous writer
// is still closing, and then read an end-of-file.) A result nobody read
// within WriteWait is drained from the pipe, with a warning, so a later
// reader never takes it for the answer to its own request. A result fits
// in the pipe's buffer (MaxResult), so writing it never waits for a
// reader.
//
// interact_out is opened once (again after its reader went away) without
// blocking, waiting up to WriteWait for a reader, so a reader that goes
// away never wedges the daemon: the reply is dropped with a warning. A
// line longer than its bound is read to its end and refused with an error
// frame.
package planckclaw

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/clawsec/claw/internal/channel"
)

// Config of a Server.
type Config struct {
	// Dir holds the FIFOs.
	Dir string
	// WriteWait bounds how long an answer waits for a reader (10 s if
	// zero).
	WriteWait time.Duration
}

// Server serves the FIFOs of one directory.
type Server struct {
	env *channel.Env
	cfg Config

	clawOut *os.File // held read-write while Run runs
	outMu   sync.Mutex
	outGen  int // results written to claw_out

	mu  sync.Mutex
	out *os.File // interact_out, while a reader holds it
}

// ToolUser is the user the claw bridge's calls are receipted under.
const ToolUser = "claw_in"

// New prepares cfg.Dir (see [Prepare]) and returns a Server.
func New(env *channel.Env, cfg Config) (*Server, error) {
	if cfg.WriteWait <= 0 {
		cfg.WriteWait = 10 * time.Second
	}
	if err := Prepare(cfg.Dir); err != nil {
		return nil, err
	}
	return &Server{env: env, cfg: cfg}, nil
}

// Run serves both bridges until ctx ends. One Server at a time may serve
// a directory (a flock on its .lock file): two readers of one FIFO would
// take each other's requests.
func (s *Server) Run(ctx context.Context) error {
	lock, err := lockDir(s.cfg.Dir)
	if err != nil {
		return fmt.Errorf("planckclaw: %w", err)
	}
	defer lock.Close()
	clawIn, err := openReader(filepath.Join(s.cfg.Dir, ClawIn))
	if err != nil {
		return fmt.Errorf("planckclaw: %w", err)
	}
	defer clawIn.Close()
	interactIn, err := openReader(filepath.Join(s.cfg.Dir, InteractIn))
	if err != nil {
		return fmt.Errorf("planckclaw: %w", err)
	}
	defer interactIn.Close()
	if s.clawOut, err = openReader(filepath.Join(s.cfg.Dir, ClawOut)); err != nil {
		return fmt.Errorf("planckclaw: %w", err)
	}
	defer s.clawOut.Close()
	s.env.Log.Info("planckclaw FIFOs open", "event", "channel_listening", "channel", s.env.Name, "dir", s.cfg.Dir)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.serveTools(ctx, clawIn) }()
	go func() { defer wg.Done(); s.serveInteract(ctx, interactIn) }()
	<-ctx.Done()
	clawIn.Close() // ends the blocked reads
	interactIn.Close()
	wg.Wait()
	s.mu.Lock()
	if s.out != nil {
		s.out.Close()
	}
	s.mu.Unlock()
	return nil
}

// readLine reads one line of at most max bytes (without its newline). A
// longer line is read to its end and returned cut at max, with long set.
func readLine(r *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			long = true
			if room := max - len(line); room > 0 {
				line = append(line, chunk[:room]...)
			}
		} else {
			line = append(line, chunk...)
		}
		switch {
		case err == nil:
			if !long {
				line = line[:len(line)-1]
			}
			return line, long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, long, err
		}
	}
}

func (s *Server) serveTools(ctx context.Context, in io.Reader) {
	br := bufio.NewReaderSize(in, 4096)
	for {
		line, long, err := readLine(br, MaxToolLine)
		if err != nil {
			return
		}
		var text string
		switch req, perr := ParseToolLine(line); {
		case long:
			text = fmt.Sprintf("error: line longer than %d bytes refused", MaxToolLine)
		case perr != nil:
			text = "error: " + perr.Error()
		case req.List:
			text = string(channel.ClaudeTools(s.env.Tools))
		default:
			r := s.env.Call(ctx, ToolUser, s.env.Name+":claw", req.Name, req.Input)
			text = r.Content
			if d := channel.Denial(r); d != "" {
				text = "error: " + d
			}
		}
		s.writeResult(EncodeResult(text))
	}
}

// writeResult writes a result to claw_out, and drains it after WriteWait
// if nobody read it by then.
func (s *Server) writeResult(frame []byte) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.outGen++
	gen := s.outGen
	s.clawOut.SetWriteDeadline(time.Now().Add(s.cfg.WriteWait))
	if _, err := s.clawOut.Write(frame); err != nil {
		s.env.Log.Warn("planckclaw result lost", "event", "planckclaw_lost", "channel", s.env.Name, "error", err.Error())
	}
	time.AfterFunc(s.cfg.WriteWait, func() {
		s.outMu.Lock()
		defer s.outMu.Unlock()
		if gen != s.outGen {
			return // a newer result was written: this one was read
		}
		if n := drain(s.clawOut); n > 0 {
			s.env.Log.Warn("planckclaw: a result nobody read was dropped", "event", "planckclaw_lost", "channel", s.env.Name, "bytes", n)
		}
	})
}

// drain reads what the FIFO holds without waiting, and says how much.
func drain(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	stale := 0
	rc.Read(func(fd uintptr) bool {
		buf := make([]byte, 4096)
		for {
			n, err := syscall.Read(int(fd), buf)
			if n <= 0 || err != nil {
				return true // EAGAIN: empty; done either way
			}
			stale += n
		}
	})
	return stale
}

func (s *Server) serveInteract(ctx context.Context, in io.Reader) {
	br := bufio.NewReaderSize(in, 4096)
	for {
		line, long, err := readLine(br, MaxInteractLine)
		if err != nil {
			return
		}
		id, text, perr := ParseInteractLine(line)
		switch {
		case long:
			if id, ok := LineID(line); ok {
				s.writeInteract(ctx, EncodeInteract(id, fmt.Sprintf("error: message longer than %d bytes refused", MaxInteractLine)))
			}
			s.env.Log.Warn("planckclaw line too long", "event", "planckclaw_refused", "channel", s.env.Name)
			continue
		case perr != nil:
			if id != "" {
				s.writeInteract(ctx, EncodeInteract(id, "error: "+perr.Error()))
			}
			s.env.Log.Warn("planckclaw line refused", "event", "planckclaw_refused", "channel", s.env.Name, "error", perr.Error())
			continue
		}
		reply := "error: this channel has no agent"
		if s.env.Chat != nil {
			r, err := s.env.Chat(ctx, id, s.env.Name+":"+id, text)
			reply = r
			if err != nil {
				reply = "error: " + err.Error()
			}
		}
		s.writeInteract(ctx, EncodeInteract(id, reply))
	}
}

// writeInteract writes one line to interact_out, keeping it open for the
// next (a reader like a shell loop sees end-of-file when the last writer
// closes), and opening it again once its reader went away.
func (s *Server) writeInteract(ctx context.Context, line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		if s.out == nil {
			f, err := openWriter(filepath.Join(s.cfg.Dir, InteractOut), s.cfg.WriteWait)
			if err != nil {
				s.env.Log.Warn("planckclaw reply lost: nobody reads interact_out", "event", "planckclaw_lost", "channel", s.env.Name, "error", err.Error())
				return
			}
			s.out = f
		}
		s.out.SetWriteDeadline(time.Now().Add(s.cfg.WriteWait))
		if _, err := s.out.Write(line); err == nil {
			return
		}
		s.out.Close() // EPIPE: the reader went away; a deadline: it stopped reading
		s.out = nil
	}
	s.env.Log.Warn("planckclaw reply lost: interact_out failed twice", "event", "planckclaw_lost", "channel", s.env.Name)
}
