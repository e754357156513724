package broker

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/idlegc"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// TestMain lets this test binary act as the sandboxed child, as claw does.
func TestMain(m *testing.M) {
	if code, ok := executor.EnterChild(os.Args); ok {
		os.Exit(code)
	}
	executor.AllowSelfExec()
	os.Exit(m.Run())
}

func requireSandbox(t testing.TB) {
	t.Helper()
	if err := executor.Check().Require(0); err != nil {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			t.Fatalf("CLAW_REQUIRE_SANDBOX is set: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
}

type fixedApprover struct {
	answer Answer
	asked  []Request
}

func (f *fixedApprover) Approve(_ context.Context, r Request) (Answer, error) {
	f.asked = append(f.asked, r)
	return f.answer, nil
}

type rig struct {
	b       *Broker
	log     *Log
	dir     string // receipts
	ws      string
	root    string // holds ESTOP and the passphrase state
	approve *fixedApprover
}

func newRig(t testing.TB, autonomy string, approver *fixedApprover) *rig {
	t.Helper()
	var cfg func(*Config)
	if approver != nil {
		cfg = func(c *Config) { c.Approver = approver }
	}
	r := newRigWith(t, autonomy, nil, cfg)
	r.approve = approver
	return r
}

// newRigWith builds a broker over a real gate, receipt log and executor;
// pol and cfg, when non-nil, adjust the policy and the broker's Config.
func newRigWith(t testing.TB, autonomy string, pol func(*gate.Policy), cfg func(*Config)) *rig {
	t.Helper()
	root := t.TempDir()
	os.Chmod(root, 0o755)
	root, _ = filepath.EvalSymlinks(root)
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ws, 0o777)
	home := filepath.Join(root, "home")
	policy := gate.Policy{
		WorkspaceOnly:     true,
		ForbiddenPaths:    []string{"/etc", home + "/.ssh"},
		ReadPaths:         []string{"/usr", "/bin", "/lib", "/lib64", "/sbin"},
		ForbiddenCommands: []string{"rm"},
		AllowedCommands:   []string{"ls", "cat", "echo", "touch", "sh", "bash"},
		PassphraseFor:     []string{"high"},
	}
	if pol != nil {
		pol(&policy)
	}
	eng, err := gate.New(context.Background(), gate.Options{Home: home, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "receipts")
	log := newTestLog(t, dir)
	c := Config{Gate: eng, Log: log, Autonomy: autonomy, Workspace: ws, Home: home, Channel: "test",
		EstopFile: filepath.Join(root, "ESTOP"), Sandbox: Sandbox{RunAs: ""}}
	if cfg != nil {
		cfg(&c)
	}
	return &rig{b: New(c), log: log, dir: dir, ws: ws, root: root}
}

// bodies returns the receipts of actionID, in order.
func (r *rig) bodies(t *testing.T, actionID string) []receipts.Body {
	t.Helper()
	var out []receipts.Body
	err := receipts.Walk(context.Background(), r.dir, func(rec receipts.Record) error {
		if rec.Err != nil {
			return rec.Err
		}
		if rec.Line.Decoded.ActionID == actionID {
			out = append(out, rec.Line.Decoded)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func types(bs []receipts.Body) string {
	var s []string
	for _, b := range bs {
		x := string(b.Type)
		if b.Outcome != nil {
			x += ":" + b.Outcome.Status
		}
		if b.Approval != nil {
			x += ":" + b.Approval.Result
		}
		s = append(s, x)
	}
	return strings.Join(s, " ")
}

func sh(cmd string) gate.Action {
	return gate.Action{Tool: "shell", Args: map[string]any{"command": cmd}}
}

func TestInvoke(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name       string
		autonomy   string
		approver   *fixedApprover
		action     func(ws string) gate.Action
		wantStatus string
		wantTypes  string
		wantFile   string // a file the action creates when it runs
		wantRan    bool
	}{
		{name: "allowed runs", autonomy: "full", action: func(ws string) gate.Action { return sh("touch made") },
			wantStatus: StatusOK, wantTypes: "decision outcome:ok", wantFile: "made", wantRan: true},
		{name: "failing command", autonomy: "full", action: func(ws string) gate.Action { return sh("cat no-such-file") },
			wantStatus: StatusFailed, wantTypes: "decision outcome:failed", wantRan: true},
		{name: "denied never runs", autonomy: "full", action: func(ws string) gate.Action { return sh("touch made; rm -rf /") },
			wantStatus: StatusDenied, wantTypes: "decision outcome:denied", wantFile: "made"},
		{name: "ask without approver", autonomy: "supervised", action: func(ws string) gate.Action { return sh("rm -rf gone; touch made") },
			wantStatus: StatusNeedsApproval, wantTypes: "decision outcome:denied", wantFile: "made"},
		{name: "ask approved runs", autonomy: "supervised", approver: &fixedApprover{answer: Answer{Result: "approved", By: "cli:test"}},
			action: func(ws string) gate.Action { return sh("rm -rf gone; touch made") }, wantStatus: StatusOK,
			wantTypes: "decision approval:approved outcome:ok", wantFile: "made", wantRan: true},
		{name: "ask rejected never runs", autonomy: "supervised", approver: &fixedApprover{answer: Answer{Result: "rejected", By: "cli:test"}},
			action: func(ws string) gate.Action { return sh("rm -rf gone; touch made") }, wantStatus: StatusRejected,
			wantTypes: "decision approval:rejected outcome:denied", wantFile: "made"},
		{name: "ask timeout never runs", autonomy: "supervised", approver: &fixedApprover{answer: Answer{Result: "timeout", By: "none"}},
			action: func(ws string) gate.Action { return sh("rm -rf gone; touch made") }, wantStatus: StatusApprovalTO,
			wantTypes: "decision approval:timeout outcome:denied", wantFile: "made"},
		{name: "file write tool", autonomy: "full", action: func(ws string) gate.Action {
			return gate.Action{Tool: "file_write", Args: map[string]any{"path": "made", "content": "hi"}}
		}, wantStatus: StatusOK, wantTypes: "decision outcome:ok", wantFile: "made", wantRan: true},
		{name: "malformed arguments", autonomy: "full", action: func(ws string) gate.Action {
			return gate.Action{Tool: "file_write", Args: map[string]any{"path": 7}}
		}, wantStatus: StatusDenied, wantTypes: "decision outcome:denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.autonomy, tt.approver)
			out, err := r.b.Invoke(context.Background(), tt.action(r.ws), "conv-1")
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			if out.Status != tt.wantStatus {
				t.Fatalf("status = %s (%v), want %s", out.Status, out.Err, tt.wantStatus)
			}
			if got := types(r.bodies(t, out.ActionID)); got != tt.wantTypes {
				t.Fatalf("receipts = %q, want %q", got, tt.wantTypes)
			}
			if tt.wantFile != "" {
				_, err := os.Stat(filepath.Join(r.ws, tt.wantFile))
				if ran := err == nil; ran != tt.wantRan {
					t.Fatalf("ran = %v, want %v", ran, tt.wantRan)
				}
			}
			if tt.wantRan && (out.Result == nil || !out.Result.Sandbox.Seccomp || out.Result.Sandbox.LandlockABI == 0) {
				t.Fatalf("ran without the sandbox: %+v", out.Result)
			}
			if tt.approver != nil && len(tt.approver.asked) != 1 {
				t.Fatalf("approver asked %d times", len(tt.approver.asked))
			}
		})
	}
}

func TestEstopBlocks(t *testing.T) {
	r := newRig(t, "full", nil)
	if err := os.WriteFile(r.b.cfg.EstopFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := r.b.Invoke(context.Background(), sh("touch made"), "")
	if err != nil || out.Status != StatusEstop {
		t.Fatalf("estop: %s %v", out.Status, err)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "made")); err == nil {
		t.Fatal("ran under estop")
	}
	if got := types(r.bodies(t, out.ActionID)); got != "decision outcome:estop" {
		t.Fatalf("receipts = %q", got)
	}
}

// TestNoReceiptNoAction: when the decision receipt cannot be written the
// action does not run.
func TestNoReceiptNoAction(t *testing.T) {
	r := newRig(t, "full", nil)
	r.log.Close()
	out, err := r.b.Invoke(context.Background(), sh("touch made"), "")
	if !errors.Is(err, ErrNoReceipt) || out.Status != StatusError {
		t.Fatalf("closed log: %s %v", out.Status, err)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "made")); err == nil {
		t.Fatal("ran without a receipt")
	}
}

// TestSecretsNotInReceipts plants fake keys in an action and in the
// environment and searches the log for them.
func TestSecretsNotInReceipts(t *testing.T) {
	requireSandbox(t)
	const planted = "sk-test-PLANTEDsecret0123456789"
	const envSecret = "PLANTEDenvValue-987654321"
	t.Setenv("CLAW_TEST_API_KEY", envSecret)
	// env prints the environment and asks; approve it, so that it runs.
	r := newRig(t, "full", &fixedApprover{answer: Answer{Result: "approved", By: "cli:test"}})
	for _, cmd := range []string{
		"echo " + planted,
		"OPENAI_API_KEY=" + planted + " ls",
		"echo " + envSecret,
		"env",
	} {
		out, err := r.b.Invoke(context.Background(), sh(cmd), "")
		if err != nil {
			t.Fatal(err)
		}
		if cmd == "env" && (out.Result == nil || strings.Contains(string(out.Result.Stdout), envSecret)) {
			t.Fatalf("the sandboxed child saw the parent's secret: %q", out.Result.Stdout)
		}
	}
	r.log.Close()
	segs, err := filepath.Glob(filepath.Join(r.dir, "*"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no receipt files: %v", err)
	}
	for _, f := range segs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range []string{planted, envSecret} {
			if strings.Contains(string(b), s) {
				t.Fatalf("%s contains the planted secret %q", f, s)
			}
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, leak string
	}{
		{name: "openai key", in: "curl -H 'Authorization: Bearer sk-abcdefghijklmnop' x", leak: "sk-abcdefghijklmnop"},
		{name: "env assignment", in: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG ls", leak: "wJalrXUtnFEMI"},
		{name: "github token", in: "git clone https://ghp_0123456789abcdefghijABCDEF@github.com/x", leak: "ghp_0123456789"},
		{name: "url password", in: "curl https://bob:hunter2secret@example.com/", leak: "hunter2secret"},
		{name: "pem", in: "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAB3Nza\n-----END OPENSSH PRIVATE KEY-----", leak: "AAAAB3Nza"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in); strings.Contains(got, tt.leak) {
				t.Fatalf("Redact(%q) = %q: still contains %q", tt.in, got, tt.leak)
			}
		})
	}
	if got := Redact("ls -la && git status"); got != "ls -la && git status" {
		t.Fatalf("Redact changed harmless text: %q", got)
	}
}

// FuzzRedact: whatever surrounds it, a planted key never survives, and
// redaction is stable (redacting twice changes nothing more).
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"", "x", "TOKEN=", "https://a:", "-----BEGIN RSA PRIVATE KEY-----", "\n"} {
		f.Add(s, s)
	}
	const key = "sk-PLANTEDfuzz0123456789abc"
	f.Fuzz(func(t *testing.T, pre, post string) {
		in := pre + " " + key + " " + post
		out := Redact(in)
		if strings.Contains(out, key) {
			t.Fatalf("Redact(%q) kept the key: %q", in, out)
		}
		if again := Redact(out); again != out {
			t.Fatalf("Redact not stable: %q then %q", out, again)
		}
	})
}

// TestInProcessTools checks that tools run in-process take the same path
// as every other action: gate, receipts, and a tool error for a failure.
func TestInProcessTools(t *testing.T) {
	r := newRig(t, "supervised", nil)
	calls := 0
	r.b.cfg.InProcess = map[toolkind.Kind]ToolFunc{
		"time": func(context.Context, map[string]any) (json.RawMessage, error) {
			calls++
			return json.RawMessage(`{"now":"2026-11-22T10:00:00Z"}`), nil
		},
		"tool": func(_ context.Context, args map[string]any) (json.RawMessage, error) {
			calls++
			switch args["name"] {
			case "boom":
				panic("upstream exploded")
			case "bad":
				return json.RawMessage(`{not json`), nil
			case "fail":
				return nil, errors.New("upstream said no")
			}
			return json.RawMessage(`{"ok":true}`), nil
		},
	}
	tests := []struct {
		name       string
		action     gate.Action
		wantStatus string
		wantErr    string
		wantCalls  int
	}{
		{name: "time allowed at supervised", action: gate.Action{Tool: "time", Args: map[string]any{}}, wantStatus: StatusOK, wantCalls: 1},
		{name: "external tool asks, nobody to ask", action: gate.Action{Tool: "tool", Args: map[string]any{"server": "s", "name": "ok", "args": map[string]any{}}}, wantStatus: StatusNeedsApproval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = 0
			out, err := r.b.Invoke(context.Background(), tt.action, "")
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != tt.wantStatus || calls != tt.wantCalls {
				t.Fatalf("status %s calls %d, want %s %d (%v)", out.Status, calls, tt.wantStatus, tt.wantCalls, out.Err)
			}
			if got := types(r.bodies(t, out.ActionID)); !strings.HasPrefix(got, "decision") || !strings.Contains(got, "outcome") {
				t.Fatalf("receipts = %s", got)
			}
		})
	}

	// At full autonomy the external tool runs; its failures are tool
	// errors with an outcome receipt, never a broker failure.
	full := newRig(t, "full", nil)
	full.b.cfg.InProcess = r.b.cfg.InProcess
	for name, want := range map[string]string{"ok": "", "boom": "upstream exploded", "bad": "not JSON", "fail": "upstream said no"} {
		out, err := full.b.Invoke(context.Background(), gate.Action{Tool: "tool", Args: map[string]any{"server": "s", "name": name, "args": map[string]any{}}}, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want == "" {
			if out.Status != StatusOK || string(out.Result.Tool.Payload) != `{"ok":true}` {
				t.Fatalf("%s: %s %+v", name, out.Status, out.Result)
			}
			continue
		}
		if out.Status != StatusFailed || !strings.Contains(out.Result.Tool.Error, want) {
			t.Fatalf("%s: status %s, tool %+v, want failed with %q", name, out.Status, out.Result.Tool, want)
		}
		bs := full.bodies(t, out.ActionID)
		if last := bs[len(bs)-1]; last.Outcome == nil || last.Outcome.Status != "failed" || !strings.Contains(last.Outcome.Error, want) {
			t.Fatalf("%s: outcome receipt %+v", name, last.Outcome)
		}
	}
}

// newTestLog opens the receipt log in dir, signed by a new key, closed
// when the test ends (brokertest.NewLog, which the broker's own tests
// cannot import).
func newTestLog(t testing.TB, dir string) *Log {
	t.Helper()
	return newTestLogWith(t, dir, LogOptions{CheckpointInterval: -1})
}

// newTestLogWith is newTestLog with opts.
func newTestLogWith(t testing.TB, dir string, opts LogOptions) *Log {
	t.Helper()
	priv, err := receipts.GenerateKey(receipts.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipts.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	log, err := OpenLog(dir, signer, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log
}

// inFlightApprover records how many requests the idle collector counts
// while it is asked.
type inFlightApprover struct{ during int }

func (a *inFlightApprover) Approve(context.Context, Request) (Answer, error) {
	a.during = idlegc.InFlight()
	return Answer{Result: "rejected", By: "cli:test"}, nil
}

// TestActionCountsForIdleCollector: an action is in flight for the idle
// collector from its decision to its outcome (here, while a human is
// asked), and no longer once it returns.
func TestActionCountsForIdleCollector(t *testing.T) {
	a := &inFlightApprover{}
	r := newRigWith(t, "supervised", nil, func(c *Config) { c.Approver = a })
	before := idlegc.InFlight()
	out, err := r.b.Invoke(context.Background(), sh("rm -rf gone; touch made"), "c1")
	if err != nil || out.Status != StatusRejected {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if a.during != before+1 {
		t.Fatalf("%d requests in flight while asking, %d before", a.during, before)
	}
	if n := idlegc.InFlight(); n != before {
		t.Fatalf("%d requests in flight after the action, %d before", n, before)
	}
}

// TestDecisionReceiptBeforeRun: an allowed action's sandbox is readied
// while its decision receipt is written, and the action runs only once
// the receipt is in the log: the action finds it there, with a child
// started for it and with workers started ahead, however slow the commit.
func TestDecisionReceiptBeforeRun(t *testing.T) {
	requireSandbox(t)
	for _, prestart := range []bool{false, true} {
		r := newRig(t, "full", nil)
		var slow atomic.Bool
		log := newTestLogWith(t, filepath.Join(r.ws, "receipts"), LogOptions{CheckpointInterval: -1, Now: func() time.Time {
			if slow.Load() {
				time.Sleep(200 * time.Millisecond)
			}
			return time.Now()
		}})
		r.b.cfg.Log = log
		if prestart {
			executor.Prestart()
		}
		slow.Store(true)
		for i := range 3 {
			out, err := r.b.Invoke(context.Background(), sh("cat receipts/* > seen"), "")
			if err != nil || out.Status != StatusOK {
				t.Fatalf("prestart %v, action %d: %s %v", prestart, i, out.Status, err)
			}
			seen, err := os.ReadFile(filepath.Join(r.ws, "seen"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(seen), `"action_id":"`+out.ActionID+`"`) {
				t.Fatalf("prestart %v, action %d: the action ran before its decision receipt was written:\n%s", prestart, i, seen)
			}
		}
		if prestart {
			executor.StopPrestart()
		}
	}
}

// TestSpecErrorAfterReceipt: an allowed action whose sandbox spec cannot
// be built (a tool with no runner) is recorded like any other, its
// decision first, and ends with the spec's error: nothing ran.
func TestSpecErrorAfterReceipt(t *testing.T) {
	r := newRig(t, "full", nil)
	out, err := r.b.Invoke(context.Background(), gate.Action{Tool: "time", Args: map[string]any{}}, "")
	if err != nil || out.Decision.Decision != gate.Allow {
		t.Fatalf("Invoke: %v, decision %s", err, out.Decision.Decision)
	}
	if out.Status != StatusError || out.Result != nil || out.Err == nil || !strings.Contains(out.Err.Error(), "has no executor") {
		t.Fatalf("status %s, result %v, err %v; want error \"has no executor\" and nothing run", out.Status, out.Result, out.Err)
	}
	bs := r.bodies(t, out.ActionID)
	if got := types(bs); got != "decision outcome:failed" || !strings.Contains(bs[1].Outcome.Error, "has no executor") {
		t.Fatalf("receipts = %q, outcome error %q", got, bs[len(bs)-1].Outcome.Error)
	}
}
