package agent

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRecoverToolCalls(t *testing.T) {
	active := map[string]bool{"file_list": true, "shell": true}
	tests := []struct {
		name  string
		text  string
		calls []string // name + " " + arguments
		rest  string
	}{
		{name: "tagged", text: `Looking. <tool_call>{"name":"file_list","arguments":{"path":"."}}</tool_call>`,
			calls: []string{`file_list {"path":"."}`}, rest: "Looking."},
		{name: "function_call tag, parameters", text: `<function_call>{"name":"shell","parameters":{"command":"ls"}}</function_call>`,
			calls: []string{`shell {"command":"ls"}`}},
		{name: "fenced json", text: "I'll list.\n```json\n{\"name\": \"file_list\", \"arguments\": {\"path\": \"src\"}}\n```\n",
			calls: []string{`file_list {"path": "src"}`}, rest: "I'll list."},
		{name: "bare object", text: ` {"name":"shell","arguments":"{\"command\":\"pwd\"}"} `,
			calls: []string{`shell {"command":"pwd"}`}},
		{name: "wire format copy", text: `<tool_call>{"function":{"name":"shell","arguments":"{\"command\":\"id\"}"}}</tool_call>`,
			calls: []string{`shell {"command":"id"}`}},
		{name: "two calls", text: `<tool_call>{"name":"shell","arguments":{"command":"a"}}</tool_call><tool_call>{"name":"shell","arguments":{"command":"b"}}</tool_call>`,
			calls: []string{`shell {"command":"a"}`, `shell {"command":"b"}`}},
		{name: "inactive tool stays text", text: `<tool_call>{"name":"http","arguments":{"url":"x"}}</tool_call>`,
			rest: `<tool_call>{"name":"http","arguments":{"url":"x"}}</tool_call>`},
		{name: "JSON in prose is not a call", text: `The config is {"name":"shell"} here.`, rest: `The config is {"name":"shell"} here.`},
		{name: "plain text", text: "hello", rest: "hello"},
		{name: "arguments not JSON become a string", text: `<tool_call>{"name":"shell","arguments":"ls -la"}</tool_call>`,
			calls: []string{`shell "ls -la"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, rest := RecoverToolCalls(tc.text, active)
			var got []string
			for _, c := range calls {
				got = append(got, c.Name+" "+string(c.Arguments))
				if c.ID == "" {
					t.Error("recovered call has no id")
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.calls, "|") {
				t.Errorf("calls = %q, want %q", got, tc.calls)
			}
			if rest != tc.rest {
				t.Errorf("rest = %q, want %q", rest, tc.rest)
			}
		})
	}
}

// FuzzRecoverToolCalls: model text is untrusted. Recovery must not panic,
// must only name active tools, and must give JSON arguments.
func FuzzRecoverToolCalls(f *testing.F) {
	f.Add(`<tool_call>{"name":"shell","arguments":{"command":"ls"}}</tool_call>`)
	f.Add("```json\n{\"name\":\"shell\",\"args\":\"x\"}\n```")
	f.Add(`{"function":{"name":"shell"}}`)
	f.Add(`<tool_use>{</tool_use>`)
	f.Fuzz(func(t *testing.T, text string) {
		calls, _ := RecoverToolCalls(text, map[string]bool{"shell": true})
		if len(calls) > maxLeaked {
			t.Fatalf("%d calls", len(calls))
		}
		for _, c := range calls {
			if c.Name != "shell" || !json.Valid(c.Arguments) {
				t.Fatalf("bad call %+v", c)
			}
		}
	})
}
