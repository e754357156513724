package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/termtest"
	"github.com/clawsec/claw/receipts"
)

// fakeAgent builds the stand-in for Claude Code that speaks its hook
// protocol (internal/delegate/testdata/fakeagent).
func fakeAgent(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fakeagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../../internal/delegate/testdata/fakeagent").CombinedOutput(); err != nil {
		t.Fatalf("building the fake agent: %v\n%s", err, out)
	}
	return bin
}

// delegateHome is a claw home whose default provider runs the mock
// script parent and whose provider "sub" runs child (when not empty),
// with more config after them.
func delegateHome(t *testing.T, parent, child, more string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "default_provider = \"fixture\"\n"
	for _, p := range []struct{ name, script string }{{"fixture", parent}, {"sub", child}} {
		if p.script == "" {
			continue
		}
		path := filepath.Join(dir, p.name+".yaml")
		if err := os.WriteFile(path, []byte(p.script), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += "[providers." + p.name + "]\nkind = \"mock\"\nscript = \"" + path + "\"\n"
	}
	return agentHome(t, cfg+more)
}

// delegateExternalParent writes a file, then delegates to the external
// agent fake, at readonly, a task of two tool calls: a write and a read.
const delegateExternalParent = `turns:
  - step: 1
    tool_calls: [{name: file_write, arguments: {path: parent.txt, content: parent}}]
  - step: 2
    tool_calls: [{name: delegate, arguments: {agent: fake, autonomy: readonly, task: '[{"tool":"Write","input":{"file_path":"child.txt","content":"child"}},{"tool":"Read","input":{"file_path":"parent.txt"}},{"tool":"TodoWrite","input":{"todos":[]}},{"tool":"Bash","input":{"command":"echo $FAKE_AGENT_PAT"}}]'}}]
  - step: 3
    reply: "Delegated: {{tool_result}}"
`

// A delegated external agent with a narrower autonomy is denied an
// action its parent could take: at full autonomy the parent's write
// runs; the readonly external agent's write is denied by claw's hook
// (and the file is not written), its read is allowed, and so is the
// bookkeeping tool the config trusts; the secret it was handed is in no
// receipt and not in its answer. Every receipt of
// its tool calls names the delegate action, and the log verifies.
func TestAgentDelegateExternal(t *testing.T) {
	requireSandboxForTest(t)
	const token = "planted-agent-token-0123456789"
	t.Setenv("FAKE_AGENT_PAT", token)
	home := delegateHome(t, delegateExternalParent, "", `[delegate.external.fake]
command = ["`+fakeAgent(t)+`"]
settings_flag = "--settings"
turns_flag = "--max-turns"
max_turns = 5
timeout = "2m"
trust_tools = ["TodoWrite"]
secrets = ["FAKE_AGENT_PAT"]
`)
	out, errs, code := operatorRun(t, home, "agent", "--autonomy", "full", "-m", "write, then delegate")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{`"agent":"fake"`, `"autonomy":"readonly"`, "Write: deny", "autonomy.readonly", `Read: allowed, read \"parent\"`, `{"tool":"Write","answer":"deny"}`, `{"tool":"TodoWrite","answer":"allow"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("the reply lacks %s:\n%s", want, out)
		}
	}
	ws := workspaceOf(t, home)
	if _, err := os.Stat(filepath.Join(ws, "child.txt")); err == nil {
		t.Error("the external agent's denied write happened")
	}
	if b, err := os.ReadFile(filepath.Join(ws, "parent.txt")); err != nil || string(b) != "parent" {
		t.Errorf("the parent's write: %q %v", b, err)
	}

	var delegateID string
	bodies := receiptBodies(t, filepath.Join(home, "receipts"))
	for _, b := range bodies {
		if b.Type == receipts.TypeDecision && b.Action.Tool == "delegate" {
			delegateID = b.ActionID
		}
	}
	if delegateID == "" {
		t.Fatal("no delegate action")
	}
	hooked := map[string]receipts.Body{}
	n := 0
	for _, b := range bodies {
		if b.Channel != "claude-code" {
			continue
		}
		n++
		if b.ParentAction != delegateID {
			t.Errorf("the external agent's %s receipt names parent %q, want %q", b.Type, b.ParentAction, delegateID)
		}
		if b.Type == receipts.TypeDecision {
			hooked[b.Action.Tool] = b
		}
	}
	if n != 8 {
		t.Errorf("%d receipts of the external agent's calls, want 8 (four decisions, four outcomes)", n)
	}
	// the secret the agent was handed reached it, and is in no receipt
	// and not in its answer
	if !strings.Contains(out, `Bash: `) || strings.Contains(out, token) {
		t.Errorf("the agent's Bash call, or the secret in the answer:\n%s", out)
	}
	for _, b := range bodies {
		if j, _ := json.Marshal(b); strings.Contains(string(j), token) {
			t.Errorf("the secret is in a receipt: %s", j)
		}
	}
	w, r := hooked["file_write"], hooked["file_read"]
	if w.Decision == nil || w.Decision.Result != "deny" || w.Decision.Autonomy != "readonly" || !slices.Contains(w.Decision.Reasons, "autonomy.readonly") {
		t.Errorf("the external agent's write: %+v", w.Decision)
	}
	if r.Decision == nil || r.Decision.Result != "allow" {
		t.Errorf("the external agent's read: %+v", r.Decision)
	}
	if out, errOut, code := operatorRun(t, home, "audit", "verify"); code != 0 || !strings.Contains(out, "VERIFIED") {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}

// workspaceOf is the workspace of the claw home's config.
func workspaceOf(t *testing.T, home string) string {
	t.Helper()
	out, _, code := operatorRun(t, home, "config", "show", "-o", "json")
	if code != 0 {
		t.Fatalf("config show: exit %d", code)
	}
	var c struct {
		WorkspaceDir string `json:"workspace_dir"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("config show: %v\n%s", err, out)
	}
	return c.WorkspaceDir
}

// anthropicServer is a fake Anthropic Messages API: while the request
// offers the Bash tool and carries no tool result, it asks for a Bash
// call of command; then it answers "done". It streams when asked to, as
// Claude Code asks.
func anthropicServer(t *testing.T, command string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/messages") {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 16<<20)).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			io.WriteString(w, `{"input_tokens":10}`)
			return
		}
		bash := slices.ContainsFunc(req.Tools, func(x struct {
			Name string `json:"name"`
		}) bool {
			return x.Name == "Bash"
		})
		answered := len(req.Messages) > 0 && strings.Contains(string(req.Messages[len(req.Messages)-1].Content), `"tool_result"`)
		block := map[string]any{"type": "text", "text": "done"}
		delta := map[string]any{"type": "text_delta", "text": "done"}
		stop := "end_turn"
		if bash && !answered {
			input, _ := json.Marshal(map[string]string{"command": command, "description": "run it"})
			block = map[string]any{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
			stop = "tool_use"
		}
		msg := map[string]any{"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{}, "stop_reason": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}
		events := []map[string]any{
			{"type": "message_start", "message": msg},
			{"type": "content_block_start", "index": 0, "content_block": block},
			{"type": "content_block_delta", "index": 0, "delta": delta},
			{"type": "content_block_stop", "index": 0},
			{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]int{"output_tokens": 5}},
			{"type": "message_stop"},
		}
		if !req.Stream {
			t.Errorf("Claude Code asked without streaming")
			http.Error(w, "stream only", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			b, _ := json.Marshal(e)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e["type"], b)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The real Claude Code (the version testdata/claudecode pins, which make
// installs with npm), run by a delegate call at readonly against a fake
// Anthropic API: claw's hook is called for its Bash call and denies it,
// the command does not run, the receipt names the delegate action, and
// the API key is in no receipt.
func TestAgentDelegateClaudeCode(t *testing.T) {
	requireSandboxForTest(t)
	claude := claudeCode(t)
	const key = "sk-ant-PLANTED-test-key-0123456789"
	t.Setenv("ANTHROPIC_API_KEY", key)
	srv := anthropicServer(t, "touch pwned.txt")
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	home := delegateHome(t, `turns:
  - step: 1
    tool_calls: [{name: delegate, arguments: {agent: claude, autonomy: readonly, task: "create pwned.txt"}}]
  - step: 2
    reply: "Delegated: {{tool_result}}"
`, "", `[security]
allow_private_cidrs = ["127.0.0.1/32"]
[delegate.external.claude]
command = ["`+claude+`", "-p", "--output-format", "json"]
settings_flag = "--settings"
turns_flag = "--max-turns"
max_turns = 3
timeout = "3m"
hosts = ["`+hostPort+`"]
env = ["ANTHROPIC_BASE_URL=`+srv.URL+`", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1"]
secrets = ["ANTHROPIC_API_KEY"]
`)
	out, errs, code := operatorRun(t, home, "agent", "--autonomy", "full", "-m", "delegate to claude")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(out, `{"tool":"Bash","answer":"deny"}`) || !strings.Contains(out, `"result":"done"`) {
		t.Errorf("the reply does not tell claw's denial and Claude Code's answer:\n%s%s", out, errs)
	}
	if _, err := os.Stat(filepath.Join(workspaceOf(t, home), "pwned.txt")); err == nil {
		t.Error("the denied command ran")
	}
	var delegateID string
	var bash *receipts.Body
	bodies := receiptBodies(t, filepath.Join(home, "receipts"))
	for i, b := range bodies {
		switch {
		case b.Type == receipts.TypeDecision && b.Action.Tool == "delegate":
			delegateID = b.ActionID
		case b.Type == receipts.TypeDecision && b.Channel == "claude-code":
			bash = &bodies[i]
		}
	}
	if bash == nil || bash.Decision.Result != "deny" || bash.ParentAction == "" || bash.ParentAction != delegateID {
		t.Errorf("Claude Code's Bash call: %+v (delegate %s)", bash, delegateID)
	}
	for _, b := range bodies {
		if j, _ := json.Marshal(b); strings.Contains(string(j), key) {
			t.Errorf("the API key is in a receipt: %s", j)
		}
	}
	if out, errOut, code := operatorRun(t, home, "audit", "verify"); code != 0 || !strings.Contains(out, "VERIFIED") {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}

// Risk follows the external agent's reach: the hosts its config lets it
// reach are the delegate call's destinations, so one off allowed_domains
// is denied even at full autonomy, and the agent never starts; at
// supervised, an allowed one asks (the task goes to it).
func TestAgentDelegateExternalHosts(t *testing.T) {
	requireSandboxForTest(t)
	parent := `turns:
  - step: 1
    tool_calls: [{name: delegate, arguments: {agent: fake, task: '[{"tool":"Bash","input":{"command":"touch ran"}}]'}}]
  - step: 2
    reply: "Delegated: {{tool_result}}"
`
	agent := `[delegate.external.fake]
command = ["` + fakeAgent(t) + `"]
settings_flag = "--settings"
hosts = ["agent.example.net:443"]
`
	home := delegateHome(t, parent, "", "[security]\nallowed_domains = [\"api.example.com\"]\n"+agent)
	out, errs, code := operatorRun(t, home, "agent", "--autonomy", "full", "-m", "delegate")
	if code != 0 || !strings.Contains(out+errs, "net.domain_not_allowed") {
		t.Errorf("a delegate call to an agent reaching a host off allowed_domains: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(workspaceOf(t, home), "ran")); err == nil {
		t.Error("the external agent ran")
	}

	home = delegateHome(t, parent, "", "[security]\nallowed_domains = [\"agent.example.net\"]\n"+agent)
	out, errs, _ = operatorRun(t, home, "gate", "test", "--autonomy", "supervised", "--action", `{"tool":"delegate","args":{"task":"fix it","agent":"fake"}}`)
	if !strings.Contains(out, "decision: ask") || !strings.Contains(out, "net.sends") {
		t.Errorf("a dry run of the delegate call at supervised:\n%s%s", out, errs)
	}
}

// The emergency stop reaches an external agent: engaged while its allowed
// command runs, it kills the agent's process tree, the delegate action's
// outcome is estop, and the agent's next tool call is denied by the hook
// (the agent is gone, so none is made).
func TestAgentDelegateExternalEstop(t *testing.T) {
	requireSandboxForTest(t)
	// The command is told apart from any other test's sleep on the
	// machine by its duration.
	sleep := fmt.Sprintf("sleep 119.%06d", time.Now().UnixNano()%1e6)
	home := delegateHome(t, `turns:
  - step: 1
    tool_calls: [{name: delegate, arguments: {agent: fake, task: '[{"tool":"Bash","input":{"command":"touch started; `+sleep+`"}},{"tool":"Write","input":{"file_path":"after.txt","content":"x"}}]'}}]
  - step: 2
    reply: "Delegated: {{tool_result}}"
`, "", `[delegate.external.fake]
command = ["`+fakeAgent(t)+`"]
settings_flag = "--settings"
`)
	ws := workspaceOf(t, home)
	var stdout, stderr termtest.LockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runClaw(&globals{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}, home, "agent", "--autonomy", "full", "-m", "delegate a long command")
	}()
	waitUntil(t, "the agent's command to start", func() bool {
		_, err := os.Stat(filepath.Join(ws, "started"))
		return err == nil
	})
	start := time.Now()
	if _, errOut, code := operatorRun(t, home, "estop", "--reason", "test"); code != 0 {
		t.Fatalf("estop: exit %d: %s", code, errOut)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the external agent was not stopped:\n%s%s", stdout.String(), stderr.String())
	}
	if took := time.Since(start); took > 100*time.Second {
		t.Errorf("stopping took %s: the command ran to its end", took)
	}
	if _, err := os.Stat(filepath.Join(ws, "after.txt")); err == nil {
		t.Error("the agent went on after the emergency stop")
	}
	// A killed process may take a moment to leave the process table.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if left = survivors(sleep); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("processes of the agent survived: %v", left)
	}
	estopped := false
	for _, b := range receiptBodies(t, filepath.Join(home, "receipts")) {
		if b.Type == receipts.TypeOutcome && b.Action == nil && b.Outcome != nil && b.Outcome.Status == "estop" {
			estopped = true
		}
	}
	if !estopped {
		t.Errorf("no outcome says the emergency stop stopped the delegate call:\n%s%s", stdout.String(), stderr.String())
	}
}

// survivors lists the processes whose command line contains marker.
func survivors(marker string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			found = append(found, e.Name())
		}
	}
	return found
}

// claudeCode is the pinned Claude Code's executable under
// testdata/claudecode (canonical: the sandbox grants the file itself).
// The test skips without it, unless CLAW_REQUIRE_NODE is set.
func claudeCode(t *testing.T) string {
	t.Helper()
	bin, err := filepath.EvalSymlinks(filepath.Join("..", "..", "testdata", "claudecode", "node_modules", ".bin", "claude"))
	if err != nil {
		if os.Getenv("CLAW_REQUIRE_NODE") != "" {
			t.Fatalf("CLAW_REQUIRE_NODE is set and Claude Code is not installed: run 'npm ci' in testdata/claudecode (make does): %v", err)
		}
		t.Skip("Claude Code is not installed in testdata/claudecode (make test installs it when npm is there)")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
