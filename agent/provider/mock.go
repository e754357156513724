package provider

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/textesc"
	"go.yaml.in/yaml/v3"
)

// maxScriptBytes caps a mock script file.
const maxScriptBytes = 1 << 20

//go:embed mock_default.yaml
var defaultScript []byte

// parsedDefault parses the embedded script once; a Script is read-only
// after ParseScript, so every default mock shares it.
var parsedDefault = sync.OnceValue(func() *Script {
	s, err := ParseScript(defaultScript)
	if err != nil {
		panic("provider: embedded mock script: " + err.Error())
	}
	return s
})

// DefaultScript returns the embedded script the mock follows when no
// fixture is configured.
func DefaultScript() []byte { return bytes.Clone(defaultScript) }

// Script is a parsed mock fixture; see the package documentation for the
// file format.
type Script struct {
	Turns   []Turn `json:"turns"`
	Default *Turn  `json:"default,omitempty"`
}

// Turn is one rule of a mock script: the matchers select a request, the
// rest is the reply. All matchers that are set must match.
type Turn struct {
	Name       string `json:"name,omitempty"`
	Turn       int    `json:"turn,omitempty"`
	Step       int    `json:"step,omitempty"`
	Contains   string `json:"contains,omitempty"`
	Match      string `json:"match,omitempty"`
	ToolResult string `json:"tool_result,omitempty"`

	Reply     string         `json:"reply,omitempty"`
	ToolCalls []MockToolCall `json:"tool_calls,omitempty"`
	Error     string         `json:"error,omitempty"`
	Delay     string         `json:"delay,omitempty"`

	re    *regexp.Regexp
	delay time.Duration
}

// MockToolCall is a tool call a mock turn replies with.
type MockToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// The values of a turn's error field.
var mockErrors = map[string]bool{"auth": true, "rate_limit": true, "timeout": true, "server": true, "bad_response": true, "bad_request": true, "network": true}

// ParseScript parses and checks a mock fixture, YAML or JSON (a document
// that starts with '{' is read as strict JSON). Unknown fields, bad
// regular expressions, unknown error kinds and turns that would reply
// nothing are errors.
func ParseScript(data []byte) (*Script, error) {
	if len(data) > maxScriptBytes {
		return nil, fmt.Errorf("mock script: larger than %d bytes", maxScriptBytes)
	}
	js := bytes.TrimSpace(data)
	if len(js) == 0 || js[0] != '{' {
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("mock script: %w", err)
		}
		var err error
		if js, err = json.Marshal(doc); err != nil {
			return nil, fmt.Errorf("mock script: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mock script: %w", err)
	}
	if dec.More() {
		return nil, errors.New("mock script: trailing data after the script")
	}
	for i := range s.Turns {
		if err := s.Turns[i].compile(false); err != nil {
			return nil, fmt.Errorf("mock script: turn %d%s: %w", i+1, label(s.Turns[i].Name), err)
		}
	}
	if s.Default != nil {
		if err := s.Default.compile(true); err != nil {
			return nil, fmt.Errorf("mock script: default: %w", err)
		}
	}
	return &s, nil
}

func label(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", name)
}

func (t *Turn) compile(isDefault bool) error {
	if isDefault && (t.Turn != 0 || t.Step != 0 || t.Contains != "" || t.Match != "" || t.ToolResult != "") {
		return errors.New("the default reply takes no matchers")
	}
	if t.Turn < 0 || t.Step < 0 {
		return errors.New("turn and step count from 1")
	}
	if t.Match != "" {
		re, err := regexp.Compile(t.Match)
		if err != nil {
			return fmt.Errorf("match: %w", err)
		}
		for _, n := range re.SubexpNames() {
			if reservedPlaceholders[n] {
				return fmt.Errorf("match: the group name %q is a placeholder of its own", n)
			}
		}
		t.re = re
	}
	if t.Error != "" && !mockErrors[t.Error] {
		return fmt.Errorf("unknown error %q (want auth, rate_limit, timeout, server, network, bad_response or bad_request)", t.Error)
	}
	if t.Delay != "" {
		d, err := time.ParseDuration(t.Delay)
		if err != nil || d < 0 {
			return fmt.Errorf("delay %q is not a duration", t.Delay)
		}
		t.delay = d
	}
	if t.Reply == "" && len(t.ToolCalls) == 0 && t.Error == "" {
		return errors.New("replies nothing: set reply, tool_calls or error")
	}
	for i, c := range t.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", i+1)
		}
		if a := bytes.TrimSpace(c.Arguments); len(a) > 0 && a[0] != '{' {
			return fmt.Errorf("tool call %d (%s): arguments must be an object", i+1, c.Name)
		}
	}
	return nil
}

// LoadScript reads a mock fixture file.
func LoadScript(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mock script: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("mock script %q: %w", path, err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Mock is the offline provider: it answers from a [Script], the same way
// every time. It is the default provider, so the demo and the tests need
// no network and no key.
type Mock struct {
	name    string
	script  *Script
	timeout time.Duration
}

// NewMock returns a mock provider named name ("mock" when empty) that
// follows script, or the embedded default script when script is nil.
func NewMock(name string, script *Script) *Mock {
	if name == "" {
		name = "mock"
	}
	if script == nil {
		script = parsedDefault()
	}
	return &Mock{name: name, script: script}
}

// Name implements [Provider].
func (m *Mock) Name() string { return m.name }

// Capabilities implements [Provider].
func (m *Mock) Capabilities() Capabilities { return Capabilities{Tools: true, Streaming: true} }

// mockView is what the matchers look at, and the placeholders show.
type mockView struct {
	user, toolResult string
	turn, step       int
	groups           map[string]string // named groups of the turn's match
}

// reservedPlaceholders are the placeholders a named group of match cannot
// take.
var reservedPlaceholders = map[string]bool{"user": true, "tool_result": true, "turn": true, "step": true}

func viewOf(req ChatRequest) mockView {
	v := mockView{turn: 1, step: 1}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleUser:
			v.user, v.toolResult, v.step = m.Content, "", 1
		case RoleAssistant:
			v.turn++
			v.step++
		case RoleTool:
			v.toolResult = m.Content
		}
	}
	return v
}

