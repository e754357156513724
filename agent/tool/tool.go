// Package tool describes the tools an agent may call: their names, what
// they do, how risky they are, and the JSON Schema of their arguments.
//
// The package only describes and validates. It never runs anything: a call
// the model makes is decoded here ([Decode]), then handed to the agent's
// Invoker, which is the broker (gate, receipts, approval, sandbox).
//
// # Tools
//
//	time           the current time                                  low
//	file_list      list a directory (depth and entry caps)           low
//	file_read      read a UTF-8 text file (size-capped)              low
//	memory_search  search the conversation memory                    low
//	ask_user       ask the person a question and return the answer   low
//	file_write     write a file atomically                           medium
//	edit_file      replace one exact, unique occurrence of a string  medium
//	http           GET or POST a URL on an allowed domain            medium
//	shell          run a command through bash, sandboxed             high
//	plugin         call a tool of an installed plugin, sandboxed     medium
//	delegate       run a sub-agent on a sub-task, at most as trusted medium
//
// The risk shown here is the tool's nominal risk, for listings. The risk
// that counts is the gate's, computed for each call from its arguments.
//
// # Arguments
//
// A model sends arguments as a JSON object. [Decode] accepts exactly the
// properties the tool's schema names, with their types; anything else (not
// JSON, not an object, a missing or unknown property, a wrong type, a
// string over [MaxArgBytes]) is an *ArgError, which the agent loop sends
// back to the model as a tool error so it can correct itself.
package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/internal/toolkind"
)

// MaxArgBytes bounds one call's arguments, as JSON.
const MaxArgBytes = 1 << 20

// Prop is one argument of a tool.
type Prop struct {
	Name        string
	Type        string // string, integer, boolean, object (of strings), json (any object)
	Description string
	Required    bool
}

// Spec describes one tool.
type Spec struct {
	Name        toolkind.Kind
	Description string
	Risk        string // low, medium, high: nominal, for listings
	Props       []Prop
	// Kind is the timeout class the loop applies: "shell", "http" or ""
	// (every other tool).
	Kind toolkind.Kind
}

