package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/hook"
)

// spoolFor makes a run's spool in a temporary directory.
func spoolFor(t *testing.T, r *Run) string {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	spool, err := r.makeSpool()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(spool) })
	return spool
}

// The relay hands the event to the spool's server and gives back its
// answer; an answer the hook could not have given blocks the call.
func TestRelay(t *testing.T) {
	spool := spoolFor(t, &Run{Exe: "/bin/true"})
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok"}}` + "\n"
	var got []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(ctx, spool, func(_ context.Context, ev []byte) answer {
			got = append(got, string(ev))
			if strings.Contains(string(ev), "bad") {
				return answer{Exit: 0, Stdout: "let it run"}
			}
			return answer{Exit: 0, Stdout: allow}
		})
	}()
	a, err := relay([]string{spool}, strings.NewReader(`{"tool_name":"Read"}`))
	if err != nil || a.Exit != 0 || a.Stdout != allow {
		t.Errorf("relay: %+v %v", a, err)
	}
	a, err = relay([]string{spool}, strings.NewReader(`{"tool_name":"bad"}`))
	if err != nil || hook.CheckAnswer(hook.ClaudeCode, a.Exit, a.Stdout) == nil {
		t.Errorf("a malformed answer passes the check: %+v %v", a, err)
	}
	cancel()
	<-done
	if len(got) != 2 || got[0] != `{"tool_name":"Read"}` {
		t.Errorf("the server saw %q", got)
	}
	if _, err := relay([]string{"relative"}, strings.NewReader("{}")); err == nil {
		t.Error("a relative spool is accepted")
	}
	if ents, _ := os.ReadDir(filepath.Join(spool, reqDir)); len(ents) != 0 {
		t.Errorf("requests left in the spool: %v", ents)
	}
}

// A request that is a link is not followed: it is answered with a block.
func TestServeRefusesLinks(t *testing.T) {
	spool := spoolFor(t, &Run{Exe: "/bin/true"})
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte(`{"tool_name":"Read"}`), 0o600)
	if err := os.Symlink(secret, filepath.Join(spool, reqDir, "x.json")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var called atomic.Bool
	go serve(ctx, spool, func(context.Context, []byte) answer { called.Store(true); return answer{} })
	defer cancel()
	for i := 0; i < 500; i++ {
		if b, err := os.ReadFile(filepath.Join(spool, ansDir, "x.json")); err == nil {
			var a answer
			if json.Unmarshal(b, &a) != nil || a.Exit != hook.ExitBlock {
				t.Errorf("answer to a link: %s", b)
			}
			if called.Load() {
				t.Error("the link's target was decided")
			}
			return
		}
		exec.Command("sleep", "0.01").Run()
	}
	t.Fatal("no answer to the link")
}

// The settings run claw's hook for every tool, with the paths quoted for
// the shell, and a timeout above the relay's deadline.
func TestHookSettings(t *testing.T) {
	b, err := hookSettings("/opt/it's claw/claw", "/tmp/spool dir")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks struct {
			PreToolUse []struct {
				Matcher string
				Hooks   []struct {
					Type, Command string
					Timeout       int
				}
			}
		}
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Hooks.PreToolUse) != 1 || len(s.Hooks.PreToolUse[0].Hooks) != 1 {
		t.Fatalf("settings %s: %v", b, err)
	}
	m := s.Hooks.PreToolUse[0]
	h := m.Hooks[0]
	if m.Matcher != "*" || h.Type != "command" || h.Timeout <= int(relayDeadline.Seconds()) {
		t.Errorf("settings %s", b)
	}
	out, err := exec.Command("sh", "-c", "printf '%s|' "+strings.Replace(h.Command, HookEntry, "'"+HookEntry+"'", 1)).Output()
	if err != nil || string(out) != "/opt/it's claw/claw|"+HookEntry+"|/tmp/spool dir|" {
		t.Errorf("the shell splits the command into %q (%v)", out, err)
	}
}