func (t *Turn) matches(v mockView) bool {
	return (t.Turn == 0 || t.Turn == v.turn) &&
		(t.Step == 0 || t.Step == v.step) &&
		(t.Contains == "" || strings.Contains(strings.ToLower(v.user), strings.ToLower(t.Contains))) &&
		(t.re == nil || t.re.MatchString(v.user)) &&
		(t.ToolResult == "" || strings.Contains(strings.ToLower(v.toolResult), strings.ToLower(t.ToolResult)))
}

// Chat implements [Provider]: the first turn whose matchers all hold
// answers; without one, the default does.
func (m *Mock) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if m.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.timeout)
		defer cancel()
	}
	v := viewOf(req)
	var t *Turn
	for i := range m.script.Turns {
		if m.script.Turns[i].matches(v) {
			t = &m.script.Turns[i]
			break
		}
	}
	if t == nil {
		t = m.script.Default
	}
	if t == nil {
		t = &Turn{Reply: "mock: no scripted reply for turn {{turn}}"}
	}
	if t.delay > 0 {
		timer := time.NewTimer(t.delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ChatResponse{}, fmt.Errorf("provider %q: %w", m.name, ErrTimeout)
			}
			return ChatResponse{}, fmt.Errorf("provider %q: %w", m.name, ctx.Err())
		case <-timer.C:
		}
	}
	if err := m.scriptedError(t.Error); err != nil {
		return ChatResponse{}, err
	}
	out := ChatResponse{Provider: m.name, Model: req.Model, FinishReason: FinishStop}
	if out.Model == "" {
		out.Model = "mock"
	}
	v.groups = t.groups(v.user)
	out.Text = expand(t.Reply, v)
	for i, c := range t.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("mock_%d_%d", v.turn, i+1)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: id, Name: c.Name, Arguments: expandArgs(normalizeArgs(c.Arguments), v)})
	}
	if len(out.ToolCalls) > 0 {
		out.FinishReason = FinishToolCalls
	}
	in := len(req.System)
	for _, msg := range req.Messages {
		in += len(msg.Content)
	}
	out.Usage = &Usage{InputTokens: (in + 3) / 4, OutputTokens: (len(out.Text) + 3) / 4}
	out.Usage.TotalTokens = out.Usage.InputTokens + out.Usage.OutputTokens
	if req.Stream && req.OnDelta != nil && out.Text != "" {
		for _, w := range strings.SplitAfter(out.Text, " ") {
			req.OnDelta(w)
		}
	}
	return out, nil
}

func (m *Mock) scriptedError(kind string) error {
	switch kind {
	case "":
		return nil
	case "auth":
		return &StatusError{Provider: m.name, StatusCode: 401, Type: "authentication_error", Message: "scripted"}
	case "rate_limit":
		return &RateLimitError{Provider: m.name, RetryAfter: time.Second, Message: "scripted"}
	case "timeout":
		return fmt.Errorf("provider %q: %w (scripted)", m.name, ErrTimeout)
	case "server":
		return &StatusError{Provider: m.name, StatusCode: 500, Type: "api_error", Message: "scripted"}
	case "network":
		return fmt.Errorf("provider %q: %w (scripted)", m.name, ErrNetwork)
	case "bad_response":
		return badResponse(m.name, "scripted")
	default: // bad_request
		return &StatusError{Provider: m.name, StatusCode: 400, Type: "invalid_request_error", Message: "scripted"}
	}
}

// groups returns the named groups of the turn's match in user.
func (t *Turn) groups(user string) map[string]string {
	if t.re == nil {
		return nil
	}
	m := t.re.FindStringSubmatch(user)
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for i, n := range t.re.SubexpNames() {
		if n != "" {
			out[n] = m[i]
		}
	}
	return out
}

// expandArgs fills the placeholders in the string values of a tool
// call's arguments; the values are re-encoded, so what a placeholder
// expands to stays inside its string.
func expandArgs(args json.RawMessage, v mockView) json.RawMessage {
	if !bytes.Contains(args, []byte("{{")) {
		return args
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return args
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			return expand(t, v)
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return x
	}
	b, err := json.Marshal(walk(doc))
	if err != nil {
		return args
	}
	return b
}

// maxPlaceholder caps what a placeholder expands to.
const maxPlaceholder = 2000

// expand fills the reply placeholders.
func expand(s string, v mockView) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	clip := func(x string) string { return textesc.Cut(x, maxPlaceholder+len("…"), "…") }
	pairs := []string{
		"{{user}}", clip(v.user),
		"{{tool_result}}", clip(v.toolResult),
		"{{turn}}", strconv.Itoa(v.turn),
		"{{step}}", strconv.Itoa(v.step),
	}
	for n, g := range v.groups {
		pairs = append(pairs, "{{"+n+"}}", clip(g))
	}
	return strings.NewReplacer(pairs...).Replace(s)
}
