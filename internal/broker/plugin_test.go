package broker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
)

// pluginRig installs a one-tool plugin whose program is script, with the
// reach given, behind a resolver that reports status.
func pluginRig(t *testing.T, script string, pc PluginCall) *rig {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	dir, _ = filepath.EvalSymlinks(dir)
	prog := filepath.Join(dir, "run")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	pc.Dir, pc.Argv = dir, []string{prog}
	if pc.Info.Status == "" {
		pc.Info.Status = "ok"
	}
	return newRigWith(t, "supervised", nil, func(c *Config) {
		c.Plugins = func(string, string, map[string]any) PluginCall { return pc }
	})
}

func pluginAction(args map[string]any) gate.Action {
	return gate.Action{Tool: "plugin", Args: map[string]any{"plugin": "p", "tool": "t", "args": args}}
}

func TestPluginRuns(t *testing.T) {
	requireSandbox(t)
	r := pluginRig(t, "exec cat\n", PluginCall{})
	out, err := r.b.Invoke(context.Background(), pluginAction(map[string]any{"msg": "hi"}), "")
	if err != nil || out.Status != StatusOK {
		t.Fatalf("status %s, err %v, decision %+v", out.Status, err, out.Decision)
	}
	if got := string(out.Result.Tool.Payload); got != `{"msg":"hi"}` {
		t.Fatalf("payload %s", got)
	}
	if out.Decision.Risk != "low" || out.Result.Sandbox.LandlockABI == 0 || !out.Result.Sandbox.Seccomp {
		t.Fatalf("risk %s, sandbox %+v", out.Decision.Risk, out.Result.Sandbox)
	}
	if got := types(r.bodies(t, out.ActionID)); got != "decision outcome:ok" {
		t.Fatalf("receipts %s", got)
	}
}