// The sandbox of a run: no workspace write at readonly, the spool's
// requests writable, config values and named secrets set, a missing
// secret an error.
func TestSpec(t *testing.T) {
	ws := t.TempDir()
	r := &Run{Name: "x", Task: "the task", Workspace: ws, Autonomy: "readonly", Exe: "/bin/true",
		Config: config.External{Command: []string{"/bin/sh", "-c"}, SettingsFlag: "--settings", TurnsFlag: "--max-turns", MaxTurns: 3,
			Env: []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:1", "LANG"}, Secrets: []string{"X_TOKEN"}, Hosts: []string{"127.0.0.1:1"}},
		Sandbox: Sandbox{Protect: []string{filepath.Join(ws, ".claude")}},
		Getenv:  func(k string) string { return map[string]string{"X_TOKEN": "tok"}[k] }}
	s, err := r.spec("/spool")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/bin/sh", "-c", "--settings", "/spool/settings.json", "--max-turns", "3", "the task"}; !slices.Equal(s.Argv, want) {
		t.Errorf("argv %q, want %q", s.Argv, want)
	}
	if slices.Contains(s.Write, ws) || !slices.Equal(s.Write, []string{"/spool/req"}) || len(s.Protect) != 0 {
		t.Errorf("readonly writes %v (protect %v)", s.Write, s.Protect)
	}
	if !slices.Equal(s.Secrets, []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:1", "X_TOKEN=tok"}) || !slices.Contains(s.Env, "LANG") {
		t.Errorf("env %v secrets %v", s.Env, s.Secrets)
	}
	if s.Net.Egress == nil || s.Timeout != config.DefaultExternalTimeout || s.Cwd != ws {
		t.Errorf("spec %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	r.Autonomy = "supervised"
	if s, _ := r.spec("/spool"); !slices.Contains(s.Write, ws) || len(s.Protect) != 1 {
		t.Errorf("supervised writes %v (protect %v)", s.Write, s.Protect)
	}
	r.Getenv = func(string) string { return "" }
	if _, err := r.spec("/spool"); err == nil || !strings.Contains(err.Error(), "X_TOKEN of external agent x is not set") {
		t.Errorf("a missing secret: %v", err)
	}
}

// The answer of a Claude Code JSON result, or the output itself, clipped;
// the status follows the exit and the agent's own error flag.
func TestFill(t *testing.T) {
	r := &Run{Config: config.External{MaxOutput: 16}}
	red := func(s string) string { return strings.ReplaceAll(s, "sk-1", "[REDACTED]") }
	for _, c := range []struct {
		name      string
		out       executor.Result
		status    string
		result    string
		truncated bool
	}{
		{"json", executor.Result{Stdout: []byte(`{"type":"result","result":"done sk-1","num_turns":2}`)}, "ok", "done [REDACTED]", false},
		{"agent error", executor.Result{Stdout: []byte(`{"type":"result","is_error":true,"result":"no"}`)}, "failed", "no", false},
		{"not json", executor.Result{Stdout: []byte("plain words that go on and on"), ExitCode: 3}, "failed", "plain words that", true},
		{"timeout", executor.Result{TimedOut: true, Signal: "killed"}, "timeout", "", false},
	} {
		res := &Result{}
		r.fill(res, &c.out, red)
		if res.Status != c.status || res.Result != c.result || res.Truncated != c.truncated {
			t.Errorf("%s: %+v", c.name, res)
		}
	}
}

// FuzzFill: whatever an agent prints, the answer kept is at most
// max_output bytes, valid UTF-8 when the output is, and the status is one
// of the four.
func FuzzFill(f *testing.F) {
	f.Add([]byte(`{"type":"result","result":"ok","num_turns":1}`), 0)
	f.Add([]byte("héllo wörld, a long answer"), 1)
	f.Add([]byte(`{"type":"result","result":"`+strings.Repeat("é", 20)+`"}`), 0)
	f.Fuzz(func(t *testing.T, out []byte, exit int) {
		r := &Run{Config: config.External{MaxOutput: 8}}
		res := &Result{}
		r.fill(res, &executor.Result{Stdout: out, ExitCode: exit}, hiding(nil, nil, nil))
		if len(res.Result) > 8 {
			t.Fatalf("kept %d bytes", len(res.Result))
		}
		if utf8.Valid(bytes.TrimSpace(out)) && !utf8.ValidString(res.Result) {
			t.Fatalf("cut inside a rune: %q", res.Result)
		}
		if !slices.Contains([]string{"ok", "failed", "timeout", "killed"}, res.Status) {
			t.Fatalf("status %q", res.Status)
		}
	})
}

// The spool's server is woken by a request moved into the directory it
// watches, not only by its clock.
func TestWatchDir(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	arrived := watchDir(ctx, dir)
	select {
	case <-arrived:
		t.Fatal("woken before anything arrived")
	case <-time.After(50 * time.Millisecond):
	}
	tmp := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(tmp, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "r.json")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("a file moved into the directory woke nobody")
	}
}

// A spool whose claw is gone (killed before it could clean up) is
// removed when the next run makes its own; one of a running claw, of
// another PID namespace, a file, or a name of another form is left alone.
func TestSweepSpools(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	gone := exec.Command("/bin/true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	ns := pidNamespace()
	if ns == 0 {
		t.Fatal("no PID namespace inode")
	}
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, reqDir), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(fmt.Sprintf("claw-delegate-%d.%d-123", ns, gone.Process.Pid))
	live := mk(fmt.Sprintf("claw-delegate-%d.%d-456", ns, os.Getpid()))
	otherNS := mk(fmt.Sprintf("claw-delegate-%d.%d-123", ns+1, gone.Process.Pid))
	old := mk(fmt.Sprintf("claw-delegate-%d-123", gone.Process.Pid))
	other := mk("claw-delegate-x-1")
	file := filepath.Join(dir, fmt.Sprintf("claw-delegate-%d.%d-789", ns, gone.Process.Pid))
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	spool, err := (&Run{Exe: "/bin/true"}).makeSpool()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the spool of a claw that is gone is still there: %v", err)
	}
	for _, p := range []string{live, otherNS, old, other, file, spool} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	if want := fmt.Sprintf("claw-delegate-%d.%d-", ns, os.Getpid()); !strings.HasPrefix(filepath.Base(spool), want) {
		t.Errorf("the spool %s does not start with %s", spool, want)
	}
}
