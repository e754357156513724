package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawsec/claw/receipts"
)

// The parent's model writes a file, then delegates the same kind of write
// to a readonly sub-agent on another provider.
const delegateParentScript = `turns:
  - step: 1
    tool_calls: [{name: file_write, arguments: {path: parent.txt, content: parent}}]
  - step: 2
    tool_calls: [{name: delegate, arguments: {task: "sub-task: write child.txt", autonomy: readonly, provider: sub}}]
  - step: 3
    reply: "Delegated: {{tool_result}}"
`

const delegateChildScript = `turns:
  - step: 1
    tool_calls: [{name: file_write, arguments: {path: child.txt, content: child}}]
  - step: 2
    reply: "Sub-agent: {{tool_result}}"
`

// A delegated sub-agent with a narrower autonomy is denied an action its
// parent could take: at full autonomy the parent's write runs, the
// readonly sub-agent's is denied. The sub-agent's receipts name the
// delegate action, and the log verifies.
func TestAgentDelegateNarrowerAutonomy(t *testing.T) {
	requireSandboxForTest(t)
	dir := t.TempDir()
	parent, child := filepath.Join(dir, "parent.yaml"), filepath.Join(dir, "child.yaml")
	for p, s := range map[string]string{parent: delegateParentScript, child: delegateChildScript} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	home := agentHome(t, `default_provider = "fixture"
[providers.fixture]
kind = "mock"
script = "`+parent+`"
[providers.sub]
kind = "mock"
script = "`+child+`"
`)
	out, errs, code := operatorRun(t, home, "agent", "--autonomy", "full", "-m", "write both files")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if !strings.Contains(out, `"provider":"sub"`) || !strings.Contains(out, "autonomy.readonly") {
		t.Errorf("the reply does not tell the sub-agent's denial:\n%s", out)
	}

	var delegateID string
	decisions := map[string]receipts.Body{}
	bodies := receiptBodies(t, filepath.Join(home, "receipts"))
	for _, b := range bodies {
		if b.Type == receipts.TypeDecision {
			decisions[b.Action.Summary] = b
			if b.Action.Tool == "delegate" {
				delegateID = b.ActionID
			}
		}
	}
	p, c := decisions["file_write parent.txt"], decisions["file_write child.txt"]
	if p.Decision == nil || p.Decision.Result != "allow" || p.ParentAction != "" {
		t.Errorf("the parent's write: %+v", p)
	}
	if c.Decision == nil || c.Decision.Result != "deny" || c.Decision.Autonomy != "readonly" ||
		!slices.Contains(c.Decision.Reasons, "autonomy.readonly") {
		t.Errorf("the sub-agent's write: %+v", c.Decision)
	}
	if delegateID == "" {
		t.Fatal("no delegate action")
	}
	for _, b := range bodies {
		if b.ActionID == p.ActionID && b.Outcome != nil && b.Outcome.Status != "ok" {
			t.Errorf("the parent's write did not run: %+v", b.Outcome)
		}
		if b.ActionID == c.ActionID && (b.ParentAction != delegateID || b.V != receipts.Version) {
			t.Errorf("the sub-agent's %s receipt: parent %q, want %q (v%d)", b.Type, b.ParentAction, delegateID, b.V)
		}
	}
	if out, errOut, code := operatorRun(t, home, "audit", "verify"); code != 0 || !strings.Contains(out, "VERIFIED") {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}
