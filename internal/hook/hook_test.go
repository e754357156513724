package hook

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const planted = "sk-test-PLANTED-0123456789abcdef"

// fixture is a real gate and a real receipt log in a temporary home.
type fixture struct {
	home, ws, clawHome, receiptDir string
	autonomy                       string
	gateTimeout                    time.Duration
	trusted                        map[string]bool

	keyOnce sync.Once
	priv    crypto.Signer
	keyErr  error
}

func newFixture(t *testing.T) *fixture { return newFixtureTB(t) }

func newFixtureB(b *testing.B) *fixture { return newFixtureTB(b) }

func newFixtureTB(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	f := &fixture{
		home:        filepath.Join(root, "home"),
		clawHome:    filepath.Join(root, "home", ".claw"),
		autonomy:    "supervised",
		gateTimeout: 10 * time.Second, // a loaded test machine is not a slow policy
	}
	f.ws = filepath.Join(f.home, "ws")
	f.receiptDir = filepath.Join(f.clawHome, "receipts")
	for _, d := range []string{f.ws, filepath.Join(f.ws, "src"), filepath.Join(f.home, ".ssh"), filepath.Join(f.clawHome, "policies")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.ws, "notes.txt"), []byte("a c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) policy() gate.Policy {
	return gate.Policy{
		WorkspaceOnly:     true,
		ForbiddenPaths:    []string{"/etc", "/sys", "/boot", filepath.Join(f.home, ".ssh")},
		ReadPaths:         []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"},
		ForbiddenCommands: []string{"rm", "shutdown", "reboot", "mkfs", "dd"},
		AllowedCommands:   []string{"ls", "cat", "grep", "find", "head", "tail", "wc", "pwd", "echo", "git", "go", "make"},
		AllowedDomains:    []string{},
		PassphraseFor:     []string{"high"},
	}
}

// open returns a Runner.Open function over the real gate and log.
func (f *fixture) open(t testing.TB) func(ctx context.Context) (*Guard, func(), error) {
	t.Helper()
	return func(ctx context.Context) (*Guard, func(), error) {
		eng, err := gate.New(ctx, gate.Options{
			Policy:        f.policy(),
			Home:          f.home,
			ClawHome:      f.clawHome,
			UserPolicyDir: filepath.Join(f.clawHome, "policies"),
			Timeout:       f.gateTimeout,
		})
		if err != nil {
			return nil, nil, err
		}
		f.keyOnce.Do(func() { f.priv, f.keyErr = receipts.GenerateKey(receipts.Ed25519) })
		if f.keyErr != nil {
			return nil, nil, f.keyErr
		}
		signer, err := receipts.NewSigner(f.priv)
		if err != nil {
			return nil, nil, err
		}
		log, err := broker.OpenLog(f.receiptDir, signer, broker.LogOptions{CheckpointInterval: -1})
		if err != nil {
			return nil, nil, err
		}
		return &Guard{Gate: eng, Log: log, Autonomy: f.autonomy, Trusted: f.trusted, Workspace: f.ws, Home: f.home,
			EstopFile: filepath.Join(f.clawHome, "ESTOP")}, func() { log.Close() }, nil
	}
}

// openWith opens the guard, closed when t ends, and decodes event ($WS
// expanded): what a test that decides one call itself starts with.
func (f *fixture) openWith(t testing.TB, event string) (*Guard, *Event) {
	t.Helper()
	g, closeGuard, err := f.open(t)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeGuard)
	ev, err := Decode(f.expand([]byte(event)))
	if err != nil {
		t.Fatal(err)
	}
	return g, ev
}

