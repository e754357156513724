package agent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/clawsec/claw/agent/provider"
)

// Leaked tool calls: a model that writes its call as text instead of a
// structured call. The forms recognised, in order:
//
//	<tool_call>{"name": "file_list", "arguments": {"path": "."}}</tool_call>
//	<function_call>…</function_call>, <tool_use>…</tool_use>
//	```json
//	{"name": "file_list", "arguments": {"path": "."}}
//	```
//	{"name": "file_list", "arguments": {"path": "."}}   (the whole reply)
//	<function=file_list><parameter=path>.</parameter></function>
//	    (Qwen's XML form, in a <tool_call> or not; one newline after
//	    <parameter=K> and before </parameter> is dropped; a value is a
//	    string unless it is a JSON object or array)
//
// "arguments" may also be spelled "parameters", "args" or "input", and may
// be an object or a JSON string holding one. Only calls naming an active
// tool are recovered; everything else stays text. The recovered calls are
// cut out of the text, which keeps the rest.

var (
	leakTags = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)<(tool_call|function_call|tool_use)>\s*(.*?)\s*</(?:tool_call|function_call|tool_use)>`)
	})
	leakFence = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?s)```(?:json|tool_call)?\\s*\\n(\\{.*?\\})\\s*\\n?```")
	})
	leakXML = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)(?:<tool_call>\s*)?<function=([^<>\s]+)>(.*?)</function>(?:\s*</tool_call>)?`)
	})
	leakParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^\s*<parameter=([^<>\s]+)>(.*?)</parameter>`) })
)

// maxLeakScan bounds how much text is searched for leaked calls.
const maxLeakScan = 256 << 10

// maxLeaked bounds how many calls one reply can yield.
const maxLeaked = 8

// RecoverToolCalls finds tool calls written as text in a reply. It returns
// them (with ids "leaked_N") and the text without them. active names the
// tools that may be called.
func RecoverToolCalls(text string, active map[string]bool) ([]provider.ToolCall, string) {
	if len(text) > maxLeakScan || len(active) == 0 || !strings.Contains(text, "{") && !strings.Contains(text, "<function=") {
		return nil, text
	}
	var calls []provider.ToolCall
	keep := func(c provider.ToolCall, ok bool) bool {
		if !ok || len(calls) >= maxLeaked {
			return false
		}
		c.ID = "leaked_" + string(rune('1'+len(calls)))
		calls = append(calls, c)
		return true
	}
	add := func(raw string) bool { return keep(parseLeaked(raw, active)) }
	rest := leakXML().ReplaceAllStringFunc(text, func(m string) string {
		sub := leakXML().FindStringSubmatch(m)
		if keep(parseLeakedXML(sub[1], sub[2], active)) {
			return ""
		}
		return m
	})
	rest = leakTags().ReplaceAllStringFunc(rest, func(m string) string {
		sub := leakTags().FindStringSubmatch(m)
		if add(sub[2]) {
			return ""
		}
		return m
	})
	rest = leakFence().ReplaceAllStringFunc(rest, func(m string) string {
		sub := leakFence().FindStringSubmatch(m)
		if add(sub[1]) {
			return ""
		}
		return m
	})
	if len(calls) == 0 {
		t := strings.TrimSpace(rest)
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") && add(t) {
			rest = ""
		}
	}
	if len(calls) == 0 {
		return nil, text
	}
	return calls, strings.TrimSpace(rest)
}

func parseLeaked(raw string, active map[string]bool) (provider.ToolCall, bool) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(raw))
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return provider.ToolCall{}, false
	}
	// {"function": {"name":…, "arguments":…}} as some models copy the wire format.
	if f, ok := obj["function"]; ok {
		var inner map[string]json.RawMessage
		if json.Unmarshal(f, &inner) == nil {
			obj = inner
		}
	}
	var name string
	for _, k := range []string{"name", "tool", "tool_name"} {
		if v, ok := obj[k]; ok && json.Unmarshal(v, &name) == nil {
			break
		}
	}
	if !active[name] {
		return provider.ToolCall{}, false
	}
	args := json.RawMessage(`{}`)
	for _, k := range []string{"arguments", "parameters", "args", "input"} {
		if v, ok := obj[k]; ok {
			v = bytes.TrimSpace(v)
			var s string
			if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
				v = json.RawMessage(s)
			}
			if !json.Valid(v) {
				// Not JSON: pass it on as a string, which argument
				// validation rejects and tells the model about.
				b, _ := json.Marshal(string(v))
				v = b
			}
			args = v
			break
		}
	}
	return provider.ToolCall{Name: name, Arguments: args}, true
}

// parseLeakedXML reads the parameters of a call in Qwen's XML form: body
// must hold <parameter=K>V</parameter> elements and nothing else, each
// name once.
func parseLeakedXML(name, body string, active map[string]bool) (provider.ToolCall, bool) {
	if !active[name] {
		return provider.ToolCall{}, false
	}
	args := map[string]json.RawMessage{}
	for strings.TrimSpace(body) != "" {
		m := leakParam().FindStringSubmatchIndex(body)
		if m == nil {
			return provider.ToolCall{}, false
		}
		k := body[m[2]:m[3]]
		v := strings.TrimPrefix(body[m[4]:m[5]], "\n")
		v = strings.TrimSuffix(v, "\n")
		body = body[m[1]:]
		if _, dup := args[k]; dup {
			return provider.ToolCall{}, false
		}
		if t := strings.TrimSpace(v); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
			args[k] = json.RawMessage(t)
		} else {
			args[k], _ = json.Marshal(v)
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return provider.ToolCall{}, false
	}
	return provider.ToolCall{Name: name, Arguments: b}, true
}
