package broker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
)

// loopRig is the whole path: the agent loop on a scripted model, the
// broker, a real gate, receipts, sandbox and memory.
func loopRig(t *testing.T, autonomy, script string, approver *fixedApprover) (*agent.Agent, *rig, *memory.Store) {
	t.Helper()
	r := newRig(t, autonomy, approver)
	sc, err := provider.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	st, err := memory.Open(filepath.Join(t.TempDir(), "memory.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := agent.New(agent.Config{Provider: provider.NewMock("scripted", sc), Memory: st, Invoker: r.b.Agent(), Tools: tool.All(), Channel: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return a, r, st
}

func TestAgentToolCalls(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name      string
		autonomy  string
		script    string
		approver  *fixedApprover
		status    string // of the single tool call
		reply     string // the model saw this in the tool result
		receipts  string // types of the call's receipts
		wantError bool
	}{
		{
			name:     "allowed list",
			autonomy: "supervised",
			script: `turns:
  - {step: 1, tool_calls: [{name: file_list, arguments: {path: "."}}]}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:   StatusOK,
			reply:    `got {"entries":[`,
			receipts: "decision outcome:ok",
		},
		{
			name:     "denied read goes back as a tool error",
			autonomy: "full",
			script: `turns:
  - {step: 1, tool_calls: [{name: file_read, arguments: {path: "/etc/shadow"}}]}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:    StatusDenied,
			reply:     "got error: denied by policy (path.forbidden",
			receipts:  "decision outcome:denied",
			wantError: true,
		},
		{
			name:     "malformed arguments: tool error and a receipt",
			autonomy: "full",
			script: `turns:
  - {step: 1, tool_calls: [{name: file_read, arguments: {path: 42, mode: "x"}}]}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:    "invalid",
			reply:     `got error: invalid arguments for file_read: unknown property "mode"; "path" must be a string, got a number`,
			receipts:  "decision outcome:denied",
			wantError: true,
		},
		{
			name:     "arguments that are not JSON, in a leaked call",
			autonomy: "full",
			script: `turns:
  - {step: 1, reply: "<tool_call>{\"name\": \"shell\", \"arguments\": \"ls -la\"}</tool_call>"}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:    "invalid",
			reply:     "got error: invalid arguments for shell: arguments are a string that is not a JSON object",
			receipts:  "decision outcome:denied",
			wantError: true,
		},
		{
			name:     "unknown tool",
			autonomy: "full",
			script: `turns:
  - {step: 1, tool_calls: [{name: launch_missiles, arguments: {}}]}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:    "invalid",
			reply:     `got error: the tool "launch_missiles" is not offered on this channel`,
			receipts:  "decision outcome:denied",
			wantError: true,
		},
		{
			name:     "rejected by a person",
			autonomy: "supervised",
			approver: &fixedApprover{answer: Answer{Result: "rejected", By: "test"}},
			script: `turns:
  - {step: 1, tool_calls: [{name: shell, arguments: {command: "rm -rf build"}}]}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:    StatusRejected,
			reply:     "got error: the user rejected this call",
			receipts:  "decision approval:rejected outcome:denied",
			wantError: true,
		},
		{
			name:     "leaked call written as text is recovered",
			autonomy: "supervised",
			script: `turns:
  - {step: 1, reply: "Sure. <tool_call>{\"name\": \"file_list\", \"arguments\": {\"path\": \".\"}}</tool_call>"}
  - {step: 2, reply: "got {{tool_result}}"}`,
			status:   StatusOK,
			reply:    `got {"entries":[`,
			receipts: "decision outcome:ok",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, r, st := loopRig(t, tc.autonomy, tc.script, tc.approver)
			res, err := a.Turn(context.Background(), agent.TurnRequest{Message: "go"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.ToolCalls) != 1 {
				t.Fatalf("tool calls = %+v, want 1", res.ToolCalls)
			}
			call := res.ToolCalls[0]
			if call.Status != tc.status {
				t.Errorf("status = %q, want %q", call.Status, tc.status)
			}
			if (call.Error != "") != tc.wantError {
				t.Errorf("error = %q, want error %v", call.Error, tc.wantError)
			}
			if !strings.HasPrefix(res.Reply, tc.reply) {
				t.Errorf("reply = %q, want prefix %q", res.Reply, tc.reply)
			}
			if call.ActionID == "" {
				t.Fatal("no action id: the call left no receipt")
			}
			if got := types(r.bodies(t, call.ActionID)); got != tc.receipts {
				t.Errorf("receipts = %q, want %q", got, tc.receipts)
			}
			// the call and its result are in memory, in order
			_, msgs, err := st.Get(context.Background(), res.Conversation)
			if err != nil {
				t.Fatal(err)
			}
			var roles []string
			for _, m := range msgs {
				roles = append(roles, string(m.Role))
			}
			if got := strings.Join(roles, " "); got != "user assistant tool assistant" {
				t.Errorf("memory roles = %q", got)
			}
		})
	}
}

func TestAgentStopsAfterMaxToolRounds(t *testing.T) {
	requireSandbox(t)
	script := `turns:
  - {match: "limit of 5 tool rounds", reply: "stopping here"}
default:
  tool_calls: [{name: time, arguments: {}}]`
	a, _, _ := loopRig(t, "supervised", script, nil)
	res, err := a.Turn(context.Background(), agent.TurnRequest{Message: "loop forever"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != agent.DefaultMaxToolRounds || res.Reply != "stopping here" {
		t.Fatalf("calls = %d, reply = %q; want %d calls and the forced answer", len(res.ToolCalls), res.Reply, agent.DefaultMaxToolRounds)
	}
}
