package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/internal/toolkind"
)

// Invoker takes one action through claw's path; *broker.Broker is one.
type Invoker interface {
	Invoke(ctx context.Context, a gate.Action, conversation string) (*broker.Outcome, error)
}

// DefaultMaxResultBytes bounds the text of one tool result given back to
// the client.
const DefaultMaxResultBytes = 256 << 10

// Options configure a server made by [NewServer] or [Proxy.Server].
type Options struct {
	Name    string // implementation name announced to clients (default "claw")
	Version string
	// Conversation is recorded in every receipt (may be empty).
	Conversation string
	// MaxResultBytes bounds a result's text (default DefaultMaxResultBytes).
	MaxResultBytes int
	// Logger receives diagnostics; it must not write to the protocol
	// stream (standard output for stdio). nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "claw"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// toolSpec is one of claw's own tools as an MCP tool.
type toolSpec struct {
	name, title, desc string
	props             map[string]any
	required          []string
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

// Tools are claw's tools offered by [NewServer], in listing order. Their
// argument names are the gate's (gate.Kinds).
var tools = []toolSpec{
	{name: "shell", title: "Shell command", desc: "Run a command with bash in the workspace, inside claw's sandbox. Policy decides whether it runs; a denial comes back as an error with the reasons.",
		props: map[string]any{"command": str("the command line, parsed by claw before it is judged")}, required: []string{"command"}},
	{name: "file_read", title: "Read file", desc: "Read a UTF-8 text file (size-capped).",
		props: map[string]any{"path": str("file path; relative paths are resolved against the workspace")}, required: []string{"path"}},
	{name: "file_write", title: "Write file", desc: "Write a file atomically (temporary file and rename).",
		props: map[string]any{"path": str("file path"), "content": str("the whole new content")}, required: []string{"path", "content"}},
	{name: "edit_file", title: "Edit file", desc: "Replace one exact, unique occurrence of old with new in a file.",
		props: map[string]any{"path": str("file path"), "old": str("text to replace; must occur exactly once"), "new": str("replacement text")}, required: []string{"path", "old", "new"}},
	{name: "file_list", title: "List directory", desc: "List a directory recursively (depth and entry caps).",
		props: map[string]any{"path": str("directory path")}, required: []string{"path"}},
	{name: "http", title: "HTTP request", desc: "GET (or POST) a URL on an allowed domain; SSRF-safe.",
		props: map[string]any{
			"url":     str("absolute http or https URL"),
			"method":  map[string]any{"type": "string", "enum": []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, "description": "HTTP method (default GET)"},
			"body":    str("request body"),
			"headers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": "request headers"},
		}, required: []string{"url"}},
	{name: "time", title: "Current time", desc: "The current time (UTC and local).", props: map[string]any{}},
}

// ToolNames lists the tools [NewServer] offers.
func ToolNames() []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.name
	}
	return out
}

func (t toolSpec) mcpTool() *mcp.Tool {
	schema := map[string]any{"type": "object", "properties": t.props, "additionalProperties": false}
	if len(t.required) > 0 {
		schema["required"] = t.required
	}
	return &mcp.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: schema}
}

// NewServer returns an MCP server that offers claw's tools; every call
// goes through inv. Run it with server.Run(ctx, &mcp.StdioTransport{}).
func NewServer(inv Invoker, o Options) *mcp.Server {
	o = o.withDefaults()
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{Logger: o.Logger})
	known := map[string]bool{}
	for _, t := range tools {
		known[t.name] = true
	}
	s.AddReceivingMiddleware(unknownTools(inv, o, known))
	for _, t := range tools {
		name := t.name
		s.AddTool(t.mcpTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, err := parseArgs(name, req.Params.Arguments)
			if err != nil {
				return errorResult("malformed arguments: " + err.Error()), nil
			}
			out, err := inv.Invoke(ctx, a, o.Conversation)
			o.Logger.Info("tool call", "tool", name, "status", status(out), "action_id", actionID(out))
			return resultOf(out, err, o.MaxResultBytes), nil
		})
	}
	return s
}

// maxToolNameBytes bounds the tool name a client asks for; a longer one,
// an empty one or one that is not UTF-8 is receipted as
// invalidToolName.
const maxToolNameBytes = 256

// invalidToolName stands in for a tool name a receipt cannot carry.
const invalidToolName = "invalid_tool_name"

// unknownTools answers a call of a tool the server does not offer as
// every other channel does: the call goes to the broker, whose gate
// denies it (tool.unknown) with a receipt, and the client gets a tool
// error, never a protocol error.
func unknownTools(inv Invoker, o Options, known map[string]bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil || known[call.Params.Name] {
				return next(ctx, method, req)
			}
			name := call.Params.Name
			if name == "" || len(name) > maxToolNameBytes || !utf8.ValidString(name) {
				name = invalidToolName
			}
			a, err := parseArgs(name, call.Params.Arguments)
			if err != nil {
				a = gate.Action{Tool: toolkind.Kind(name), Args: map[string]any{}}
			}
			out, err := inv.Invoke(ctx, a, o.Conversation)
			o.Logger.Info("tool call", "tool", name, "status", status(out), "action_id", actionID(out))
			return resultOf(out, err, o.MaxResultBytes), nil
		}
	}
}

