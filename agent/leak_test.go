package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
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
		{name: "qwen xml", text: "Listing.\n<tool_call>\n<function=file_list>\n<parameter=path>\nsrc/\n</parameter>\n</function>\n</tool_call>",
			calls: []string{`file_list {"path":"src/"}`}, rest: "Listing."},
		{name: "qwen xml without the wrapper, two parameters", text: "<function=shell><parameter=command>ls -la\n</parameter><parameter=env>{\"A\":\"1\"}</parameter></function> done",
			calls: []string{`shell {"command":"ls -la","env":{"A":"1"}}`}, rest: "done"},
		{name: "qwen xml value keeps inner newlines and stays a string", text: "<function=shell>\n<parameter=command>\necho a\necho b\n</parameter>\n</function>",
			calls: []string{`shell {"command":"echo a\necho b"}`}},
		{name: "qwen xml no parameters", text: "<function=file_list></function>", calls: []string{`file_list {}`}},
		{name: "qwen xml inactive tool stays text", text: "<function=http><parameter=url>x</parameter></function>",
			rest: "<function=http><parameter=url>x</parameter></function>"},
		{name: "qwen xml stray text inside stays text", text: "<function=shell>run <parameter=command>ls</parameter></function>",
			rest: "<function=shell>run <parameter=command>ls</parameter></function>"},
		{name: "qwen xml repeated parameter stays text", text: "<function=shell><parameter=command>ls</parameter><parameter=command>rm</parameter></function>",
			rest: "<function=shell><parameter=command>ls</parameter><parameter=command>rm</parameter></function>"},
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

// FuzzRecoverToolCalls: model text is untrusted. Recovery is
// deterministic; it names only active tools, at most maxLeaked of them,
// numbered leaked_1, leaked_2, …, with JSON arguments; what it leaves is
// the text with the calls cut out (trimmed, nothing added), and the text
// itself when it recovers nothing.
func FuzzRecoverToolCalls(f *testing.F) {
	f.Add(`<tool_call>{"name":"shell","arguments":{"command":"ls"}}</tool_call>`)
	f.Add("```json\n{\"name\":\"shell\",\"args\":\"x\"}\n```")
	f.Add(`{"function":{"name":"shell"}}`)
	f.Add(`<tool_use>{</tool_use>`)
	f.Add(`a <tool_call>{"name":"file_list","input":"{\"path\":1}"}</tool_call> b <tool_use>{"tool":"http"}</tool_use> c`)
	f.Add(strings.Repeat(`<tool_call>{"name":"shell"}</tool_call>`, maxLeaked+1))
	f.Add(`<tool_<tool_call>{"name":"shell"}</tool_call>call>{"name":"shell"}</tool_call>`)
	f.Add("<tool_call>\n<function=shell>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>")
	f.Add("<function=file_list><parameter=path>[1,2]</parameter></function><function=shell></function>")
	f.Add("<function=shell><parameter=command><parameter=x>y</parameter></parameter></function>")
	f.Add(strings.Repeat("<function=shell></function>", maxLeaked+1))
	active := map[string]bool{"shell": true, "file_list": true}
	f.Fuzz(func(t *testing.T, text string) {
		calls, rest := RecoverToolCalls(text, active)
		again, rest2 := RecoverToolCalls(text, active)
		if !reflect.DeepEqual(calls, again) || rest != rest2 {
			t.Fatalf("RecoverToolCalls(%q) is not deterministic", text)
		}
		if len(calls) == 0 {
			if calls != nil || rest != text {
				t.Fatalf("RecoverToolCalls(%q) recovered nothing but left %q", text, rest)
			}
			return
		}
		if len(text) > maxLeakScan || len(calls) > maxLeaked {
			t.Fatalf("%d calls from %d bytes", len(calls), len(text))
		}
		for i, c := range calls {
			if !active[c.Name] || !json.Valid(c.Arguments) || c.ID != fmt.Sprintf("leaked_%d", i+1) {
				t.Fatalf("bad call %d %+v", i, c)
			}
			if !strings.Contains(text, c.Name) {
				t.Fatalf("call %+v names a tool the text does not", c)
			}
		}
		if rest != strings.TrimSpace(rest) || len(rest) >= len(text) || !subsequence(rest, text) {
			t.Fatalf("RecoverToolCalls(%q) left %q, which is not the text with parts cut out", text, rest)
		}
	})
}

// subsequence reports whether s is t with some bytes removed.
func subsequence(s, t string) bool {
	for i := 0; i < len(t) && len(s) > 0; i++ {
		if t[i] == s[0] {
			s = s[1:]
		}
	}
	return s == ""
}
