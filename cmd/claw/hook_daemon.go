package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/hook"
	"github.com/clawsec/claw/internal/serve"
)

// configID names a claw home and its effective config (after defaults and
// expansion), so that a hook asks only a daemon that decides with the same,
// in the same mount namespace: paths are resolved where the decision is
// made, and a daemon under systemd's PrivateTmp or ProtectHome sees other
// files.
func configID(home string, e *env) (string, error) {
	b, err := json.Marshal(e.cfg)
	if err != nil {
		return "", err
	}
	mnt, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", home, e.userDir, mnt)
	h.Write(b)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// readEvent reads standard input once, in the background, for the daemon
// and then, if it does not answer, for the decision in process: stdin
// gives that decision the same bytes, and waits for them if ctx ended
// first (the hook's deadline then blocks the call, as it always did).
// complete says the whole event was read, within hook.MaxInput.
func readEvent(ctx context.Context, in io.Reader) (event []byte, complete bool, stdin io.Reader) {
	c := make(chan readResult, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, hook.MaxInput+1))
		c <- readResult{b, err}
	}()
	select {
	case r := <-c:
		return r.b, r.err == nil && len(r.b) <= hook.MaxInput, r.reader(in)
	case <-ctx.Done():
		return nil, false, &lateReader{c: c, in: in}
	}
}

type readResult struct {
	b   []byte
	err error
}

// reader gives the bytes read, then the read's error or the rest of in.
func (r readResult) reader(in io.Reader) io.Reader {
	if r.err != nil {
		return io.MultiReader(bytes.NewReader(r.b), errReader{r.err})
	}
	return io.MultiReader(bytes.NewReader(r.b), in)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// lateReader waits for the background read of readEvent.
type lateReader struct {
	c  chan readResult
	in io.Reader
	r  io.Reader
}

func (l *lateReader) Read(p []byte) (int, error) {
	if l.r == nil {
		l.r = (<-l.c).reader(l.in)
	}
	return l.r.Read(p)
}

// askDaemon tries the claw serve of this user and config for one hook
// call. It returns false when no daemon answered a well-formed answer
// within its share of the deadline; the caller then decides in process,
// so nothing here can let a tool call run that the gate did not allow.
func askDaemon(ctx context.Context, g *globals, o *hookOptions, f hook.Format, event []byte) (serve.HookAnswer, bool) {
	e, err := loadEnv(&globals{home: g.home, config: g.config, stderr: io.Discard})
	if err != nil || e.cfg.Serve.Socket == "" {
		return serve.HookAnswer{}, false
	}
	id, err := configID(e.home, e)
	if err != nil {
		return serve.HookAnswer{}, false
	}
	if _, err := os.Stat(e.cfg.Serve.Socket); err != nil {
		return serve.HookAnswer{}, false // no daemon: not worth reading the token
	}
	token, err := serve.LoadToken(e.cfg.Serve.TokenFile)
	if err != nil {
		return serve.HookAnswer{}, false
	}
	// A third of the deadline: what is left is enough to decide in process.
	ctx, cancel := context.WithTimeout(ctx, o.deadline/3)
	defer cancel()
	req := serve.HookRequest{Format: string(f), Config: id, Workspace: o.workspace, Deadline: o.deadline / 3, Event: event}
	for t := range o.trusted {
		req.Trusted = append(req.Trusted, t)
	}
	a, err := serve.AskHook(ctx, e.cfg.Serve.Socket, token, os.Getuid(), req)
	if err == nil {
		err = hook.CheckAnswer(f, a.Exit, a.Stdout)
	}
	if err != nil {
		if os.Getenv("CLAW_HOOK_DEBUG") != "" {
			fmt.Fprintf(g.stderr, "claw: deciding in process: claw serve did not answer: %v\n", err)
		}
		return serve.HookAnswer{}, false
	}
	if os.Getenv("CLAW_HOOK_DEBUG") != "" {
		fmt.Fprintln(g.stderr, "claw: answered by claw serve")
	}
	return a, true
}

// hookService answers hook calls in claw serve: the same guard as
// openHookGuard builds in a hook process, with the daemon's receipt log
// and an engine compiled once per (re)load.
type hookService struct {
	g   *globals
	log *broker.Log

	mu     sync.Mutex // one decision at a time: the engine's grants are shared
	e      *env
	id     string
	eng    *gate.Engine
	grants *grant.Store
}

// load compiles the policies of the config now in force and returns the
// function that puts them in force, so that a reload that fails later
// leaves the previous ones.
func (h *hookService) load(ctx context.Context) (swap func(), err error) {
	var id string
	e, eng, err := daemonEngine(ctx, h.g, func(e *env) (err error) { id, err = configID(e.home, e); return err })
	if err != nil {
		return nil, err
	}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.e, h.id, h.eng, h.grants = e, id, eng, grant.Open(filepath.Join(e.home, grant.FileName))
	}, nil
}

// answer decides one hook call exactly as `claw hook` does in process.
func (h *hookService) answer(ctx context.Context, r serve.HookRequest) (serve.HookAnswer, error) {
	f := hook.Format(r.Format)
	if f != hook.ClaudeCode && f != hook.Codex {
		return serve.HookAnswer{}, fmt.Errorf("unknown hook format %q", r.Format)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Config != h.id {
		return serve.HookAnswer{}, serve.ErrOtherConfig
	}
	o := &hookOptions{trusted: map[string]bool{}, workspace: r.Workspace}
	for _, t := range r.Trusted {
		o.trusted[t] = true
	}
	run := hook.Runner{Format: f, Deadline: r.Deadline, Open: func(context.Context) (*hook.Guard, func(), error) {
		// Reread like applyGrants: an unreadable store applies none.
		gs, err := h.grants.Load()
		if err != nil {
			gs = nil
		}
		h.eng.SetGrants(grant.Active(gs, time.Now()))
		gd, err := hookGuard(h.e, o, h.eng, h.log)
		return gd, nil, err
	}}
	var out, errb bytes.Buffer
	code := run.Run(ctx, bytes.NewReader(r.Event), &out, &errb)
	return serve.HookAnswer{Exit: code, Stdout: out.String(), Stderr: errb.String()}, nil
}