// parseArgs decodes a call's arguments into an action, strictly and
// bounded (gate.ParseAction).
func parseArgs(tool string, raw json.RawMessage) (gate.Action, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if len(raw) > gate.MaxActionBytes {
		return gate.Action{}, fmt.Errorf("arguments larger than %d bytes", gate.MaxActionBytes)
	}
	// One JSON object and nothing else, so that it cannot add keys to the
	// document around it.
	if !json.Valid(raw) || bytes.TrimLeft(raw, " \t\r\n")[0] != '{' {
		return gate.Action{}, errors.New("arguments must be a JSON object")
	}
	name, _ := json.Marshal(tool)
	doc := make([]byte, 0, len(raw)+len(name)+20)
	doc = append(append(append(append(doc, `{"tool":`...), name...), `,"args":`...), raw...)
	doc = append(doc, '}')
	return gate.ParseAction(doc)
}

func status(out *broker.Outcome) string {
	if out == nil {
		return broker.StatusError
	}
	return out.Status
}

func actionID(out *broker.Outcome) string {
	if out == nil {
		return ""
	}
	return out.ActionID
}

// errorResult is a tool error with one text block.
func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// reasons renders the decision's reasons, one per line.
func reasons(d gate.Decision) string {
	var b strings.Builder
	for _, r := range d.Reasons {
		fmt.Fprintf(&b, "\n- %s: %s", r.ID, r.Msg)
	}
	return b.String()
}

// resultOf turns a broker outcome into a tool result. Everything that did
// not run, or failed, is a tool error that says why.
func resultOf(out *broker.Outcome, err error, limit int) *mcp.CallToolResult {
	if out == nil {
		msg := "claw could not take the action"
		if err != nil {
			msg += ": " + err.Error()
		}
		return errorResult(msg + " (nothing ran)")
	}
	d := out.Decision
	risk := ""
	if d.Risk != "" {
		risk = " (risk " + d.Risk + ")"
	}
	why := func() string {
		if out.Err != nil {
			return ": " + out.Err.Error()
		}
		return ""
	}
	var res *mcp.CallToolResult
	switch out.Status {
	case broker.StatusDenied:
		res = errorResult("denied by policy" + risk + reasons(d))
	case broker.StatusEstop:
		res = errorResult("blocked: the emergency stop is engaged (clear it with 'claw estop --clear')")
	case broker.StatusNeedsApproval:
		res = errorResult("needs approval" + risk + why() + reasons(d))
	case broker.StatusRejected:
		by := ""
		if out.Approval != nil {
			by = " by " + out.Approval.By
		}
		res = errorResult("rejected" + by + risk + reasons(d))
	case broker.StatusApprovalTO:
		res = errorResult("approval timed out; nothing ran" + reasons(d))
	case broker.StatusUnavailable:
		res = errorResult("sandbox unavailable, nothing ran" + why() + " (run 'claw doctor')")
	case broker.StatusSetupFailed:
		res = errorResult("sandbox setup failed, nothing ran" + why())
	case broker.StatusNotFound:
		res = errorResult("command not found" + why())
	case broker.StatusError:
		res = errorResult("claw could not take the action, nothing ran" + why())
	default:
		res = ranResult(out, limit)
	}
	res.StructuredContent = nil
	return res
}

// ranResult is the result of an action that ran.
func ranResult(out *broker.Outcome, limit int) *mcp.CallToolResult {
	r := out.Result
	if r == nil {
		return errorResult("no result")
	}
	if r.Tool != nil {
		if r.Tool.Error != "" {
			return errorResult(bound(r.Tool.Error, limit))
		}
		if p, ok := proxiedPayload(r.Tool.Payload); ok {
			return p.result(limit)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bound(string(r.Tool.Payload), limit)}}}
	}
	var b strings.Builder
	b.Write(r.Stdout)
	if len(r.Stderr) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.Write(r.Stderr)
	}
	if r.StdoutTruncated || r.StderrTruncated {
		fmt.Fprintf(&b, "\n[output truncated: %d bytes of stdout, %d of stderr produced]", r.StdoutBytes, r.StderrBytes)
	}
	switch {
	case r.TimedOut:
		fmt.Fprintf(&b, "\n[timed out after %v; the process tree was killed]", r.Duration.Round(time.Millisecond))
	case r.Signal != "":
		fmt.Fprintf(&b, "\n[killed by %s]", r.Signal)
	case r.ExitCode != 0:
		fmt.Fprintf(&b, "\n[exit status %d]", r.ExitCode)
	}
	return &mcp.CallToolResult{IsError: out.Status != broker.StatusOK, Content: []mcp.Content{&mcp.TextContent{Text: bound(b.String(), limit)}}}
}

// bound cuts s to at most limit bytes (on a rune boundary) and says so.
func bound(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	kept := textesc.Prefix(s, limit)
	return kept + fmt.Sprintf("\n[truncated: %d of %d bytes shown]", len(kept), len(s))
}

// TimeTool is the in-process runner of the "time" tool.
func TimeTool(context.Context, map[string]any) (json.RawMessage, error) {
	now := time.Now()
	return json.Marshal(map[string]string{"utc": now.UTC().Format(time.RFC3339), "local": now.Format(time.RFC3339), "zone": now.Location().String()})
}