// run feeds input to a Runner and returns exit code, stdout and stderr.
func (f *fixture) run(t *testing.T, format Format, input []byte, mod func(*Runner)) (int, string, string) {
	t.Helper()
	r := &Runner{Format: format, Deadline: time.Minute, Open: f.open(t)}
	if mod != nil {
		mod(r)
	}
	var stdout, stderr bytes.Buffer
	code := r.Run(context.Background(), bytes.NewReader(input), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// receiptText is every receipt file's contents.
func (f *fixture) receiptText(t *testing.T) string {
	t.Helper()
	var all []byte
	_ = filepath.WalkDir(f.receiptDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	return string(all)
}

func (f *fixture) expand(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("$WS"), []byte(f.ws))
	return bytes.ReplaceAll(b, []byte("$HOME"), []byte(f.home))
}

func (f *fixture) unexpand(s string) string {
	s = strings.ReplaceAll(s, f.ws, "$WS")
	return strings.ReplaceAll(s, f.home, "$HOME")
}

// TestGolden runs each testdata/hook/<agent>/NAME.json through the hook
// and compares exit status, stdout and stderr with NAME.golden. A name
// ending in _block must exit 2; every other case answers with exit 0.
func TestGolden(t *testing.T) {
	for _, format := range []Format{ClaudeCode, Codex} {
		files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "hook", string(format), "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no golden inputs for %s: %v", format, err)
		}
		for _, in := range files {
			name := strings.TrimSuffix(filepath.Base(in), ".json")
			t.Run(string(format)+"/"+name, func(t *testing.T) {
				f := newFixture(t)
				raw, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := f.run(t, format, f.expand(raw), nil)
				got := f.unexpand("exit " + strconv.Itoa(code) + "\n-- stdout --\n" + stdout + "-- stderr --\n" + stderr)
				wantCode := ExitAnswered
				if strings.HasSuffix(name, "_block") {
					wantCode = ExitBlock
				}
				if code != wantCode {
					t.Errorf("exit %d, want %d\n%s", code, wantCode, got)
				}
				switch {
				case strings.HasSuffix(name, "_allow"):
					if format == Codex && stdout != "" {
						t.Errorf("codex allow must print nothing, got %q", stdout)
					}
					if format == ClaudeCode && !strings.Contains(stdout, `"permissionDecision":"allow"`) {
						t.Errorf("want allow, got %s", stdout)
					}
				case strings.HasSuffix(name, "_ask"):
					if !strings.Contains(stdout, `"permissionDecision":"ask"`) {
						t.Errorf("want ask, got %s", stdout)
					}
				case strings.HasSuffix(name, "_deny"), strings.HasSuffix(name, "_denied"):
					if !strings.Contains(stdout, `"permissionDecision":"deny"`) {
						t.Errorf("want deny, got %s", stdout)
					}
				}
				if strings.Contains(stdout+stderr, planted) {
					t.Errorf("planted secret in the answer:\n%s", got)
				}
				if strings.Contains(f.receiptText(t), planted) {
					t.Errorf("planted secret in the receipts")
				}
				// Every call leaves a receipt, refused ones included.
				if !strings.Contains(f.receiptText(t), `"channel":"`+string(format)+`"`) {
					t.Errorf("no receipt on channel %s", format)
				}
				golden := strings.TrimSuffix(in, ".json") + ".golden"
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if got != string(want) {
					t.Errorf("output differs from %s:\n got: %s\nwant: %s", golden, got, want)
				}
			})
		}
	}
}

