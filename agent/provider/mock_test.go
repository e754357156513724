package provider

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testScript = `
turns:
  - turn: 1
    contains: LIST
    tool_calls:
      - name: file_list
        arguments: {path: "."}
  - match: '^read (\S+)$'
    step: 1
    tool_calls:
      - name: file_read
        id: fixed
        arguments: {path: "a.txt"}
  - tool_result: denied
    reply: "refused: {{tool_result}}"
  - step: 2
    reply: "turn {{turn}} step {{step}}: {{tool_result}}"
  - contains: fail
    error: rate_limit
  - contains: slow
    delay: 1h
    reply: never
default:
  reply: "echo {{user}}"
`

func chat(t *testing.T, p Provider, msgs ...Message) ChatResponse {
	t.Helper()
	resp, err := p.Chat(context.Background(), ChatRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestMockMatching(t *testing.T) {
	s, err := ParseScript([]byte(testScript))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMock("", s)
	user := func(s string) Message { return Message{Role: RoleUser, Content: s} }
	call := func(id string) Message {
		return Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "x", Arguments: json.RawMessage(`{}`)}}}
	}
	result := func(id, s string) Message { return Message{Role: RoleTool, ToolCallID: id, Content: s} }

	tests := []struct {
		name      string
		msgs      []Message
		wantText  string
		wantCalls []ToolCall
	}{
		{name: "turn and substring, case-insensitive", msgs: []Message{user("please list files")},
			wantCalls: []ToolCall{{ID: "mock_1_1", Name: "file_list", Arguments: json.RawMessage(`{"path":"."}`)}}},
		{name: "turn no longer 1", msgs: []Message{user("hi"), {Role: RoleAssistant, Content: "hello"}, user("list")},
			wantText: "echo list"},
		{name: "regexp and fixed id", msgs: []Message{user("read a.txt")},
			wantCalls: []ToolCall{{ID: "fixed", Name: "file_read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{name: "step 2 sees the tool result", msgs: []Message{user("read a.txt"), call("fixed"), result("fixed", "contents")},
			wantText: "turn 2 step 2: contents"},
		{name: "tool result matcher", msgs: []Message{user("read a.txt"), call("fixed"), result("fixed", "Denied by policy")},
			wantText: "refused: Denied by policy"},
		{name: "step resets on a new user message", msgs: []Message{user("x"), call("a"), result("a", "r"), {Role: RoleAssistant, Content: "ok"}, user("read b.txt")},
			wantCalls: []ToolCall{{ID: "fixed", Name: "file_read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{name: "default", msgs: []Message{user("what?")}, wantText: "echo what?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := chat(t, m, tt.msgs...)
			if resp.Text != tt.wantText {
				t.Errorf("text = %q, want %q", resp.Text, tt.wantText)
			}
			if diff := cmp.Diff(tt.wantCalls, resp.ToolCalls); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			wantFinish := FinishStop
			if len(tt.wantCalls) > 0 {
				wantFinish = FinishToolCalls
			}
			if resp.FinishReason != wantFinish || resp.Provider != "mock" || resp.Usage == nil {
				t.Errorf("finish %q, provider %q, usage %v", resp.FinishReason, resp.Provider, resp.Usage)
			}
		})
	}
}

func TestMockErrorsAndDelay(t *testing.T) {
	s, err := ParseScript([]byte(testScript))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMock("m", s)
	_, err = m.Chat(bg(), userReq("fail please"))
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		t.Errorf("err = %v, want RateLimitError", err)
	}
	ctx, cancel := context.WithTimeout(bg(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.Chat(ctx, userReq("slow")); !errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	for kind, want := range map[string]error{"auth": ErrAuth, "timeout": ErrTimeout, "network": ErrNetwork, "bad_response": ErrBadResponse, "bad_request": ErrBadRequest} {
		s, err := ParseScript([]byte("default: {error: " + kind + "}"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewMock("", s).Chat(bg(), userReq("x")); !errors.Is(err, want) {
			t.Errorf("error %s: got %v", kind, err)
		}
	}
}

func TestMockStream(t *testing.T) {
	var deltas []string
	req := userReq("hello there")
	req.Stream, req.OnDelta = true, func(s string) { deltas = append(deltas, s) }
	resp, err := NewMock("", nil).Chat(bg(), req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(deltas, "") != resp.Text || len(deltas) < 2 {
		t.Errorf("deltas %q do not rebuild %q", deltas, resp.Text)
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "unknown field", in: "turns:\n  - reply: x\n    replies: y\n", want: `unknown field "replies"`},
		{name: "bad regexp", in: "turns:\n  - match: '('\n    reply: x\n", want: "turn 1: match: error parsing regexp"},
		{name: "replies nothing", in: "turns:\n  - name: empty\n    turn: 2\n", want: "turn 1 (empty): replies nothing"},
		{name: "unknown error", in: "default: {error: boom}", want: `unknown error "boom"`},
		{name: "bad delay", in: "default: {reply: x, delay: soon}", want: `delay "soon"`},
		{name: "default with matcher", in: "default: {reply: x, step: 1}", want: "default reply takes no matchers"},
		{name: "negative turn", in: "turns: [{turn: -1, reply: x}]", want: "count from 1"},
		{name: "tool call without name", in: "turns: [{tool_calls: [{arguments: {}}]}]", want: "tool call 1 has no name"},
		{name: "arguments not an object", in: "turns: [{tool_calls: [{name: x, arguments: [1]}]}]", want: "arguments must be an object"},
		{name: "group named like a placeholder", in: "turns: [{match: '(?P<user>x)', reply: y}]", want: `group name "user" is a placeholder`},
		{name: "json trailing data", in: `{"turns":[]} {}`, want: "trailing data"},
		{name: "json unknown field", in: `{"turn":[]}`, want: `unknown field "turn"`},
		{name: "yaml syntax", in: "turns: [", want: "mock script:"},
		{name: "too large", in: strings.Repeat("#", maxScriptBytes+1), want: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadScriptJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(`{"turns":[{"contains":"hi","reply":"hello"}],"default":{"reply":"?"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := chat(t, NewMock("", s), Message{Role: RoleUser, Content: "hi"}).Text; got != "hello" {
		t.Errorf("text = %q", got)
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
}

// TestDefaultScriptDemo walks the embedded demo the way the agent loop
// does: each tool call is answered, until the model answers in text.
func TestDefaultScriptDemo(t *testing.T) {
	m := NewMock("", nil)
	msgs := []Message{{Role: RoleUser, Content: "run the demo"}}
	var tools []string
	for round := 0; round < 10; round++ {
		resp := chat(t, m, msgs...)
		if len(resp.ToolCalls) == 0 {
			if !strings.Contains(resp.Text, "denied: rm") {
				t.Errorf("final answer %q does not report the last tool result", resp.Text)
			}
			break
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, c := range resp.ToolCalls {
			tools = append(tools, c.Name+" "+string(c.Arguments))
			msgs = append(msgs, Message{Role: RoleTool, ToolCallID: c.ID, Content: "denied: rm -rf / is forbidden", IsError: true})
		}
	}
	want := []string{
		`file_list {"path":"."}`,
		`file_read {"path":"notes.txt"}`,
		`file_write {"content":"The workspace holds notes.txt.\n","path":"summary.txt"}`,
		`shell {"command":"./build.sh"}`,
		`shell {"command":"rm -rf /"}`,
	}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Errorf("demo tool calls (-want +got):\n%s", diff)
	}
}

func TestDefaultScriptSingleActions(t *testing.T) {
	m := NewMock("", nil)
	tests := []struct {
		say, tool, args string
	}{
		{say: "show me /etc/passwd", tool: "file_read", args: `{"path":"/etc/passwd"}`},
		{say: "rm -rf / now", tool: "shell", args: `{"command":"rm -rf /"}`},
		{say: "list the files", tool: "file_list", args: `{"path":"."}`},
		{say: "write a note", tool: "file_write", args: `{"content":"hello from claw\n","path":"notes.txt"}`},
		{say: "write hello to notes2.txt", tool: "file_write", args: `{"content":"hello\n","path":"notes2.txt"}`},
		{say: "please save the plan for monday into plans/week.md.", tool: "file_write", args: `{"content":"the plan for monday\n","path":"plans/week.md"}`},
		{say: `write "a \"b" to "my notes.txt"`, tool: "file_write", args: `{"content":"\"a \\\"b\"\n","path":"my notes.txt"}`},
		{say: `write "two words" to "my notes.txt"`, tool: "file_write", args: `{"content":"two words\n","path":"my notes.txt"}`},
		{say: `write {"x":"}"} to a.json`, tool: "file_write", args: `{"content":"{\"x\":\"}\"}\n","path":"a.json"}`},
		{say: "read docs/guide.md", tool: "file_read", args: `{"path":"docs/guide.md"}`},
		{say: "what time is it", tool: "time", args: `{}`},
		{say: "remember the Aardvark adapter", tool: "", args: ""},
	}
	for _, tt := range tests {
		resp := chat(t, m, Message{Role: RoleUser, Content: tt.say})
		var tool, args string
		if len(resp.ToolCalls) == 1 {
			tool, args = resp.ToolCalls[0].Name, string(resp.ToolCalls[0].Arguments)
		}
		if tool != tt.tool || args != tt.args {
			t.Errorf("%q: got %s %s, want %s %s", tt.say, tool, args, tt.tool, tt.args)
		}
		if tt.tool == "" && resp.Text != "You said: "+tt.say {
			t.Errorf("%q: text %q", tt.say, resp.Text)
		}
		if tt.tool != "" {
			second := chat(t, m, Message{Role: RoleUser, Content: tt.say},
				Message{Role: RoleAssistant, ToolCalls: resp.ToolCalls},
				Message{Role: RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: "denied by policy", IsError: true})
			if second.Text != "The tool returned: denied by policy" || len(second.ToolCalls) != 0 {
				t.Errorf("%q: second turn %+v", tt.say, second)
			}
		}
	}
}
