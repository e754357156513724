package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/serve"
)

// gateDaemonWait bounds how long claw gate test waits for the daemon
// before it decides in process.
const gateDaemonWait = 2 * time.Second

// gateTestID names what a dry run is decided with: the claw home, its
// effective config and the mount namespace (configID), and the bytes of
// the user policies, which a daemon compiles only when it starts or
// reloads: a policy edited since then makes another id, and the edit is
// judged in process.
func gateTestID(e *env) (string, error) {
	id, err := configID(e.home, e)
	if err != nil {
		return "", err
	}
	pd, err := userPoliciesDigest(filepath.Join(e.home, "policies"))
	if err != nil {
		return "", err
	}
	return id + "+" + pd, nil
}

// userPoliciesDigest hashes the names and contents of the .rego files in
// dir, the files the gate compiles as user policies. A file it cannot
// read whole within the gate's bounds is an error: the caller then
// decides in process, where the gate reports it.
func userPoliciesDigest(dir string) (string, error) {
	h := sha256.New()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	if err != nil {
		return "", err
	}
	const maxFiles, maxBytes = 64, 256 << 10 // gate's maxUserPolicies, maxUserPolicyBytes
	n := 0
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".rego") {
			continue
		}
		if n++; n > maxFiles {
			return "", errors.New("too many user policies")
		}
		b, err := readBounded(filepath.Join(dir, name), maxBytes)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// askGateDaemon tries the claw serve of this user, config and policies
// for one dry run. It returns false when no daemon gave a well-formed
// answer; the caller then decides in process.
func askGateDaemon(ctx context.Context, g *globals, e *env, o *gateTestOptions, args []string) (serve.HookAnswer, bool) {
	a, err := gateDaemonAnswer(ctx, e, o, args)
	debug := os.Getenv("CLAW_GATE_DEBUG") != ""
	if err != nil {
		if debug {
			fmt.Fprintf(g.stderr, "claw: deciding in process: claw serve did not answer: %v\n", err)
		}
		return serve.HookAnswer{}, false
	}
	if debug {
		fmt.Fprintln(g.stderr, "claw: answered by claw serve")
	}
	return a, true
}

func gateDaemonAnswer(ctx context.Context, e *env, o *gateTestOptions, args []string) (serve.HookAnswer, error) {
	socket := e.cfg.Serve.Socket
	if socket == "" {
		return serve.HookAnswer{}, errors.New("no socket configured")
	}
	if _, err := os.Stat(socket); err != nil {
		return serve.HookAnswer{}, err // no daemon: not worth reading the token
	}
	req, err := gateTestRequest(e, o, args)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	token, err := serve.LoadToken(e.cfg.Serve.TokenFile)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, gateDaemonWait)
	defer cancel()
	a, err := serve.AskGateTest(ctx, socket, token, os.Getuid(), req)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	if a.Exit != exitOK && a.Exit != exitDenied && a.Exit != exitNeedsHuman {
		return serve.HookAnswer{}, fmt.Errorf("the daemon answered exit status %d", a.Exit)
	}
	if a.Stdout == "" {
		return serve.HookAnswer{}, errors.New("the daemon answered no decision")
	}
	return a, nil
}

// gateTestRequest is the dry run as the daemon takes it: the workspace and
// cwd made absolute here, where relative ones were meant.
func gateTestRequest(e *env, o *gateTestOptions, args []string) (serve.GateTestRequest, error) {
	id, err := gateTestID(e)
	if err != nil {
		return serve.GateTestRequest{}, err
	}
	r := serve.GateTestRequest{Config: id, Args: args, Action: o.actionJSON, Autonomy: o.autonomy,
		Explain: o.explain, Output: o.output}
	for _, p := range []struct{ in, out *string }{{&o.workspace, &r.Workspace}, {&o.cwd, &r.Cwd}} {
		if *p.in == "" {
			continue
		}
		if *p.out, err = canonicalDir(*p.in); err != nil {
			return serve.GateTestRequest{}, err
		}
	}
	return r, nil
}

// printAnswer prints the daemon's answer as the command's own.
func printAnswer(g *globals, a serve.HookAnswer) error {
	io.WriteString(g.stdout, a.Stdout)
	io.WriteString(g.stderr, a.Stderr)
	if a.Exit != exitOK {
		return silentExit(a.Exit)
	}
	return nil
}

// gateService answers claw gate test in claw serve: the engine compiled
// once per (re)load, the grants reread for each dry run as the command
// does. It writes no receipt.
type gateService struct {
	g *globals

	mu  sync.Mutex // one dry run at a time: the engine's grants are shared
	e   *env
	id  string
	eng *gate.Engine
}

// load compiles the policies now in force and returns the function that
// puts them in force. The id is taken before compiling, so a policy
// edited meanwhile gives callers another id and they decide in process.
func (s *gateService) load(ctx context.Context) (swap func(), err error) {
	var id string
	e, eng, err := daemonEngine(ctx, s.g, func(e *env) (err error) { id, err = gateTestID(e); return err })
	if err != nil {
		return nil, err
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.e, s.id, s.eng = e, id, eng
	}, nil
}

// daemonEngine loads the config now in force and compiles its policies
// for a service of claw serve; name runs in between, before the policies
// are read.
func daemonEngine(ctx context.Context, g *globals, name func(*env) error) (*env, *gate.Engine, error) {
	e, err := loadEnv(&globals{home: g.home, config: g.config, stderr: io.Discard})
	if err != nil {
		return nil, nil, err
	}
	if err := name(e); err != nil {
		return nil, nil, err
	}
	eng, err := newEngine(ctx, e, policyFromConfig(e.cfg))
	if err != nil {
		return nil, nil, err
	}
	return e, eng, nil
}

// answer decides one dry run exactly as claw gate test does in process.
// Anything but a decision (a bad action, a workspace that is not there)
// is an error: the command then decides in process and says it itself.
func (s *gateService) answer(ctx context.Context, r serve.GateTestRequest) (serve.HookAnswer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Config != s.id {
		return serve.HookAnswer{}, serve.ErrOtherConfig
	}
	if len(r.Args) == 0 && r.Action == "" {
		return serve.HookAnswer{}, errors.New("no action")
	}
	o := &gateTestOptions{autonomy: r.Autonomy, workspace: r.Workspace, cwd: r.Cwd, explain: r.Explain,
		output: r.Output, actionJSON: r.Action}
	if o.output != "text" && o.output != "json" {
		return serve.HookAnswer{}, fmt.Errorf("bad output %q", o.output)
	}
	if o.autonomy != "" && o.autonomy != "readonly" && o.autonomy != "supervised" && o.autonomy != "full" {
		return serve.HookAnswer{}, fmt.Errorf("bad autonomy %q", o.autonomy)
	}
	action, err := actionFromArgs(o.actionJSON, r.Args)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	gctx, err := gateContext(s.e, o)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	var out, errb bytes.Buffer
	g := &globals{stdout: &out, stderr: &errb}
	applyGrants(g, s.e, s.eng)
	err = decideAndPrint(ctx, g, s.eng, s.e, o, action, gctx)
	var ce *codeError
	if err != nil && (!errors.As(err, &ce) || ce.Err != nil) {
		return serve.HookAnswer{}, err
	}
	return serve.HookAnswer{Exit: exitCodeOf(err), Stdout: out.String(), Stderr: errb.String()}, nil
}
