package runtime

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
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/serve"
)

// GateTestRequest is a dry run of claw gate test as the daemon takes it;
// DaemonAnswer is the daemon's answer: exit status, standard output and
// error.
type (
	GateTestRequest = serve.GateTestRequest
	DaemonAnswer    = serve.HookAnswer
)

// gateDaemonWait bounds how long claw gate test waits for the daemon
// before it decides in process.
const gateDaemonWait = 2 * time.Second

// gateTestID names what a dry run is decided with: the claw home, its
// effective config and the mount namespace (configID), and the bytes of
// the user policies, which a daemon compiles only when it starts or
// reloads: a policy edited since then makes another id, and the edit is
// judged in process.
func gateTestID(e *Env) (string, error) {
	id, err := configID(e)
	if err != nil {
		return "", err
	}
	pd, err := userPoliciesDigest(filepath.Join(e.Home, "policies"))
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
		b, err := ReadBounded(filepath.Join(dir, name), maxBytes)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// AskGateTest asks the claw serve of this user, config and policies (of
// e) for the dry run r. It returns false when no daemon gave a
// well-formed answer; the caller then decides in process. With
// $CLAW_GATE_DEBUG set, it says on stderr which it was.
func AskGateTest(ctx context.Context, e *Env, r serve.GateTestRequest, stderr io.Writer) (serve.HookAnswer, bool) {
	a, err := askGateTest(ctx, e, r)
	debug := os.Getenv("CLAW_GATE_DEBUG") != ""
	if err != nil {
		if debug {
			fmt.Fprintf(stderr, "claw: deciding in process: claw serve did not answer: %v\n", err)
		}
		return serve.HookAnswer{}, false
	}
	if debug {
		fmt.Fprintln(stderr, "claw: answered by claw serve")
	}
	return a, true
}

// askGateTest asks the daemon for the dry run r, its workspace and cwd
// made absolute here, where relative ones were meant. Any answer but a
// decision (exit 0, 3 or 6, with something on standard output) is an
// error.
func askGateTest(ctx context.Context, e *Env, r serve.GateTestRequest) (serve.HookAnswer, error) {
	socket := e.Config.Serve.Socket
	if socket == "" {
		return serve.HookAnswer{}, errors.New("no socket configured")
	}
	if _, err := os.Stat(socket); err != nil {
		return serve.HookAnswer{}, err // no daemon: not worth reading the token
	}
	var err error
	if r.Config, err = gateTestID(e); err != nil {
		return serve.HookAnswer{}, err
	}
	for _, p := range []*string{&r.Workspace, &r.Cwd} {
		if *p == "" {
			continue
		}
		if *p, err = CanonicalDir(*p); err != nil {
			return serve.HookAnswer{}, err
		}
	}
	token, err := serve.LoadToken(e.Config.Serve.TokenFile)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, gateDaemonWait)
	defer cancel()
	a, err := serve.AskGateTest(ctx, socket, token, os.Getuid(), r)
	if err != nil {
		return serve.HookAnswer{}, err
	}
	if a.Exit != ExitOK && a.Exit != ExitDenied && a.Exit != ExitNeedsHuman {
		return serve.HookAnswer{}, fmt.Errorf("the daemon answered exit status %d", a.Exit)
	}
	if a.Stdout == "" {
		return serve.HookAnswer{}, errors.New("the daemon answered no decision")
	}
	return a, nil
}

// GateTestDecide decides the dry run r with eng as claw gate test does in
// process, printing what the command prints; its error carries the
// command's exit status.
type GateTestDecide func(ctx context.Context, e *Env, eng *gate.Engine, r serve.GateTestRequest, stdout, stderr io.Writer) error

// gateTestService is the answerer of claw gate test in claw serve: the
// engine compiled once per (re)load from the config env loads, the dry
// run decided by decide. It writes no receipt.
func gateTestService(env func() (*Env, error), decide GateTestDecide) GateTests {
	s := &gateService{decide: decide}
	return GateTests{Load: func(ctx context.Context) (func(), error) { return s.load(ctx, env, gateTestID, nil) }, Answer: s.answer}
}

type gateService struct {
	compiled
	decide GateTestDecide
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
	if r.Output != "text" && r.Output != "json" {
		return serve.HookAnswer{}, fmt.Errorf("bad output %q", r.Output)
	}
	if r.Autonomy != "" && r.Autonomy != "readonly" && r.Autonomy != "supervised" && r.Autonomy != "full" {
		return serve.HookAnswer{}, fmt.Errorf("bad autonomy %q", r.Autonomy)
	}
	var out, errb bytes.Buffer
	err := s.decide(ctx, s.e, s.eng, r, &out, &errb)
	var ce *Error
	if err != nil && (!errors.As(err, &ce) || ce.Err != nil) {
		return serve.HookAnswer{}, err
	}
	return serve.HookAnswer{Exit: ExitCode(err), Stdout: out.String(), Stderr: errb.String()}, nil
}
