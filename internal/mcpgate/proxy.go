package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/toolkind"
)

// Separator joins the server name and the upstream tool name.
const Separator = "__"

// Bounds on what an upstream may offer; tools past them are skipped.
const (
	maxTools          = 256
	maxDefinitionSize = 64 << 10 // description plus input schema
)

// Proxy re-exports the tools of one upstream MCP server through claw.
//
//	p := mcpgate.NewProxy("fs", upstreamSession, pins)
//	b := broker.New(broker.Config{..., InProcess: map[toolkind.Kind]broker.ToolFunc{"tool": p.Forward}})
//	srv, err := p.Server(ctx, b, mcpgate.Options{})
type Proxy struct {
	// Refuser, when set, records every call of a disabled tool, which
	// never reaches the gate: a decision and an outcome receipt (deny,
	// "mcp.pin_changed"). The broker is one.
	Refuser Refuser

	name  string
	conv  string // Options.Conversation of the server
	up    *mcp.ClientSession
	pins  *Pins
	mu    sync.Mutex
	tools map[string]*mcp.Tool // upstream name → definition, enabled tools only
	off   map[string]string    // exported name → upstream name, disabled tools
}

// NewProxy returns a proxy for the upstream session up, exported under
// name (see [SanitizeName]).
func NewProxy(name string, up *mcp.ClientSession, pins *Pins) *Proxy {
	return &Proxy{name: name, up: up, pins: pins, tools: map[string]*mcp.Tool{}, off: map[string]string{}}
}

// Name is the server name the proxy exports its tools under.
func (p *Proxy) Name() string { return p.name }

// SanitizeName turns s into a server name usable in tool names: lowercase
// letters, digits, '-' and '_', at most 32 bytes; "upstream" if nothing is
// left.
func SanitizeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_-")
	for strings.Contains(out, Separator) {
		out = strings.ReplaceAll(out, Separator, "_")
	}
	if len(out) > 32 {
		out = out[:32]
	}
	if out == "" {
		return "upstream"
	}
	return out
}

// validToolName reports whether n can be re-exported as is.
func validToolName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Server lists the upstream tools, checks each against its pin and returns
// a server that offers the enabled ones as NAME__TOOL. Each call goes
// through inv as an action of kind "tool"; the broker runs it with
// [Proxy.Forward].
func (p *Proxy) Server(ctx context.Context, inv Invoker, o Options) (*mcp.Server, error) {
	o = o.withDefaults()
	p.conv = o.Conversation
	var listed []*mcp.Tool
	for t, err := range p.up.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("failed to list the tools of %s: %w", p.name, err)
		}
		if len(listed) == maxTools {
			o.Logger.Warn("upstream offers too many tools; the rest are skipped", "server", p.name, "max", maxTools)
			break
		}
		listed = append(listed, t)
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].Name < listed[j].Name })
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{Logger: o.Logger})
	for _, t := range listed {
		if !validToolName(t.Name) {
			o.Logger.Warn("upstream tool skipped: its name is not a plain tool name", "server", p.name, "tool", fmt.Sprintf("%q", t.Name))
			continue
		}
		if def, err := DefinitionOf(t); err != nil || len(def.Description)+len(def.InputSchema) > maxDefinitionSize || !objectSchema(def.InputSchema) {
			o.Logger.Warn("upstream tool skipped: its definition is malformed or too large", "server", p.name, "tool", t.Name, "max_bytes", maxDefinitionSize)
			continue
		}
		exported := p.name + Separator + t.Name
		first, err := p.pins.Check(p.name, t)
		switch {
		case errors.Is(err, ErrChanged):
			o.Logger.Warn("upstream tool disabled: its description or schema changed since it was pinned",
				"server", p.name, "tool", t.Name, "approve_with", "claw mcp pin "+p.name+" "+t.Name)
			p.mu.Lock()
			p.off[exported] = t.Name
			p.mu.Unlock()
			continue
		case err != nil:
			return nil, err
		case first:
			o.Logger.Info("upstream tool pinned at first sight", "server", p.name, "tool", t.Name)
		}
		p.mu.Lock()
		p.tools[t.Name] = t
		p.mu.Unlock()
		upName := t.Name
		s.AddTool(&mcp.Tool{
			Name:        exported,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: t.InputSchema,
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args, err := decodeObject(req.Params.Arguments)
			if err != nil {
				return errorResult("malformed arguments: " + err.Error()), nil
			}
			a := gate.Action{Tool: toolkind.MCP, Args: map[string]any{"server": p.name, "name": upName, "args": args}}
			out, err := inv.Invoke(ctx, a, o.Conversation)
			o.Logger.Info("tool call", "server", p.name, "tool", upName, "status", status(out), "action_id", actionID(out))
			return resultOf(out, err, o.MaxResultBytes), nil
		})
	}
	s.AddReceivingMiddleware(p.disabledCalls)
	return s, nil
}

