package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	home := delegateHome(t, delegateParentScript, delegateChildScript, "")
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

// The sub-agent's model calls may use at most [delegate] max_tokens:
// over it, the sub-run stops and the delegate result says so. With a
// budget of one token its first answer is over it, and none of its tool
// calls runs; with half again the tokens of that first answer, its first
// tool call runs and the second answer is over it.
func TestAgentDelegateTokenBudget(t *testing.T) {
	requireSandboxForTest(t)
	parent, child := `turns:
  - step: 1
    tool_calls: [{name: delegate, arguments: {task: "two writes", provider: sub}}]
  - step: 2
    reply: "Delegated: {{tool_result}}"
`, `turns:
  - step: 1
    tool_calls: [{name: file_write, arguments: {path: one.txt, content: one}}]
  - step: 2
    tool_calls: [{name: file_write, arguments: {path: two.txt, content: two}}]
  - step: 3
    reply: "both written"
`
	run := func(budget int) (reply string, written []string) {
		home := delegateHome(t, parent, child, "[delegate]\nmax_tokens = "+strconv.Itoa(budget)+"\n")
		out, errs, code := operatorRun(t, home, "agent", "--autonomy", "full", "-m", "delegate two writes")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		ws := workspaceOf(t, home)
		for _, f := range []string{"one.txt", "two.txt"} {
			if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
				written = append(written, f)
			}
		}
		return out, written
	}
	used := regexp.MustCompile(`token budget exhausted: (\d+) tokens used of (\d+)`)
	out, written := run(1)
	m := used.FindStringSubmatch(out)
	if m == nil || len(written) != 0 || !strings.Contains(out, `"stopped":"the sub-agent was stopped`) {
		t.Fatalf("a budget of 1 token: written %v, reply:\n%s", written, out)
	}
	first, _ := strconv.Atoi(m[1])
	out, written = run(first * 3 / 2)
	if m := used.FindStringSubmatch(out); m == nil || !slices.Equal(written, []string{"one.txt"}) || strings.Contains(out, "both written") {
		t.Fatalf("a budget of %d tokens (the first answer used %d): written %v, reply:\n%s", first*3/2, first, written, out)
	}
}