var specs = []Spec{
	{Name: toolkind.Time, Description: "Return the current date and time (UTC and local).", Risk: "low"},
	{Name: toolkind.FileList, Description: "List the files under a directory of the workspace, recursively, with depth and entry caps.", Risk: "low", Props: []Prop{
		{Name: "path", Type: "string", Description: "directory, relative to the workspace or absolute", Required: true},
	}},
	{Name: toolkind.FileRead, Description: "Read a UTF-8 text file (size-capped).", Risk: "low", Props: []Prop{
		{Name: "path", Type: "string", Description: "file, relative to the workspace or absolute", Required: true},
	}},
	{Name: toolkind.MemorySearch, Description: "Search earlier conversations for messages that contain every word of the query.", Risk: "low", Props: []Prop{
		{Name: "query", Type: "string", Description: "plain words, not a query language", Required: true},
	}},
	{Name: toolkind.AskUser, Description: "Ask the person a question and return their answer. Use it when you need a decision or a fact only they have.", Risk: "low", Props: []Prop{
		{Name: "question", Type: "string", Description: "the question, one or two sentences", Required: true},
	}},
	{Name: toolkind.FileWrite, Description: "Write a text file atomically, replacing it if it exists.", Risk: "medium", Props: []Prop{
		{Name: "path", Type: "string", Description: "file, relative to the workspace or absolute", Required: true},
		{Name: "content", Type: "string", Description: "the whole new content", Required: true},
	}},
	{Name: toolkind.EditFile, Description: "Replace one exact occurrence of old with new in a file; old must occur exactly once.", Risk: "medium", Props: []Prop{
		{Name: "path", Type: "string", Description: "file, relative to the workspace or absolute", Required: true},
		{Name: "old", Type: "string", Description: "the exact text to replace", Required: true},
		{Name: "new", Type: "string", Description: "the replacement", Required: true},
	}},
	{Name: toolkind.HTTP, Description: "Fetch a URL on an allowed domain (GET by default).", Risk: "medium", Kind: toolkind.HTTP, Props: []Prop{
		{Name: "url", Type: "string", Description: "http or https URL", Required: true},
		{Name: "method", Type: "string", Description: "GET, HEAD or POST"},
		{Name: "body", Type: "string", Description: "request body for POST"},
		{Name: "headers", Type: "object", Description: "extra request headers (string values)"},
	}},
	{Name: toolkind.Plugin, Description: "Call a tool of an installed plugin; it runs sandboxed with the reach its manifest declares.", Risk: "medium", Props: []Prop{
		{Name: "plugin", Type: "string", Description: "the plugin's name", Required: true},
		{Name: "tool", Type: "string", Description: "the tool's name", Required: true},
		{Name: "args", Type: "json", Description: "the tool's arguments, a JSON object matching its schema"},
	}},
	{Name: toolkind.Delegate, Description: "Hand a self-contained sub-task to a sub-agent and get its answer. It runs one turn with a bounded number of tool calls; its autonomy and tools can only be narrower than yours, and every call it makes is checked and receipted like yours.", Risk: "medium", Props: []Prop{
		{Name: "task", Type: "string", Description: "the sub-task, with everything the sub-agent needs to know", Required: true},
		{Name: "autonomy", Type: "string", Description: "readonly, supervised or full; never wider than yours (default: yours)"},
		{Name: "tools", Type: "string", Description: "comma-separated tool names the sub-agent may use (default: yours)"},
		{Name: "provider", Type: "string", Description: "a configured provider to run it on (default: yours)"},
		{Name: "agent", Type: "string", Description: "a configured external coding agent to run it instead (e.g. claude); its tool calls come back through the same checks"},
	}},
	{Name: toolkind.Shell, Description: "Run a command with bash in the workspace, inside a sandbox. Output is capped.", Risk: "high", Kind: toolkind.Shell, Props: []Prop{
		{Name: "command", Type: "string", Description: "the command line", Required: true},
	}},
}

// All returns every tool, in a stable order.
func All() []Spec { return append([]Spec(nil), specs...) }

// Names returns every tool's name, sorted.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = string(s.Name)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the tool called name.
func Lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == toolkind.Kind(name) {
			return s, true
		}
	}
	return Spec{}, false
}

// Select returns the tools whose names are in allow, in the stable order;
// a nil allow selects every tool. Unknown names are an error, so a typo in
// a config does not silently remove a tool.
func Select(allow []string) ([]Spec, error) {
	if allow == nil {
		return All(), nil
	}
	want := map[string]bool{}
	var unknown []string
	for _, n := range allow {
		if _, ok := Lookup(n); !ok {
			unknown = append(unknown, n)
		}
		want[n] = true
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown tools %s (known: %s)", strings.Join(unknown, ", "), strings.Join(Names(), ", "))
	}
	var out []Spec
	for _, s := range specs {
		if want[string(s.Name)] {
			out = append(out, s)
		}
	}
	return out, nil
}

