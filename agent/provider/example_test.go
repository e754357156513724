package provider_test

import (
	"context"
	"fmt"
	"log"

	"github.com/clawsec/claw/agent/provider"
)

// A mock script answers a request for files with a tool call, then
// reports the tool's result; anything else gets the default reply.
func ExampleParseScript() {
	script, err := provider.ParseScript([]byte(`
turns:
  - match: '(?i)\bfiles\b'
    step: 1
    reply: "Let me look."
    tool_calls:
      - name: file_list
        arguments: {path: "."}
  - step: 2
    reply: "Found: {{tool_result}}"
default:
  reply: "You said: {{user}}"
`))
	if err != nil {
		log.Fatal(err)
	}
	m := provider.NewMock("mock", script)
	ctx := context.Background()

	req := provider.ChatRequest{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Which files are there?"}}}
	first, _ := m.Chat(ctx, req)
	call := first.ToolCalls[0]
	fmt.Println(first.Text, call.Name, string(call.Arguments), call.ID)

	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: first.Text, ToolCalls: first.ToolCalls},
		provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Content: "notes.txt"})
	second, _ := m.Chat(ctx, req)
	fmt.Println(second.Text)

	other, _ := m.Chat(ctx, provider.ChatRequest{Messages: []provider.Message{{Role: provider.RoleUser, Content: "hello"}}})
	fmt.Println(other.Text)
	// Output:
	// Let me look. file_list {"path":"."} mock_1_1
	// Found: notes.txt
	// You said: hello
}

// Reliable falls back from a failing provider to the next one.
func ExampleNewReliable() {
	down, _ := provider.ParseScript([]byte(`default: {error: server}`))
	primary := provider.NewMock("primary", down)
	r, _ := provider.NewReliable(nil, primary, provider.NewMock("backup", nil))
	resp, err := r.Chat(context.Background(), provider.ChatRequest{
		Messages: []provider.Message{{Role: provider.RoleUser, Content: "hi"}},
	})
	fmt.Println(resp.Provider, resp.Text, err)
	// Output:
	// backup You said: hi <nil>
}