// TestPluginReach: the sandbox grants the declared reach and nothing else
// of the workspace, even though the decision's plan covers all of it.
func TestPluginReach(t *testing.T) {
	requireSandbox(t)
	r := pluginRig(t, `cat "$1" 2>/dev/null; p=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p')
if c=$(cat "$p" 2>&1); then printf '{"read":"%s"}' "$c"; else echo "$c" >&2; exit 1; fi
`, PluginCall{Read: []string{"shared"}})
	for name, content := range map[string]string{"shared/ok": "fine", "secret": "PLANTED"} {
		p := filepath.Join(r.ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := r.b.Invoke(context.Background(), pluginAction(map[string]any{"path": filepath.Join(r.ws, "shared/ok")}), "")
	if out.Status != StatusOK || string(out.Result.Tool.Payload) != `{"read":"fine"}` {
		t.Fatalf("declared read: %s %+v", out.Status, out.Result.Tool)
	}
	out, _ = r.b.Invoke(context.Background(), pluginAction(map[string]any{"path": filepath.Join(r.ws, "secret")}), "")
	if out.Status != StatusFailed || !strings.Contains(out.Result.Tool.Error, "Permission denied") || strings.Contains(string(out.Result.Stdout), "PLANTED") {
		t.Fatalf("undeclared read: %s %+v %q", out.Status, out.Result.Tool, out.Result.Stdout)
	}
}

func TestPluginBounds(t *testing.T) {
	requireSandbox(t)
	for _, tc := range []struct {
		name, script, status, want string
		timeout                    time.Duration
	}{
		{"not JSON", "echo hello\n", StatusFailed, "not JSON", 0},
		{"too large", "head -c 2000000 /dev/zero\n", StatusFailed, "larger than", 0},
		{"exit", "echo broke >&2; exit 3\n", StatusFailed, "plugin exited 3: broke", 0},
		{"timeout", "sleep 30\n", StatusTimeout, "", 300 * time.Millisecond},
	} {
		r := pluginRig(t, tc.script, PluginCall{Timeout: tc.timeout})
		out, _ := r.b.Invoke(context.Background(), pluginAction(nil), "")
		if out.Status != tc.status || (tc.want != "" && !strings.Contains(out.Result.Tool.Error, tc.want)) {
			t.Errorf("%s: status %s, result %+v", tc.name, out.Status, out.Result.Tool)
		}
	}
}

// TestPluginRefused: a changed plugin is denied by rule and never runs,
// nor does one that changed after the gate decided.
func TestPluginRefused(t *testing.T) {
	requireSandbox(t)
	r := pluginRig(t, "exec cat\n", PluginCall{Info: gate.PluginInfo{Status: "changed", Detail: "plugin p changed (run)"}})
	out, _ := r.b.Invoke(context.Background(), pluginAction(nil), "")
	if out.Status != StatusDenied || out.Result != nil || !strings.Contains(strings.Join(out.Decision.RuleIDs(), ","), "plugin.changed") {
		t.Fatalf("changed plugin: %s %v", out.Status, out.Decision.RuleIDs())
	}
	if got := types(r.bodies(t, out.ActionID)); got != "decision outcome:denied" {
		t.Fatalf("receipts %s", got)
	}
	// changed between the decision (and its approval) and the run
	r = pluginRig(t, "exec cat\n", PluginCall{Digest: "sha256:a"})
	calls := 0
	check := r.b.cfg.Plugins
	r.b.cfg.Plugins = func(p, tl string, args map[string]any) PluginCall {
		pc := check(p, tl, args)
		if calls++; calls > 1 {
			pc.Digest = "sha256:b"
		}
		return pc
	}
	out, _ = r.b.Invoke(context.Background(), pluginAction(nil), "")
	if out.Status != StatusError || out.Result != nil || out.Err == nil || !strings.Contains(out.Err.Error(), "changed after the gate decided") {
		t.Fatalf("plugin changed before the run: %s %v", out.Status, out.Err)
	}
}

// TestPluginEgress: a plugin reaches the hosts it declares that
// allowed_domains and allow_private_cidrs open, through the egress proxy,
// and the outcome receipt records the connection; a declared host off
// allowed_domains is denied by the gate and nothing runs.
func TestPluginEgress(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	host := "localhost:" + port
	rig := func(hosts ...string) *rig {
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		dir, _ = filepath.EvalSymlinks(dir)
		prog := filepath.Join(dir, "run")
		script := "#!/bin/sh\nb=$(curl -sS http://" + host + "/x) || exit 1\nprintf '{\"body\":\"%s\"}' \"$b\"\n"
		if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		pc := PluginCall{Info: gate.PluginInfo{Status: "ok"}, Dir: dir, Argv: []string{prog}, Hosts: hosts}
		// full: a plugin's traffic counts as sending data, which
		// supervised asks about (testdata/script/plugin_echo.txtar)
		return newRigWith(t, "full", func(p *gate.Policy) {
			p.AllowedDomains, p.AllowPrivateCIDRs = []string{"localhost"}, []string{"127.0.0.0/8"}
		}, func(c *Config) {
			c.Plugins = func(string, string, map[string]any) PluginCall { return pc }
		})
	}
	r := rig(host)
	out, _ := r.b.Invoke(context.Background(), pluginAction(nil), "")
	if out.Status != StatusOK || string(out.Result.Tool.Payload) != `{"body":"served"}` {
		t.Fatalf("declared host: %s %v %+v %q", out.Status, out.Decision.RuleIDs(), out.Result.Tool, out.Result.Stderr)
	}
	if got := strings.Join(out.Decision.Sandbox.Network.Hosts, ","); got != host {
		t.Fatalf("planned hosts %s", got)
	}
	bodies := r.bodies(t, out.ActionID)
	if got := types(bodies); got != "decision outcome:ok" {
		t.Fatalf("receipts %s", got)
	}
	if e := bodies[1].Outcome.Egress; e == nil || len(e.Conns) != 1 || e.Conns[0].Host != "localhost" || e.Conns[0].IP != "127.0.0.1" || !e.Conns[0].Admitted {
		t.Fatalf("egress receipt %+v", e)
	}
	// declared but not allowlisted: denied by the gate
	r = rig(host, "evil.example:443")
	out, _ = r.b.Invoke(context.Background(), pluginAction(nil), "")
	if out.Status != StatusDenied || out.Result != nil || !strings.Contains(strings.Join(out.Decision.RuleIDs(), ","), "net.domain_not_allowed") {
		t.Fatalf("host off allowed_domains: %s %v", out.Status, out.Decision.RuleIDs())
	}
	// not declared: the plan has no hosts and the plugin has no network
	r = rig()
	out, _ = r.b.Invoke(context.Background(), pluginAction(nil), "")
	if out.Status != StatusFailed || len(out.Decision.Sandbox.Network.Hosts) != 0 {
		t.Fatalf("undeclared host: %s %+v", out.Status, out.Result)
	}
}

// TestPluginWrites: a declared write in the workspace is low (the sandbox
// holds the plugin to it: it runs without asking) and writable; the rest of the workspace stays read-only to the plugin even
// though a write plan covers the whole workspace.
func TestPluginWrites(t *testing.T) {
	requireSandbox(t)
	r := pluginRig(t, `p=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p')
if err=$(echo made 2>&1 > "$p"); then echo '{"ok":true}'; else echo "$err" >&2; exit 1; fi
`, PluginCall{Write: []string{"out"}})
	approver := &fixedApprover{answer: Answer{Result: "approved", By: "test"}}
	r.b.cfg.Approver = approver
	if err := os.Mkdir(filepath.Join(r.ws, "out"), 0o777); err != nil {
		t.Fatal(err)
	}
	out, _ := r.b.Invoke(context.Background(), pluginAction(map[string]any{"path": filepath.Join(r.ws, "out", "f")}), "")
	if out.Status != StatusOK || out.Decision.Risk != "low" || len(approver.asked) != 0 {
		t.Fatalf("declared write: %s risk %s asked %d %+v", out.Status, out.Decision.Risk, len(approver.asked), out.Result.Tool)
	}
	if b, err := os.ReadFile(filepath.Join(r.ws, "out", "f")); err != nil || string(b) != "made\n" {
		t.Fatalf("the declared write did not happen: %q %v", b, err)
	}
	out, _ = r.b.Invoke(context.Background(), pluginAction(map[string]any{"path": filepath.Join(r.ws, "elsewhere")}), "")
	if out.Status != StatusFailed || !strings.Contains(out.Result.Tool.Error, "ermission denied") && !strings.Contains(out.Result.Tool.Error, "Read-only") {
		t.Fatalf("undeclared write: %s %+v", out.Status, out.Result.Tool)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "elsewhere")); err == nil {
		t.Fatal("the plugin wrote outside its declared reach")
	}
}
