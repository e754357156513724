package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/hook"
	"github.com/clawsec/claw/internal/serve"
	"github.com/clawsec/claw/receipts"
)

// HookFormat is the agent whose PreToolUse hook claw answers.
type HookFormat = hook.Format

const (
	HookClaudeCode = hook.ClaudeCode
	HookCodex      = hook.Codex
	// HookDeadline is how long a hook takes at most, by default.
	HookDeadline = hook.DefaultDeadline
)

// Hook is one call of claw hook: an agent's PreToolUse event on Stdin,
// the answer in the agent's format on Stdout, the reason of a block on
// Stderr.
type Hook struct {
	Format hook.Format
	// Trusted are the agent tools allowed without an equivalent in claw.
	Trusted  map[string]bool
	Deadline time.Duration // for the whole call, the daemon's try included
	// Workspace replaces the config's workspace when not "".
	Workspace string
	// PassphraseFile unlocks the receipt key; "" is
	// $CLAW_KEY_PASSPHRASE_FILE. A hook never prompts.
	PassphraseFile string
	NoDaemon       bool // decide in process even when a daemon could
	// Start is when the call began (AskFirst sets it); zero: when Run
	// starts. The deadline counts from it.
	Start time.Time

	// Env loads the config; QuietEnv loads it without notes, to find the
	// daemon that could answer.
	Env, QuietEnv func() (*Env, error)
	// Grants gives the engine the grants in force.
	Grants func(*gate.Engine)
	// KeyDir and ReceiptDir are the claw home's keys and receipts
	// directories.
	KeyDir, ReceiptDir func() (string, error)

	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run answers the call: nil when answered, else an exit with the hook's
// status for blocked (never 1, which agents take as "let the tool run").
func (h *Hook) Run(ctx context.Context) error {
	if h.run(ctx) != hook.ExitAnswered {
		return SilentExit(hook.ExitBlock)
	}
	return nil
}

// run answers the call and returns the hook's exit status. A claw serve
// of the same user and config answers when it can; otherwise the hook
// decides in process.
func (h *Hook) run(ctx context.Context) int {
	start := h.Start
	if start.IsZero() {
		start = time.Now()
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(h.Deadline))
	defer cancel()
	event, complete, stdin := readEvent(ctx, h.Stdin)
	if !h.NoDaemon && complete {
		if rt, ok := h.configRoute(); ok {
			a, err := h.askDaemon(ctx, event, rt)
			if err == nil {
				return h.answerFrom(a, "claw: answered by claw serve, asked with the parsed config")
			}
			if h.debug() && !errors.Is(err, errNoDaemon) {
				fmt.Fprintf(h.Stderr, "claw: deciding in process: claw serve did not answer: %v\n", err)
			}
		}
	}
	r := hook.Runner{Format: h.Format, Deadline: h.Deadline, Open: h.openGuard}
	return r.Run(ctx, stdin, h.Stdout, h.Stderr)
}

// openGuard loads what one hook decision needs. It never prompts: a
// hook has no terminal it may use.
func (h *Hook) openGuard(ctx context.Context) (*hook.Guard, func(), error) {
	gate.Prefetch()
	e, err := h.Env()
	if err != nil {
		return nil, nil, err
	}
	eng, err := NewEngine(ctx, e, Policy(e.Config))
	if err != nil {
		return nil, nil, err
	}
	h.Grants(eng) // a grant answers the hook's asks as it does the broker's
	keys, err := h.KeyDir()
	if err != nil {
		return nil, nil, err
	}
	signer, err := loadHookSigner(keys, h.PassphraseFile)
	if err != nil {
		return nil, nil, err
	}
	dir := e.Config.Receipts.Dir
	if dir == "" {
		if dir, err = h.ReceiptDir(); err != nil {
			return nil, nil, err
		}
	}
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1, CheckpointEvery: e.Config.Receipts.Checkpoint})
	if err != nil {
		return nil, nil, fmt.Errorf("opening the receipt log: %w", err)
	}
	gd, err := hookGuard(e, h.Trusted, h.Workspace, eng, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	return gd, func() { log.Close() }, nil
}