// TestFaults forces each internal failure and checks the hook blocks
// (exit 2, reason on stderr, nothing on stdout) and never exits 1.
func TestFaults(t *testing.T) {
	input := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"$WS/notes.txt"}}`)
	tests := []struct {
		name       string
		format     Format
		input      []byte
		mod        func(f *fixture, r *Runner)
		wantStderr string
	}{
		{name: "panic while deciding", format: ClaudeCode, input: input,
			mod: func(f *fixture, r *Runner) {
				r.fault = func(_ context.Context, stage string) error {
					if stage == "decide" {
						panic("injected")
					}
					return nil
				}
			},
			wantStderr: "internal error: injected"},
		{name: "panic while opening", format: Codex, input: input,
			mod: func(f *fixture, r *Runner) {
				r.fault = func(_ context.Context, stage string) error {
					if stage == "open" {
						panic("injected")
					}
					return nil
				}
			},
			wantStderr: "internal error: injected"},
		{name: "slower than the deadline", format: ClaudeCode, input: input,
			mod: func(f *fixture, r *Runner) {
				r.Deadline = 50 * time.Millisecond
				r.fault = func(context.Context, string) error { time.Sleep(time.Hour); return nil }
			},
			wantStderr: "no decision within 50ms"},
		{name: "guard cannot open", format: ClaudeCode, input: input,
			mod: func(f *fixture, r *Runner) {
				r.Open = func(context.Context) (*Guard, func(), error) { return nil, nil, errors.New("no config") }
			},
			wantStderr: "no config"},
		{name: "receipt cannot be written", format: ClaudeCode, input: input,
			mod: func(f *fixture, r *Runner) {
				open := r.Open
				r.Open = func(ctx context.Context) (*Guard, func(), error) {
					g, closeFn, err := open(ctx)
					if err == nil {
						closeFn() // a closed log refuses every append
					}
					return g, func() {}, err
				}
			},
			wantStderr: "receipt could not be written"},
		{name: "receipt cannot be written for codex", format: Codex, input: input,
			mod: func(f *fixture, r *Runner) {
				open := r.Open
				r.Open = func(ctx context.Context) (*Guard, func(), error) {
					g, closeFn, err := open(ctx)
					if err == nil {
						closeFn()
					}
					return g, func() {}, err
				}
			},
			wantStderr: "receipt could not be written"},
		{name: "gate error", format: ClaudeCode, input: input,
			mod:        func(f *fixture, r *Runner) { f.gateTimeout = time.Nanosecond },
			wantStderr: "the gate could not decide"},
		{name: "input larger than 1 MiB", format: ClaudeCode,
			input:      append([]byte(`{"tool_name":"Bash","tool_input":{"command":"`), bytes.Repeat([]byte("a"), MaxInput)...),
			wantStderr: "input is larger than 1048576 bytes"},
		{name: "input larger than 1 MiB for codex", format: Codex,
			input:      bytes.Repeat([]byte(" "), MaxInput+1),
			wantStderr: "input is larger than 1048576 bytes"},
		{name: "no guard", format: ClaudeCode, input: input,
			mod:        func(f *fixture, r *Runner) { r.Open = nil },
			wantStderr: "hook has no guard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			start := time.Now()
			code, stdout, stderr := f.run(t, tt.format, f.expand(tt.input), func(r *Runner) {
				if tt.mod != nil {
					tt.mod(f, r)
				}
			})
			if code != ExitBlock {
				t.Errorf("exit %d, want %d (stderr %q)", code, ExitBlock, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, "claw: blocked: ") || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// TestGateErrorIsRecorded checks that a decision the gate could not make
// still leaves a deny receipt with the gate's reason.
func TestGateErrorIsRecorded(t *testing.T) {
	f := newFixture(t)
	f.gateTimeout = time.Nanosecond
	code, _, _ := f.run(t, ClaudeCode, f.expand([]byte(`{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"ls"}}`)), nil)
	if code != ExitBlock {
		t.Fatalf("exit %d", code)
	}
	rt := f.receiptText(t)
	if !strings.Contains(rt, `"result":"deny"`) || !strings.Contains(rt, "gate.error") {
		t.Errorf("no deny receipt with gate.error:\n%s", rt)
	}
}

// TestAutonomyAndEstop covers decisions that depend on the guard's state.
func TestAutonomyAndEstop(t *testing.T) {
	tests := []struct {
		name     string
		autonomy string
		estop    bool
		trusted  string
		format   Format
		input    string
		want     string // permissionDecision, or "" for no output
	}{
		{name: "a trusted tool is allowed", autonomy: "supervised", trusted: "TodoWrite", format: ClaudeCode,
			input: `{"tool_name":"TodoWrite","cwd":"$WS","tool_input":{"todos":[]}}`, want: "allow"},
		{name: "trust covers only that tool", autonomy: "supervised", trusted: "TodoWrite", format: ClaudeCode,
			input: `{"tool_name":"Task","cwd":"$WS","tool_input":{}}`, want: "ask"},
		{name: "trust never skips the gate", autonomy: "supervised", trusted: "Bash", format: ClaudeCode,
			input: `{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"rm -rf /"}}`, want: "deny"},
		{name: "estop denies a trusted tool", autonomy: "full", estop: true, trusted: "TodoWrite", format: ClaudeCode,
			input: `{"tool_name":"TodoWrite","cwd":"$WS","tool_input":{}}`, want: "deny"},
		{name: "full allows a plain command", autonomy: "full", format: ClaudeCode,
			input: `{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"ls -la"}}`, want: "allow"},
		{name: "full codex allow prints nothing", autonomy: "full", format: Codex,
			input: `{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"ls -la"}}`, want: ""},
		{name: "full never allows an unknown tool", autonomy: "full", format: ClaudeCode,
			input: `{"tool_name":"Task","cwd":"$WS","tool_input":{"prompt":"x"}}`, want: "ask"},
		{name: "readonly denies an unknown tool", autonomy: "readonly", format: ClaudeCode,
			input: `{"tool_name":"Task","cwd":"$WS","tool_input":{"prompt":"x"}}`, want: "deny"},
		{name: "readonly denies a write", autonomy: "readonly", format: ClaudeCode,
			input: `{"tool_name":"Write","cwd":"$WS","tool_input":{"file_path":"a.txt","content":"x"}}`, want: "deny"},
		{name: "estop denies a read", autonomy: "full", estop: true, format: ClaudeCode,
			input: `{"tool_name":"Read","cwd":"$WS","tool_input":{"file_path":"notes.txt"}}`, want: "deny"},
		{name: "estop denies an unknown tool", autonomy: "full", estop: true, format: ClaudeCode,
			input: `{"tool_name":"Task","cwd":"$WS","tool_input":{}}`, want: "deny"},
		{name: "dontAsk turns ask into deny", autonomy: "supervised", format: ClaudeCode,
			input: `{"tool_name":"Bash","cwd":"$WS","permission_mode":"dontAsk","tool_input":{"command":"rm -rf build"}}`, want: "deny"},
		{name: "plan mode still asks", autonomy: "supervised", format: ClaudeCode,
			input: `{"tool_name":"Bash","cwd":"$WS","permission_mode":"plan","tool_input":{"command":"rm -rf build"}}`, want: "ask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.autonomy = tt.autonomy
			if tt.trusted != "" {
				f.trusted = map[string]bool{tt.trusted: true}
			}
			if tt.estop {
				if err := os.WriteFile(filepath.Join(f.clawHome, "ESTOP"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := f.run(t, tt.format, f.expand([]byte(tt.input)), nil)
			if code != ExitAnswered {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tt.want == "" {
				if stdout != "" {
					t.Errorf("stdout %q, want nothing", stdout)
				}
				return
			}
			if !strings.Contains(stdout, `"permissionDecision":"`+tt.want+`"`) {
				t.Errorf("got %s, want %s", stdout, tt.want)
			}
			if tt.want == "allow" && tt.trusted != "" && !strings.Contains(f.receiptText(t), `"degraded":["hook.trust_tool=`+tt.trusted+`"]`) {
				t.Errorf("the opt-in is not in the receipt:\n%s", f.receiptText(t))
			}
		})
	}
}

// TestConcurrentHooks runs hooks side by side, each with its own handle on
// the log, as parallel tool calls start separate processes: every call is
// recorded, and the log verifies with no open intents.
func TestConcurrentHooks(t *testing.T) {
	f := newFixture(t)
	inputs := []string{
		`{"tool_name":"Read","cwd":"$WS","tool_input":{"file_path":"notes.txt"}}`,
		`{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"rm -rf /"}}`,
		`{"tool_name":"Write","cwd":"$WS","tool_input":{"file_path":"a.txt","content":"x"}}`,
		`{"tool_name":"TodoWrite","cwd":"$WS","tool_input":{}}`,
	}
	// The first receipt fixes the log's id. (Two processes that both find
	// a fresh, empty log can each pick an id: see the receipts package.)
	if code, _, stderr := f.run(t, ClaudeCode, f.expand([]byte(inputs[0])), nil); code != ExitAnswered {
		t.Fatalf("first hook: exit %d: %s", code, stderr)
	}
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = f.run(t, ClaudeCode, f.expand([]byte(inputs[i%len(inputs)])), nil)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != ExitAnswered {
			t.Errorf("hook %d: exit %d", i, c)
		}
	}
	rep, err := audit.Verify(context.Background(), f.receiptDir, audit.Options{Keys: []crypto.PublicKey{f.priv.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified {
		t.Errorf("log does not verify: %+v", rep)
	}
	total := 0
	for _, c := range rep.ByDecision {
		total += c
	}
	if total != n+1 {
		t.Errorf("%d decisions recorded, want %d (%v)", total, n+1, rep.ByDecision)
	}
	if rep.ByOutcome[OutcomeDelegated] != 7 || rep.ByOutcome["denied"] != 2 {
		t.Errorf("outcomes %v, want 7 delegated and 2 denied", rep.ByOutcome)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings: %+v", rep.Warnings)
	}
}

func TestMap(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		cwd      string
		input    map[string]any
		wantTool []toolkind.Kind
		wantPath []any
	}{
		{name: "glob relative", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "src/**/*.go"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/w/src"}},
		{name: "glob absolute", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "/etc/*.conf"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/etc"}},
		{name: "glob root", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "/**"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/"}},
		{name: "glob dotdot kept", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "../../x/*"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/w/../../x"}},
		{name: "glob with path", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "*.md", "path": "/docs"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/docs"}},
		{name: "glob climbs after a wildcard", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "src/*/../../../etc/passwd"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/w/src/../../.."}},
		{name: "glob brace absolute", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "{src,/etc}/*"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/"}},
		{name: "glob tilde", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "~/.ssh/*"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"~/.ssh"}},
		{name: "glob root climb", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "/*/../x"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/.."}},
		{name: "glob file", tool: "Glob", cwd: "/w", input: map[string]any{"pattern": "a/b.txt"}, wantTool: []toolkind.Kind{"file_list"}, wantPath: []any{"/w/a"}},
		{name: "grep cwd", tool: "Grep", cwd: "/w", input: map[string]any{"pattern": "x"}, wantTool: []toolkind.Kind{"file_read"}, wantPath: []any{"/w"}},
		{name: "grep path", tool: "Grep", cwd: "/w", input: map[string]any{"pattern": "x", "path": "sub"}, wantTool: []toolkind.Kind{"file_read"}, wantPath: []any{"sub"}},
		{name: "mcp", tool: "mcp__srv__do_it", input: map[string]any{"a": 1.0}, wantTool: []toolkind.Kind{"tool"}},
		{name: "mcp malformed", tool: "mcp__srv", input: map[string]any{}, wantTool: []toolkind.Kind{"unknown"}},
		{name: "patch two files", tool: "apply_patch", input: map[string]any{"command": "*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Delete File: c\n*** End Patch"},
			wantTool: []toolkind.Kind{"file_write", "file_write", "file_write"}, wantPath: []any{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := Map(&Event{ToolName: tt.tool, Cwd: tt.cwd, ToolInput: tt.input})
			if len(calls) != len(tt.wantTool) {
				t.Fatalf("got %d calls, want %d: %+v", len(calls), len(tt.wantTool), calls)
			}
			for i, c := range calls {
				if c.Action.Tool != tt.wantTool[i] {
					t.Errorf("call %d: tool %q, want %q", i, c.Action.Tool, tt.wantTool[i])
				}
				if tt.wantPath != nil && c.Action.Args["path"] != tt.wantPath[i] {
					t.Errorf("call %d: path %v, want %v", i, c.Action.Args["path"], tt.wantPath[i])
				}
			}
		})
	}
}

// FuzzDecode feeds arbitrary bytes to the decoder and the mapping: no
// panic, and a decoded event always has a tool name.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "hook", "*", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"tool_name":"apply_patch","tool_input":{"command":"*** Add File: a\n+x"}}`))
	f.Add([]byte(`{"tool_name":"MultiEdit","tool_input":{"edits":[{"old_string":1}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("error does not wrap ErrInput: %v", err)
			}
			return
		}
		if ev.ToolName == "" || ev.ToolInput == nil {
			t.Fatalf("decoded event without tool: %+v", ev)
		}
		calls := Map(ev)
		if len(calls) == 0 {
			t.Fatal("no calls")
		}
		for _, c := range calls {
			if c.Action.Tool == "" {
				t.Fatalf("call without tool: %+v", c)
			}
		}
	})
}

// TestInterrupted checks that a cancelled run (SIGINT, SIGTERM) blocks.
func TestInterrupted(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{Format: ClaudeCode, Deadline: time.Minute, Open: f.open(t),
		fault: func(context.Context, string) error { cancel(); time.Sleep(time.Hour); return nil }}
	var stdout, stderr bytes.Buffer
	code := r.Run(ctx, strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"ls"}}`), &stdout, &stderr)
	if code != ExitBlock || stdout.Len() != 0 || !strings.Contains(stderr.String(), "interrupted before a decision") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestRenderRefusesEmptyAnswer(t *testing.T) {
	for _, f := range []Format{ClaudeCode, Codex} {
		if _, err := render(f, Verdict{Decision: "maybe"}); err == nil {
			t.Errorf("%s: rendered a verdict with no answer", f)
		}
	}
}

// BenchmarkDecide measures one decision with its two receipts, made
// durable in one commit, the guard already open (what a long-lived
// process would pay).
func BenchmarkDecide(b *testing.B) {
	f := newFixtureB(b)
	g, ev := f.openWith(b, `{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"git status && ls -la | wc -l"}}`)
	b.ResetTimer()
	for b.Loop() {
		if _, err := g.Decide(context.Background(), ClaudeCode, ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun measures a whole hook call as the CLI makes it: compile
// the policies, open the log, decide, record, answer.
func BenchmarkRun(b *testing.B) {
	f := newFixtureB(b)
	in := f.expand([]byte(`{"tool_name":"Read","cwd":"$WS","tool_input":{"file_path":"notes.txt"}}`))
	for b.Loop() {
		r := &Runner{Format: ClaudeCode, Deadline: time.Minute, Open: f.open(b)}
		if code := r.Run(context.Background(), bytes.NewReader(in), io.Discard, io.Discard); code != ExitAnswered {
			b.Fatalf("exit %d", code)
		}
	}
}

// TestOutcomesSayWhatTheAgentWasTold checks the outcome receipts: an ask
// answered as a deny is recorded as denied, and so is every action of a
// call that is denied as a whole.
func TestOutcomesSayWhatTheAgentWasTold(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		input  string
		want   []string
		never  []string
	}{
		{name: "codex ask is denied", format: Codex,
			input: `{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"rm -rf build"}}`,
			want:  []string{`"status":"denied","ms":0,"error":"denied: hook.cannot_ask"`}, never: []string{OutcomeDelegated}},
		{name: "claude code ask is delegated", format: ClaudeCode,
			input: `{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"rm -rf build"}}`,
			want:  []string{`"status":"delegated"`}, never: []string{`"status":"denied"`}},
		{name: "one bad file denies the whole patch", format: Codex,
			input: `{"tool_name":"apply_patch","cwd":"$WS","tool_input":{"command":"*** Add File: ok.txt\n+x\n*** Add File: /etc/cron.d/x\n+y\n"}}`,
			want:  []string{`"error":"denied with the rest of the tool call"`, `"error":"denied: destructive.system_file_write`}, never: []string{OutcomeDelegated}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if code, _, stderr := f.run(t, tt.format, f.expand([]byte(tt.input)), nil); code != ExitAnswered {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rt := f.receiptText(t)
			for _, w := range tt.want {
				if !strings.Contains(rt, w) {
					t.Errorf("receipts lack %s:\n%s", w, rt)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(rt, n) {
					t.Errorf("receipts have %s:\n%s", n, rt)
				}
			}
		})
	}
}

// FuzzRun drives whole hook runs over the real gate and log: whatever the
// input, the run either answers (exit 0, one JSON line, or nothing for a
// Codex allow) or blocks (exit 2, nothing on stdout).
func FuzzRun(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "hook", "*", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, strings.Contains(p, "codex"))
		}
	}
	fx := newFixtureTB(f)
	g, closeFn, err := fx.open(f)(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(closeFn)
	shared := func(context.Context) (*Guard, func(), error) { return g, nil, nil }
	f.Fuzz(func(t *testing.T, in []byte, codex bool) {
		format := ClaudeCode
		if codex {
			format = Codex
		}
		r := &Runner{Format: format, Deadline: time.Minute, Open: shared}
		var stdout, stderr bytes.Buffer
		code := r.Run(context.Background(), bytes.NewReader(fx.expand(in)), &stdout, &stderr)
		if err := CheckAnswer(format, code, stdout.String()); err != nil {
			t.Fatalf("CheckAnswer refuses the runner's own answer (exit %d, %q): %v", code, stdout.String(), err)
		}
		switch code {
		case ExitBlock:
			if stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "claw: blocked: ") {
				t.Fatalf("block with stdout %q stderr %q", stdout.String(), stderr.String())
			}
		case ExitAnswered:
			out := stdout.String()
			if format == Codex && out == "" {
				return
			}
			var o claudeOutput
			if err := json.Unmarshal([]byte(out), &o); err != nil || strings.Count(out, "\n") != 1 {
				t.Fatalf("answer is not one JSON line: %q", out)
			}
			switch o.HookSpecificOutput.PermissionDecision {
			case "allow", "ask", "deny":
			default:
				t.Fatalf("answer %q", out)
			}
			if format == Codex && o.HookSpecificOutput.PermissionDecision != "deny" {
				t.Fatalf("codex told %q", out)
			}
		default:
			t.Fatalf("exit %d", code)
		}
	})
}

func TestCheckAnswer(t *testing.T) {
	answer := func(d string) string {
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + d + `","permissionDecisionReason":"claw: x"}}` + "\n"
	}
	for _, c := range []struct {
		f    Format
		code int
		out  string
		ok   bool
	}{
		{ClaudeCode, ExitAnswered, answer("allow"), true},
		{ClaudeCode, ExitAnswered, answer("ask"), true},
		{ClaudeCode, ExitAnswered, answer("deny"), true},
		{Codex, ExitAnswered, answer("deny"), true},
		{Codex, ExitAnswered, "", true},
		{ClaudeCode, ExitBlock, "", true},
		{Codex, ExitBlock, "", true},

		{ClaudeCode, ExitAnswered, "", false},
		{ClaudeCode, 1, answer("deny"), false},
		{ClaudeCode, -1, "", false},
		{ClaudeCode, ExitBlock, answer("allow"), false},
		{Codex, ExitAnswered, answer("allow"), false},
		{Codex, ExitAnswered, answer("ask"), false},
		{ClaudeCode, ExitAnswered, answer("Allow"), false},
		{ClaudeCode, ExitAnswered, answer("passphrase"), false},
		{ClaudeCode, ExitAnswered, strings.TrimSuffix(answer("allow"), "\n"), false},
		{ClaudeCode, ExitAnswered, answer("allow") + answer("deny"), false},
		{ClaudeCode, ExitAnswered, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"allow"}}` + "\n", false},
		{ClaudeCode, ExitAnswered, `{"decision":"approve"}` + "\n", false},
		{ClaudeCode, ExitAnswered, "allow\n", false},
		{ClaudeCode, ExitAnswered, " " + answer("allow"), false},
		{ClaudeCode, ExitAnswered, strings.Replace(answer("allow"), "permissionDecision\"", "PermissionDecision\"", 1), false},
		{ClaudeCode, ExitAnswered, strings.Replace(answer("allow"), `}}`, `,"x":1}}`, 1), false},
	} {
		err := CheckAnswer(c.f, c.code, c.out)
		if (err == nil) != c.ok {
			t.Errorf("CheckAnswer(%s, %d, %q) = %v, want ok %v", c.f, c.code, c.out, err, c.ok)
		}
	}
}

// FuzzCheckAnswer: an answer it accepts is one the agent reads as exactly
// allow, ask or deny (Codex: deny or nothing), or a block.
func FuzzCheckAnswer(f *testing.F) {
	f.Add(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"r"}}`+"\n", 0, false)
	f.Add("", 0, true)
	f.Add("", 2, false)
	f.Fuzz(func(t *testing.T, out string, code int, codex bool) {
		format := ClaudeCode
		if codex {
			format = Codex
		}
		if CheckAnswer(format, code, out) != nil {
			return
		}
		if code == ExitBlock {
			if out != "" {
				t.Fatalf("block accepted with output %q", out)
			}
			return
		}
		if code != ExitAnswered {
			t.Fatalf("exit %d accepted", code)
		}
		if out == "" {
			if !codex {
				t.Fatal("empty claude-code answer accepted")
			}
			return
		}
		var o map[string]map[string]any
		if err := json.Unmarshal([]byte(out), &o); err != nil || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Fatalf("accepted answer is not one JSON line: %q", out)
		}
		d, _ := o["hookSpecificOutput"]["permissionDecision"].(string)
		if d != "allow" && d != "ask" && d != "deny" || codex && d != "deny" {
			t.Fatalf("accepted decision %q (codex %v) in %q", d, codex, out)
		}
	})
}

// The hook's action_sha256 is the broker's, as receipts/doc.go defines
// it: SHA-256 over {"tool","args","sandbox"} with the decision's sandbox
// plan, so it means one thing in the whole log.
func TestActionDigestIsTheBrokers(t *testing.T) {
	f := newFixture(t)
	in := `{"session_id":"s1","tool_name":"Bash","cwd":"$WS","tool_input":{"command":"ls src"}}`
	if code, _, stderr := f.run(t, ClaudeCode, f.expand([]byte(in)), nil); code != ExitAnswered {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ctx := context.Background()
	g, closeGuard, err := f.open(t)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeGuard()
	a := gate.Action{Tool: "shell", Args: map[string]any{"command": "ls src"}}
	d, err := g.Gate.DecideInput(ctx, gate.BuildInput(a, gate.Context{Autonomy: f.autonomy, Workspace: f.ws, Cwd: f.ws,
		Home: f.home, Channel: string(ClaudeCode), Conversation: "s1"}))
	if err != nil || len(d.Sandbox.Read) == 0 {
		t.Fatalf("decision %+v, %v; want one with a sandbox plan", d, err)
	}
	b, err := json.Marshal(struct {
		Tool    toolkind.Kind    `json:"tool"`
		Args    map[string]any   `json:"args"`
		Sandbox gate.SandboxPlan `json:"sandbox"`
	}{a.Tool, a.Args, d.Sandbox})
	if err != nil {
		t.Fatal(err)
	}
	want := receipts.Digest(b)
	var got []string
	err = receipts.Walk(ctx, f.receiptDir, func(r receipts.Record) error {
		if r.Err == nil && r.Line.Decoded.Type == receipts.TypeDecision {
			got = append(got, r.Line.Decoded.Action.ActionSHA256)
		}
		return r.Err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("action_sha256 %q, want [%s]", got, want)
	}
}

// An agent started by a delegate call: its receipts name the parent
// action, and a tool outside its tools_allow is denied although the gate
// allows it.
func TestDelegatedGuard(t *testing.T) {
	f := newFixture(t)
	f.autonomy = "full"
	open := f.open(t)
	run := func(input string) string {
		r := &Runner{Format: ClaudeCode, Deadline: time.Minute, Open: func(ctx context.Context) (*Guard, func(), error) {
			g, closeLog, err := open(ctx)
			if err == nil {
				g.ParentAction, g.ToolsAllow = "parent-0001", []string{"file_read"}
			}
			return g, closeLog, err
		}}
		var stdout, stderr bytes.Buffer
		if code := r.Run(context.Background(), bytes.NewReader(f.expand([]byte(input))), &stdout, &stderr); code != ExitAnswered {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return stdout.String()
	}
	if out := run(`{"tool_name":"Read","cwd":"$WS","tool_input":{"file_path":"notes.txt"}}`); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("an allowed tool: %s", out)
	}
	if out := run(`{"tool_name":"Bash","cwd":"$WS","tool_input":{"command":"ls"}}`); !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, ReasonToolNotAllowed) {
		t.Errorf("a tool outside tools_allow: %s", out)
	}
	r := &Runner{Format: ClaudeCode, Deadline: time.Minute, Open: func(ctx context.Context) (*Guard, func(), error) {
		g, closeLog, err := open(ctx)
		if err == nil {
			g.ParentAction = "parent-0001"
		}
		return g, closeLog, err
	}}
	if code := r.Run(context.Background(), strings.NewReader("not json"), io.Discard, io.Discard); code != ExitBlock {
		t.Errorf("malformed input: exit %d", code)
	}
	text := f.receiptText(t)
	if n := strings.Count(text, `"parent_action":"parent-0001"`); n != 6 {
		t.Errorf("%d receipts name the parent action, want 6 (three decisions, three outcomes; one refused input):\n%s", n, text)
	}
}

// One tool call, several actions (a patch of three files, one of them
// denied): every decision receipt, then every outcome receipt, as
// consecutive lines written by one fdatasync, and the log verifies.
func TestDecideOneCommit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	g, closeGuard, err := f.open(t)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeGuard()
	ev, err := Decode(f.expand([]byte(`{"tool_name":"apply_patch","cwd":"$WS","tool_input":{"command":"*** Add File: a.txt\n+x\n*** Add File: b.txt\n+y\n*** Add File: /etc/cron.d/x\n+z\n"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	before := g.Log.Syncs()
	v, err := g.Decide(ctx, Codex, ev)
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Log.Syncs() - before; n != 1 {
		t.Fatalf("%d fdatasyncs for one hook call, want 1", n)
	}
	if v.Answer != gate.Deny || len(v.ActionIDs) != 3 {
		t.Fatalf("verdict %+v, want a deny over three actions", v)
	}
	var got []string
	var seqs []uint64
	err = receipts.Walk(ctx, f.receiptDir, func(r receipts.Record) error {
		if r.Err != nil {
			return r.Err
		}
		b := r.Line.Decoded
		for i, id := range v.ActionIDs {
			if b.ActionID == id {
				got = append(got, string(b.Type)+":"+strconv.Itoa(i))
				seqs = append(seqs, b.Seq)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "decision:0 decision:1 decision:2 outcome:0 outcome:1 outcome:2"; strings.Join(got, " ") != want {
		t.Fatalf("receipts %s, want %s", strings.Join(got, " "), want)
	}
	for i := range seqs {
		if seqs[i] != seqs[0]+uint64(i) {
			t.Fatalf("seqs %v are not consecutive", seqs)
		}
	}
	rep, err := audit.Verify(ctx, f.receiptDir, audit.Options{Keys: []crypto.PublicKey{g.Log.Signer().PublicKey()}})
	if err != nil || !rep.Verified {
		t.Fatalf("the log does not verify: %v %+v", err, rep)
	}
}

// The decision runs where Runner.Go starts it, and the deadline holds
// whatever Go does with it: a decision never started blocks the call.
func TestRunnerGo(t *testing.T) {
	f := newFixture(t)
	input := f.expand([]byte(`{"tool_name":"Read","cwd":"$WS","tool_input":{"file_path":"notes.txt"}}`))
	started := 0
	code, out, _ := f.run(t, ClaudeCode, input, func(r *Runner) {
		r.Go = func(fn func()) { started++; go fn() }
	})
	if code != ExitAnswered || started != 1 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("exit %d, %d decisions started through Go, answer %q; want one, allowed", code, started, out)
	}
	code, out, errb := f.run(t, ClaudeCode, input, func(r *Runner) {
		r.Deadline = 200 * time.Millisecond
		r.Go = func(func()) {} // never runs it
	})
	if code != ExitBlock || out != "" || !strings.Contains(errb, "no decision within 200ms") {
		t.Fatalf("a decision never started: exit %d, stdout %q, stderr %q; want a block for the deadline", code, out, errb)
	}
}

// TestLateCallIsRecorded: a call whose decision time runs out is blocked
// within the deadline, and the reserve at the end of the deadline records
// the block (rule hook.deadline), where before the agent was blocked and
// the log said nothing.
func TestLateCallIsRecorded(t *testing.T) {
	f := newFixture(t)
	code, stdout, stderr := f.run(t, ClaudeCode, f.expand([]byte(`{"session_id":"s-late","tool_name":"Read","tool_input":{"file_path":"$WS/notes.txt"}}`)), func(r *Runner) {
		r.Deadline = 3 * time.Second
		r.fault = func(ctx context.Context, stage string) error {
			if stage == "decide" {
				<-ctx.Done() // the decision's time is up
			}
			return nil
		}
	})
	if code != ExitBlock || stdout != "" || !strings.Contains(stderr, "no decision within 3s") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	log := f.receiptText(t)
	if !strings.Contains(log, ReasonDeadline) || !strings.Contains(log, "s-late") {
		t.Fatalf("no %s receipt for the late call:\n%s", ReasonDeadline, log)
	}
}

// TestRefusedClaimRecordsBlock: a decision whose answer the runner has
// already given as a block (its claim refused) records the block, not
// the allow nobody will see.
func TestRefusedClaimRecordsBlock(t *testing.T) {
	f := newFixture(t)
	g, ev := f.openWith(t, `{"session_id":"s-claim","tool_name":"Read","tool_input":{"file_path":"$WS/notes.txt"}}`)
	ctx := context.Background()
	if _, err := g.DecideWithin(ctx, ctx, ClaudeCode, ev, func() bool { return false }); err == nil {
		t.Fatal("a refused claim gave a verdict")
	}
	log := f.receiptText(t)
	if !strings.Contains(log, "blocked: no decision within the deadline") || strings.Contains(log, OutcomeDelegated) {
		t.Fatalf("the receipts do not say blocked:\n%s", log)
	}
	// The same decision with its claim granted is the allow it was.
	if v, err := g.DecideWithin(ctx, ctx, ClaudeCode, ev, func() bool { return true }); err != nil || v.Answer != gate.Allow {
		t.Fatalf("verdict %+v, %v", v, err)
	}
}
