package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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

// delegateExternalParent writes a file, then delegates to the external
// agent fake, at readonly, a task of two tool calls: a write and a read.
const delegateExternalParent = `turns:
  - step: 1
    tool_calls: [{name: file_write, arguments: {path: parent.txt, content: parent}}]
  - step: 2
    tool_calls: [{name: delegate, arguments: {agent: fake, autonomy: readonly, task: '[{"tool":"Write","input":{"file_path":"child.txt","content":"child"}},{"tool":"Read","input":{"file_path":"parent.txt"}}]'}}]
  - step: 3
    reply: "Delegated: {{tool_result}}"
`

// A delegated external agent with a narrower autonomy is denied an
// action its parent could take: at full autonomy the parent's write
// runs; the readonly external agent's write is denied by claw's hook
// (and the file is not written), its read is allowed. Every receipt of
// its tool calls names the delegate action, and the log verifies.
func TestAgentDelegateExternal(t *testing.T) {
	requireSandboxForTest(t)
	bin := fakeAgent(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "parent.yaml")
	if err := os.WriteFile(script, []byte(delegateExternalParent), 0o600); err != nil {
		t.Fatal(err)
	}
	home := agentHome(t, `default_provider = "fixture"
[providers.fixture]
kind = "mock"
script = "`+script+`"
[delegate.external.fake]
command = ["`+bin+`"]
settings_flag = "--settings"
turns_flag = "--max-turns"
max_turns = 5
timeout = "2m"
`)
	out, errs, code := operatorRun(t, home, "agent", "--autonomy", "full", "-m", "write, then delegate")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{`"agent":"fake"`, `"autonomy":"readonly"`, "Write: deny", "autonomy.readonly", `Read: allowed, read \"parent\"`, `{"tool":"Write","answer":"deny"}`} {
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
	if n != 4 {
		t.Errorf("%d receipts of the external agent's calls, want 4 (two decisions, two outcomes)", n)
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