// hookGuard is the guard of one hook call, in a hook process or in claw
// serve.
func hookGuard(e *Env, trusted map[string]bool, workspace string, eng *gate.Engine, log *broker.Log) (*hook.Guard, error) {
	autonomy := e.Config.Security.Autonomy
	if autonomy != config.AutonomyReadonly && autonomy != config.AutonomySupervised && autonomy != config.AutonomyFull {
		return nil, fmt.Errorf("autonomy %q in the config is not one of readonly, supervised, full", autonomy)
	}
	ws := e.Config.WorkspaceDir
	if workspace != "" {
		ws = workspace
	}
	ws, err := CanonicalDir(ws)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", ws)
	}
	return &hook.Guard{
		Trusted:   trusted,
		Gate:      eng,
		Log:       log,
		Autonomy:  autonomy,
		Workspace: ws,
		Home:      e.UserDir,
		EstopFile: filepath.Join(e.Home, estop.FileName),
	}, nil
}

// loadHookSigner reads the receipt signing key in the keys directory
// dir, taking a passphrase only from a file (passphraseFile, else
// $CLAW_KEY_PASSPHRASE_FILE): it never opens the terminal, which belongs
// to the agent.
func loadHookSigner(dir, passphraseFile string) (*receipts.Signer, error) {
	path := filepath.Join(dir, ReceiptKeyName)
	pemBytes, err := ReadSmall(path, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no receipt signing key at %s (create one with 'claw init' or 'claw keys generate')", path)
	}
	if err != nil {
		return nil, err
	}
	priv, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) {
		pf := passphraseFile
		if pf == "" {
			pf = os.Getenv("CLAW_KEY_PASSPHRASE_FILE")
		}
		if pf == "" {
			return nil, errors.New("the receipt key needs a passphrase: pass --passphrase-file or set CLAW_KEY_PASSPHRASE_FILE")
		}
		return ReadPassphraseFile(pf)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return receipts.NewSigner(priv)
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

// daemonRoute is where a hook asks claw serve, and how it names the
// config it would decide with.
type daemonRoute struct{ socket, tokenFile, id string }

// configRoute is the route of the loaded config (QuietEnv): its socket
// and token, and its configID.
func (h *Hook) configRoute() (daemonRoute, bool) {
	e, err := h.QuietEnv()
	if err != nil || e.Config.Serve.Socket == "" {
		return daemonRoute{}, false
	}
	id, err := configID(e)
	if err != nil {
		return daemonRoute{}, false
	}
	return daemonRoute{e.Config.Serve.Socket, e.Config.Serve.TokenFile, id}, true
}

// askDaemon tries the claw serve at rt for one hook call. It returns an
// error when no daemon answered a well-formed answer within its share of
// the deadline; the caller then decides in process, so nothing here can
// let a tool call run that the gate did not allow. errNoDaemon: nothing
// listens on the socket's path.
func (h *Hook) askDaemon(ctx context.Context, event []byte, rt daemonRoute) (serve.HookAnswer, error) {
	if _, err := os.Stat(rt.socket); err != nil {
		return serve.HookAnswer{}, errNoDaemon // not worth reading the token
	}
	token, err := serve.LoadToken(rt.tokenFile)
	if err != nil {
		return serve.HookAnswer{}, errNoDaemon
	}
	// A third of the deadline: what is left is enough to decide in process.
	ctx, cancel := context.WithTimeout(ctx, h.Deadline/3)
	defer cancel()
	req := serve.HookRequest{Format: string(h.Format), Config: rt.id, Workspace: h.Workspace, Deadline: h.Deadline / 3, Event: event}
	for t := range h.Trusted {
		req.Trusted = append(req.Trusted, t)
	}
	a, err := serve.AskHook(ctx, rt.socket, token, os.Getuid(), req)
	if err == nil {
		err = hook.CheckAnswer(h.Format, a.Exit, a.Stdout)
	}
	return a, err
}

// errNoDaemon marks a route with no daemon to ask.
var errNoDaemon = errors.New("no claw serve at the socket")

// answerFrom passes the daemon's answer a on and returns the exit status;
// note is the debugging line that says who answered.
func (h *Hook) answerFrom(a serve.HookAnswer, note string) int {
	if h.debug() {
		fmt.Fprintln(h.Stderr, note)
	}
	if a.Exit == hook.ExitBlock {
		io.WriteString(h.Stderr, a.Stderr)
		return a.Exit
	}
	if _, err := io.WriteString(h.Stdout, a.Stdout); err != nil {
		fmt.Fprintf(h.Stderr, "claw: blocked: failed to write the answer: %v\n", err)
		return hook.ExitBlock
	}
	return hook.ExitAnswered
}

func (h *Hook) debug() bool { return os.Getenv("CLAW_HOOK_DEBUG") != "" }

// AskFirst is the fast path of a hook call, taken before the command tree
// is built and the config parsed: it reads the event and asks the claw
// serve at the claw home's default socket with the default token file
// (home and configPath are the --home and --config flags), naming the
// config by its sourceID. answered is false when the daemon did not
// answer; h.Stdin then gives the event again and h.Start says when the
// call began, for the command's own run, which asks the daemon named by
// the parsed config again only when retry says that one may answer: the
// fast path found no daemon or token where the defaults put them, or the
// daemon refused its token or the source id alone.
func (h *Hook) AskFirst(ctx context.Context, home, configPath string) (code int, answered, retry bool) {
	h.Start = time.Now()
	home, configPath, err := ConfigPaths(home, configPath)
	if err != nil {
		return 0, false, true
	}
	rt := daemonRoute{socket: config.DefaultSocket(home), tokenFile: config.DefaultTokenFile(home)}
	if _, err := os.Stat(rt.socket); err != nil {
		return 0, false, true // nothing read yet
	}
	ctx, cancel := context.WithDeadline(ctx, h.Start.Add(h.Deadline))
	defer cancel()
	event, complete, stdin := readEvent(ctx, h.Stdin)
	h.Stdin = stdin
	if !complete {
		return 0, false, false
	}
	data, err := config.ReadFile(configPath)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return 0, false, true // the command reports it
	}
	userDir, _ := os.UserHomeDir() // as the command's config load
	if rt.id, err = sourceID(home, userDir, data, config.EnvWithHome(home)); err != nil {
		return 0, false, true
	}
	a, err := h.askDaemon(ctx, event, rt)
	switch {
	case err == nil:
		return h.answerFrom(a, "claw: answered by claw serve"), true, false
	case errors.Is(err, serve.ErrOtherConfig), errors.Is(err, serve.ErrToken), errors.Is(err, errNoDaemon):
		if h.debug() {
			fmt.Fprintf(h.Stderr, "claw: claw serve at %s did not take the config's source: %v\n", rt.socket, err)
		}
		return 0, false, true
	}
	if h.debug() {
		fmt.Fprintf(h.Stderr, "claw: deciding in process: claw serve did not answer: %v\n", err)
	}
	return 0, false, false
}

