package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
)

// maxPromptArgs bounds the args line of a prompt, in bytes of escaped
// text. It is generous: what is cut is what the person does not see, and
// padding could push the end of a command out of view. A cut line says
// how much is missing.
const maxPromptArgs = 2000

// promptActionKey is the context key of the action being invoked.
type promptActionKey struct{}

type promptAction struct {
	action gate.Action
	redact func(string) string
}

// withPromptAction gives the terminal prompts the arguments of the action
// about to be invoked: a broker.Request carries only their summary. The
// broker passes ctx on to its approver. redact removes secrets from the
// arguments, as the broker's does from the summary (nil: broker.Redact).
func withPromptAction(ctx context.Context, a gate.Action, redact func(string) string) context.Context {
	if redact == nil {
		redact = broker.Redact
	}
	return context.WithValue(ctx, promptActionKey{}, promptAction{action: a, redact: redact})
}

// writeRequest shows what a person is asked to approve, or to type the
// passphrase for: the tool, its risk, the rules that asked, the arguments
// and the sandbox plan. Everything in it is escaped, so a model cannot
// write a line of its own into the prompt.
func writeRequest(ctx context.Context, w io.Writer, title string, r broker.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", title)
	fmt.Fprintf(&b, "  tool: %s\n", sanitize(r.Tool))
	fmt.Fprintf(&b, "  risk: %s\n", sanitize(r.Decision.Risk))
	for _, rs := range r.Decision.Reasons {
		fmt.Fprintf(&b, "  reason: %s (rule %s)\n", sanitize(rs.Msg), sanitize(rs.ID))
	}
	fmt.Fprintf(&b, "  args: %s\n", requestArgs(ctx, r))
	sb := r.Decision.Sandbox
	fmt.Fprintf(&b, "  sandbox: read=%s write=%s net=%t\n", sanitize(listOrNone(sb.Read)), sanitize(listOrNone(sb.Write)), sb.Net)
	io.WriteString(w, b.String())
}

// requestArgs is the args line of r's prompt: the action's arguments when
// ctx carries them (withPromptAction), its summary otherwise.
func requestArgs(ctx context.Context, r broker.Request) string {
	if p, ok := ctx.Value(promptActionKey{}).(promptAction); ok && p.action.Tool == r.Tool {
		return promptArgs(p.action.Args, p.redact)
	}
	return clipNoted(r.Summary, maxPromptArgs)
}

// promptArgs renders arguments for a prompt: compact JSON with sorted keys
// and secrets redacted, escaped by sanitizeClip and cut at maxPromptArgs.
func promptArgs(args map[string]any, redact func(string) string) string {
	if args == nil {
		args = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(redactValues(args, redact)); err != nil {
		return sanitize(fmt.Sprintf("(arguments that cannot be shown: %v)", err))
	}
	return clipNoted(strings.TrimSuffix(buf.String(), "\n"), maxPromptArgs)
}

// clipNoted escapes s and cuts it at max bytes, saying how many escaped
// bytes were left out.
func clipNoted(s string, max int) string {
	full := sanitize(s)
	if len(full) <= max {
		return full
	}
	cut := sanitizeClip(s, max)
	return fmt.Sprintf("%s (%d more bytes not shown)", cut, len(full)-len(strings.TrimSuffix(cut, "…")))
}

// redactValues returns v with redact applied to every string in it.
func redactValues(v any, redact func(string) string) any {
	switch v := v.(type) {
	case string:
		return redact(v)
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = redactValues(x, redact)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = redactValues(x, redact)
		}
		return l
	}
	return v
}

// promptInvoker gives each tool call's arguments to the prompts
// (withPromptAction), decoded as the broker decodes them.
type promptInvoker struct {
	agent.Invoker
	redact func(string) string
}

func (p promptInvoker) Invoke(ctx context.Context, conv string, call tool.Call) tool.Result {
	if args, err := tool.Decode(call.Name, call.Arguments); err == nil {
		ctx = withPromptAction(ctx, gate.Action{Tool: call.Name, Args: args}, p.redact)
	}
	return p.Invoker.Invoke(ctx, conv, call)
}
