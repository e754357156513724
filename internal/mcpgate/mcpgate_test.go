package mcpgate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/broker/brokertest"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// TestMain lets this test binary act as the sandboxed child, as claw does.
func TestMain(m *testing.M) {
	if code, ok := executor.EnterChild(os.Args); ok {
		os.Exit(code)
	}
	executor.AllowSelfExec()
	code := m.Run()
	if clawBin != "" {
		os.RemoveAll(filepath.Dir(clawBin)) // built by the e2e tests
	}
	os.Exit(code)
}

func requireSandbox(t *testing.T) {
	t.Helper()
	if err := executor.Check().Require(0); err != nil {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			t.Fatalf("CLAW_REQUIRE_SANDBOX is set: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
}

// rig is a real gate, a real receipt log and a broker.
type rig struct {
	cfg  broker.Config
	dir  string // receipts
	ws   string
	root string
}

func newRig(t testing.TB, autonomy string) *rig {
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
	eng, err := gate.New(context.Background(), gate.Options{
		Home: home,
		Policy: gate.Policy{
			WorkspaceOnly:     true,
			ForbiddenPaths:    []string{"/etc", home + "/.ssh"},
			ReadPaths:         []string{"/usr", "/bin", "/lib", "/lib64", "/sbin"},
			ForbiddenCommands: []string{"rm"},
			AllowedCommands:   []string{"ls", "cat", "echo"},
			PassphraseFor:     []string{"high"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "receipts")
	log := brokertest.NewLog(t, dir)
	return &rig{
		cfg: broker.Config{Gate: eng, Log: log, Autonomy: autonomy, Workspace: ws, Home: home, Channel: "mcp",
			EstopFile: filepath.Join(root, "ESTOP"), InProcess: map[toolkind.Kind]broker.ToolFunc{"time": TimeTool}},
		dir: dir, ws: ws, root: root,
	}
}

// receiptTypes returns, per action id, the receipt types in order.
func (r *rig) receiptTypes(t testing.TB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := receipts.Walk(context.Background(), r.dir, func(rec receipts.Record) error {
		if rec.Err != nil {
			return rec.Err
		}
		b := rec.Line.Decoded
		if b.ActionID != "" {
			out[b.ActionID] = append(out[b.ActionID], string(b.Type))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// connect runs s on an in-memory transport and returns a client session.
func connect(t testing.TB, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v (want a tool result)", name, err)
	}
	return res
}

func TestServeListsToolsWithSchemas(t *testing.T) {
	r := newRig(t, "supervised")
	cs := connect(t, NewServer(broker.New(r.cfg), Options{}))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	for _, name := range ToolNames() {
		tl, ok := got[name]
		if !ok {
			t.Fatalf("tool %s not listed", name)
		}
		schema, _ := json.Marshal(tl.InputSchema)
		if !strings.Contains(string(schema), `"type":"object"`) {
			t.Errorf("%s: schema %s", name, schema)
		}
		spec := gate.Kinds[toolkind.Kind(name)]
		for _, req := range spec.Required {
			if !strings.Contains(string(schema), `"`+req+`"`) {
				t.Errorf("%s: schema lacks %s: %s", name, req, schema)
			}
		}
	}
}

func TestServeCalls(t *testing.T) {
	r := newRig(t, "supervised")
	cs := connect(t, NewServer(broker.New(r.cfg), Options{}))
	tests := []struct {
		name      string
		tool      string
		args      any
		wantError bool
		wantText  []string
	}{
		{name: "allowed in-process", tool: "time", args: map[string]any{}, wantText: []string{`"utc"`}},
		{name: "denied forbidden path", tool: "file_read", args: map[string]any{"path": "/etc/shadow"}, wantError: true,
			wantText: []string{"denied by policy", "- "}},
		{name: "denied forbidden command", tool: "shell", args: map[string]any{"command": "rm -rf /"}, wantError: true,
			wantText: []string{"denied by policy"}},
		{name: "ask without approver", tool: "shell", args: map[string]any{"command": "rm -rf build"}, wantError: true,
			wantText: []string{"needs approval", "cmd.rm.workspace"}},
		{name: "unknown argument denied", tool: "file_read", args: map[string]any{"path": "a", "mode": "x"}, wantError: true,
			wantText: []string{"denied by policy"}},
		{name: "missing argument denied", tool: "shell", args: map[string]any{}, wantError: true,
			wantText: []string{"denied by policy"}},
		{name: "unknown tool denied", tool: "launch_missiles", args: map[string]any{"target": "x"}, wantError: true,
			wantText: []string{"denied by policy", "tool.unknown"}},
		{name: "overlong tool name denied", tool: strings.Repeat("x", 300), args: map[string]any{}, wantError: true,
			wantText: []string{"denied by policy", "tool.unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, tt.tool, tt.args)
			if res.IsError != tt.wantError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tt.wantError, text(res))
			}
			for _, w := range tt.wantText {
				if !strings.Contains(text(res), w) {
					t.Errorf("result %q lacks %q", text(res), w)
				}
			}
		})
	}
	// Every call left a decision and an outcome receipt.
	types := r.receiptTypes(t)
	if len(types) != len(tests) {
		t.Fatalf("%d actions in the receipts, want %d", len(types), len(tests))
	}
	for id, ts := range types {
		if ts[0] != "decision" || ts[len(ts)-1] != "outcome" {
			t.Errorf("%s: receipts %v", id, ts)
		}
	}
}

func TestServeShellInSandbox(t *testing.T) {
	requireSandbox(t)
	r := newRig(t, "full")
	if err := os.WriteFile(filepath.Join(r.ws, "hello.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, NewServer(broker.New(r.cfg), Options{}))
	res := call(t, cs, "shell", map[string]any{"command": "ls"})
	if res.IsError || !strings.Contains(text(res), "hello.txt") {
		t.Fatalf("isError %v: %s", res.IsError, text(res))
	}
	res = call(t, cs, "file_read", map[string]any{"path": "hello.txt"})
	if res.IsError || !strings.Contains(text(res), "hello from the workspace") {
		t.Fatalf("file_read: isError %v: %s", res.IsError, text(res))
	}
}

func TestServeApprover(t *testing.T) {
	r := newRig(t, "supervised")
	for _, tt := range []struct {
		answer    string
		wantError bool
		want      string
	}{
		{answer: "rejected", wantError: true, want: "rejected by alice"},
		{answer: "timeout", wantError: true, want: "approval timed out"},
	} {
		cfg := r.cfg
		cfg.Approver = fixed(tt.answer)
		cs := connect(t, NewServer(broker.New(cfg), Options{}))
		res := call(t, cs, "shell", map[string]any{"command": "rm -rf gone; echo x > a.txt"})
		if res.IsError != tt.wantError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s: isError %v %q, want %q", tt.answer, res.IsError, text(res), tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(r.ws, "a.txt")); err == nil {
		t.Fatal("the file was written without approval")
	}
}

type fixed string

func (f fixed) Approve(context.Context, broker.Request) (broker.Answer, error) {
	return broker.Answer{Result: string(f), By: "alice"}, nil
}