// hookService is the answerer of hook calls in claw serve: the same
// guard as a hook process builds, with the daemon's receipt log and an
// engine compiled once per (re)load. env loads the config now in force.
func hookService(env func() (*Env, error), log *broker.Log) Hooks {
	h := &hookAnswerer{log: log}
	return Hooks{Load: func(ctx context.Context) (func(), error) { return h.load(ctx, env, configID, loadedSourceID) }, Answer: h.answer}
}

type hookAnswerer struct {
	compiled
	log *broker.Log
}

// answer decides one hook call exactly as `claw hook` does in process.
func (h *hookAnswerer) answer(ctx context.Context, r serve.HookRequest) (serve.HookAnswer, error) {
	f := hook.Format(r.Format)
	if f != hook.ClaudeCode && f != hook.Codex {
		return serve.HookAnswer{}, fmt.Errorf("unknown hook format %q", r.Format)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Config != h.id && (h.src == "" || r.Config != h.src) {
		return serve.HookAnswer{}, serve.ErrOtherConfig
	}
	trusted := map[string]bool{}
	for _, t := range r.Trusted {
		trusted[t] = true
	}
	run := hook.Runner{Format: f, Deadline: r.Deadline, Go: serve.GoWarm, Open: func(context.Context) (*hook.Guard, func(), error) {
		// Reread as a hook process does: an unreadable store applies none.
		gs, err := grant.Open(filepath.Join(h.e.Home, grant.FileName)).Load()
		if err != nil {
			gs = nil
		}
		h.eng.SetGrants(grant.Active(gs, time.Now()))
		gd, err := hookGuard(h.e, trusted, r.Workspace, h.eng, h.log)
		return gd, nil, err
	}}
	var out, errb bytes.Buffer
	code := run.Run(ctx, bytes.NewReader(r.Event), &out, &errb)
	return serve.HookAnswer{Exit: code, Stdout: out.String(), Stderr: errb.String()}, nil
}

// compiled is the engine a service of claw serve decides with, compiled
// once per (re)load, and the config and ids it was compiled for.
type compiled struct {
	mu  sync.Mutex // one decision at a time: the engine's grants are shared
	e   *Env
	id  string
	src string // the config's sourceID, or "" (none vouched for)
	eng *gate.Engine
}

// load loads the config now in force, names it with idOf (and srcOf,
// when not nil) before the policies are read, compiles them, and returns
// the function that puts them in force, so that a reload that fails
// later leaves the previous ones. A policy edited meanwhile gives
// callers another id, and they decide in process.
func (c *compiled) load(ctx context.Context, env func() (*Env, error), idOf func(*Env) (string, error), srcOf func(*Env, string) string) (swap func(), err error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	id, err := idOf(e)
	if err != nil {
		return nil, err
	}
	var src string
	if srcOf != nil {
		src = srcOf(e, id)
	}
	eng, err := NewEngine(ctx, e, Policy(e.Config))
	if err != nil {
		return nil, err
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.e, c.id, c.src, c.eng = e, id, src, eng
	}, nil
}

// hookSettings is the part of Claude Code's settings.json and Codex's
// hooks.json that claw doctor reads.
type hookSettings struct {
	Hooks struct {
		PreToolUse []struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string  `json:"type"`
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"PreToolUse"`
	} `json:"hooks"`
}

// CheckAgentHooks finds agent settings that run claw hook and checks that
// the hook can answer: every tool matched, a timeout above the deadline,
// and a receipt key (in keyDir, unless keyDirErr) it can open without a
// terminal.
func CheckAgentHooks(keyDir string, keyDirErr error) DoctorResult {
	var files []string
	if u, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(u, ".claude", "settings.json"), filepath.Join(u, ".codex", "hooks.json"))
	}
	if wd, err := os.Getwd(); err == nil {
		files = append(files, filepath.Join(wd, ".claude", "settings.json"), filepath.Join(wd, ".claude", "settings.local.json"), filepath.Join(wd, ".codex", "hooks.json"))
	}
	var found, problems, fixes []string
	passphrase := os.Getenv("CLAW_KEY_PASSPHRASE_FILE") != ""
	for _, path := range files {
		b, err := ReadSmall(path, 1<<20)
		if err != nil {
			continue
		}
		var hs hookSettings
		if err := json.Unmarshal(b, &hs); err != nil {
			if bytes.Contains(b, []byte("claw hook")) {
				problems = append(problems, fmt.Sprintf("%s is not valid JSON: %v", path, err))
				fixes = append(fixes, "fix the JSON in "+path)
			}
			continue
		}
		for _, m := range hs.Hooks.PreToolUse {
			for _, h := range m.Hooks {
				if !strings.Contains(h.Command, "claw hook claude-code") && !strings.Contains(h.Command, "claw hook codex") {
					continue
				}
				found = append(found, path)
				passphrase = passphrase || strings.Contains(h.Command, "--passphrase-file")
				if m.Matcher != "" && m.Matcher != "*" && m.Matcher != ".*" {
					problems = append(problems, fmt.Sprintf("%s: matcher %q leaves other tools unguarded", path, m.Matcher))
					fixes = append(fixes, `use "matcher": "*" (Claude Code) or no matcher (Codex)`)
				}
				if h.Timeout > 0 && time.Duration(h.Timeout*float64(time.Second)) <= hook.DefaultDeadline {
					problems = append(problems, fmt.Sprintf("%s: timeout %gs is not above claw's %s deadline; a hook the agent kills lets the tool run", path, h.Timeout, hook.DefaultDeadline))
					fixes = append(fixes, `set "timeout": 30`)
				}
			}
		}
	}
	if len(found) == 0 && len(problems) == 0 {
		return DoctorSkipped("no Claude Code or Codex settings run 'claw hook' (see docs/hooks.md)")
	}
	if keyDirErr == nil && !passphrase {
		if pemBytes, err := ReadSmall(filepath.Join(keyDir, ReceiptKeyName), 64<<10); err == nil && receipts.IsEncryptedKey(pemBytes) {
			problems = append(problems, "the receipt key is encrypted and a hook cannot prompt: every tool call would be blocked")
			fixes = append(fixes, "add --passphrase-file FILE to the hook command, or set CLAW_KEY_PASSPHRASE_FILE")
		}
	}
	if len(problems) > 0 {
		return DoctorFailed(strings.Join(problems, "; "), strings.Join(fixes, "; "))
	}
	return DoctorPassed(strings.Join(found, ", "))
}