// Schema returns the JSON Schema of the tool's arguments object.
func (s Spec) Schema() json.RawMessage {
	type prop struct {
		Type                 string `json:"type"`
		Description          string `json:"description,omitempty"`
		AdditionalProperties any    `json:"additionalProperties,omitempty"`
	}
	props := map[string]prop{}
	required := []string{}
	for _, p := range s.Props {
		pp := prop{Type: p.Type, Description: p.Description}
		if p.Type == "json" {
			pp.Type = "object"
		}
		if p.Type == "object" {
			pp.AdditionalProperties = map[string]string{"type": "string"}
		}
		props[p.Name] = pp
		if p.Required {
			required = append(required, p.Name)
		}
	}
	b, err := json.Marshal(struct {
		Type                 string          `json:"type"`
		Properties           map[string]prop `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties bool            `json:"additionalProperties"`
	}{"object", props, required, false})
	if err != nil {
		panic("tool: schema: " + err.Error())
	}
	return b
}

// Call is one tool call a model made.
type Call struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Result is what a call produced, as the model will see it.
type Result struct {
	// Content is the text sent back to the model.
	Content string
	// IsError marks a denial, a rejection or a failure.
	IsError bool
	// Status is the broker's status (ok, denied, rejected, failed, …),
	// or "invalid" for arguments that did not decode.
	Status string
	// ActionID names the receipts of the call, when it reached the broker.
	ActionID string
	// Rules are the rule ids behind a denial.
	Rules []string
}

// ArgError is a problem with a call's arguments.
type ArgError struct {
	Tool string
	Msg  string
}

func (e *ArgError) Error() string { return "invalid arguments for " + e.Tool + ": " + e.Msg }

// ErrUnknownTool is matched by the error Decode returns for a tool that
// does not exist.
var ErrUnknownTool = errors.New("unknown tool")

// Decode checks raw against the tool's schema and returns the arguments.
// Integers come back as int64, objects as map[string]any.
func Decode(name string, raw json.RawMessage) (map[string]any, error) {
	s, ok := Lookup(name)
	if !ok && toolkind.Kind(name) == YieldToUser.Name {
		s, ok = YieldToUser, true
	}
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownTool, name, strings.Join(Names(), ", "))
	}
	bad := func(format string, a ...any) (map[string]any, error) {
		return nil, &ArgError{Tool: name, Msg: fmt.Sprintf(format, a...)}
	}
	if len(raw) > MaxArgBytes {
		return bad("%d bytes of arguments, more than the %d allowed", len(raw), MaxArgBytes)
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	if !utf8.Valid(trimmed) {
		return bad("arguments are not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return bad("arguments are not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("arguments hold more than one JSON value")
	}
	if str, ok := v.(string); ok {
		// Some servers send the arguments object as a JSON string.
		inner := json.NewDecoder(strings.NewReader(str))
		inner.UseNumber()
		if err := inner.Decode(&v); err != nil {
			return bad("arguments are a string that is not a JSON object")
		}
		if _, err := inner.Token(); err != io.EOF {
			return bad("arguments are a string that holds more than one JSON value")
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return bad("arguments must be a JSON object, got %s", jsonType(v))
	}
	known := map[string]Prop{}
	for _, p := range s.Props {
		known[p.Name] = p
	}
	var problems []string
	for _, p := range s.Props {
		if _, ok := obj[p.Name]; !ok && p.Required {
			problems = append(problems, fmt.Sprintf("missing %q", p.Name))
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, len(obj))
	for _, k := range keys {
		p, ok := known[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("unknown property %q", k))
			continue
		}
		val, err := convert(p, obj[k])
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[k] = val
	}
	if len(problems) > 0 {
		return bad("%s", strings.Join(problems, "; "))
	}
	return out, nil
}

func convert(p Prop, v any) (any, error) {
	switch p.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%q must be a string, got %s", p.Name, jsonType(v))
		}
		return s, nil
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%q must be an integer, got %s", p.Name, jsonType(v))
		}
		i, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, fmt.Errorf("%q must be an integer, got %s", p.Name, n)
			}
			i = int64(f)
		}
		return i, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%q must be true or false, got %s", p.Name, jsonType(v))
		}
		return b, nil
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q must be an object, got %s", p.Name, jsonType(v))
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%q.%q must be a string, got %s", p.Name, k, jsonType(x))
			}
			out[k] = s
		}
		return out, nil
	case "json":
		// any object, whole: its own schema is the plugin's to check
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q must be an object, got %s", p.Name, jsonType(v))
		}
		return m, nil
	}
	return nil, fmt.Errorf("%q has an unsupported type %q", p.Name, p.Type)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