// objectSchema reports whether schema is a JSON object with "type":
// "object", as every tool's input schema must be.
func objectSchema(schema json.RawMessage) bool {
	var m map[string]any
	if err := json.Unmarshal(schema, &m); err != nil {
		return false
	}
	return m["type"] == "object"
}

// disabledCalls answers a call of a disabled tool with a tool error that
// says how to re-approve it.
func (p *Proxy) disabledCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				p.mu.Lock()
				up, off := p.off[r.Params.Name]
				p.mu.Unlock()
				if off {
					msg := fmt.Sprintf("tool %s is disabled: its description or input schema changed since it was pinned; review and approve it with 'claw mcp pin %s %s'", r.Params.Name, p.name, up)
					if err := p.recordDisabled(ctx, up, r.Params.Arguments); err != nil {
						msg += " (and the refusal could not be recorded: " + err.Error() + ")"
					}
					return errorResult(msg), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// PinChangedRule is the reason id recorded for a call of a tool disabled
// by a changed definition.
const PinChangedRule = "mcp.pin_changed"

// Refuser records a call refused before it reaches the gate
// ([broker.Broker.Refuse]).
type Refuser interface {
	Refuse(ctx context.Context, r broker.Refusal) (*broker.Outcome, error)
}

// recordDisabled records a refused call of a disabled tool. It returns
// an error only when the refusal could not be recorded; the call is
// refused either way.
func (p *Proxy) recordDisabled(ctx context.Context, tool string, args json.RawMessage) error {
	if p.Refuser == nil {
		return nil
	}
	_, err := p.Refuser.Refuse(context.WithoutCancel(ctx), broker.Refusal{Tool: "tool", Args: args, Conversation: p.conv,
		Summary: "tool " + p.name + " " + tool + " (disabled: definition changed)",
		Rule:    PinChangedRule, Msg: "tool definition changed since it was pinned"})
	return err
}

// decodeObject decodes call arguments as a JSON object, numbers as
// float64 (as the gate sees them).
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	a, err := parseArgs("tool", raw)
	if err != nil {
		return nil, err
	}
	return a.Args, nil
}

// Forward is the broker's in-process runner for actions of kind "tool"
// aimed at this proxy: it calls the upstream tool and returns the rebuilt
// result as JSON. Only enabled tools of this proxy's server are called.
func (p *Proxy) Forward(ctx context.Context, args map[string]any) (json.RawMessage, error) {
	server, _ := args["server"].(string)
	name, _ := args["name"].(string)
	if server != p.name {
		return nil, fmt.Errorf("no MCP server %q here", server)
	}
	p.mu.Lock()
	_, ok := p.tools[name]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("tool %q of %s is not enabled", name, server)
	}
	callArgs, _ := args["args"].(map[string]any)
	if callArgs == nil {
		callArgs = map[string]any{}
	}
	res, err := p.up.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: callArgs})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("upstream %s: %w", server, ctx.Err())
		}
		return nil, fmt.Errorf("upstream server %s failed or is not running: %w", server, err)
	}
	pl := rebuild(res, DefaultMaxResultBytes)
	if pl.IsError {
		return nil, fmt.Errorf("%s %s: %s", server, name, pl.text())
	}
	b, err := json.Marshal(pl)
	if err != nil {
		return nil, err
	}
	return b, nil
}
