package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/internal/toolkind"
)

// maxModelOutput bounds each output stream given back to the model.
const maxModelOutput = 16 << 10

// Agent returns the broker as the agent loop's Invoker. Every call takes
// the one path, including calls whose arguments do not decode: those are
// sent to the gate as they are (which denies them, with receipts) and come
// back to the model as a tool error naming the problem.
func (b *Broker) Agent() agent.Invoker {
	return agentInvoker{b}
}

type agentInvoker struct{ b *Broker }

func (ai agentInvoker) Invoke(ctx context.Context, conv string, call tool.Call) tool.Result {
	redact := ai.b.cfg.Redact
	args, derr := tool.Decode(call.Name, call.Arguments)
	if derr != nil {
		// Record the attempt: the gate denies an unknown tool and
		// arguments that are missing or unknown.
		a := gate.Action{Tool: toolkind.Kind(call.Name), Args: map[string]any{"invalid_arguments": clip(derr.Error(), 512)}}
		if !utf8.ValidString(string(a.Tool)) || len(a.Tool) > 128 {
			a.Tool = "invalid"
		}
		out, err := ai.b.Invoke(ctx, a, conv)
		r := tool.Result{IsError: true, Status: "invalid", Content: "error: " + redact(derr.Error())}
		if out != nil {
			r.ActionID = out.ActionID
		}
		if err != nil {
			r.Content += "\n(the attempt could not be recorded: " + redact(err.Error()) + ")"
		}
		return r
	}
	out, err := ai.b.Invoke(ctx, gate.Action{Tool: toolkind.Kind(call.Name), Args: args}, conv)
	if out == nil {
		return tool.Result{IsError: true, Status: StatusError, Content: "error: " + redact(errString(err))}
	}
	r := tool.Result{Status: out.Status, ActionID: out.ActionID}
	reasons := func() string {
		var s []string
		for _, rs := range out.Decision.Reasons {
			s = append(s, rs.ID+": "+rs.Msg)
		}
		if len(s) == 0 {
			return ""
		}
		return " (" + strings.Join(s, "; ") + ")"
	}
	res := out.Result
	switch out.Status {
	case StatusOK:
		r.Content = okContent(toolkind.Kind(call.Name), res)
	case StatusDenied:
		r.IsError, r.Content, r.Rules = true, "error: denied by policy"+reasons(), out.Decision.RuleIDs()
	case StatusRejected:
		r.IsError, r.Content = true, "error: the user rejected this call"
	case StatusApprovalTO:
		r.IsError, r.Content = true, "error: this call needed approval and nobody answered in time"
	case StatusNeedsApproval:
		r.IsError, r.Content = true, "error: "+errString(out.Err)+reasons()
	case StatusEstop:
		r.IsError, r.Content = true, "error: the emergency stop is engaged; no tool calls run until a person clears it"
	case StatusFailed, StatusTimeout, StatusKilled:
		r.IsError, r.Content = true, failedContent(out.Status, res)
	default:
		r.IsError, r.Content = true, "error: "+out.Status+": "+errString(errors.Join(out.Err, err))
	}
	r.Content = redact(r.Content)
	return r
}

func okContent(name toolkind.Kind, res *executor.Result) string {
	if res == nil {
		return "ok"
	}
	if res.Tool != nil {
		if len(res.Tool.Payload) == 0 {
			return "ok"
		}
		return clip(string(res.Tool.Payload), 4*maxModelOutput)
	}
	var b strings.Builder
	if name == toolkind.Shell {
		fmt.Fprintf(&b, "exit %d\n", res.ExitCode)
	}
	writeStream(&b, "stdout", res.Stdout, res.StdoutTruncated)
	writeStream(&b, "stderr", res.Stderr, res.StderrTruncated)
	return strings.TrimRight(b.String(), "\n")
}

func failedContent(status string, res *executor.Result) string {
	var b strings.Builder
	b.WriteString("error: ")
	switch {
	case res == nil:
		b.WriteString(status)
	case res.Tool != nil && res.Tool.Error != "":
		b.WriteString(res.Tool.Error)
	case status == StatusTimeout:
		fmt.Fprintf(&b, "timed out after %s and was killed", res.Duration.Round(1e6))
	case status == StatusKilled:
		b.WriteString("killed by signal " + res.Signal)
	default:
		fmt.Fprintf(&b, "exit %d", res.ExitCode)
	}
	if res != nil {
		b.WriteString("\n")
		writeStream(&b, "stdout", res.Stdout, res.StdoutTruncated)
		writeStream(&b, "stderr", res.Stderr, res.StderrTruncated)
	}
	return strings.TrimRight(b.String(), "\n")
}

func writeStream(b *strings.Builder, name string, data []byte, truncated bool) {
	if len(data) == 0 {
		return
	}
	s := strings.ToValidUTF8(string(data), "\uFFFD")
	cut := len(s) > maxModelOutput
	s = clip(s, maxModelOutput)
	fmt.Fprintf(b, "%s:\n%s", name, s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	if truncated || cut {
		b.WriteString("[" + name + " truncated]\n")
	}
}

// clip cuts s to n bytes and a mark.
func clip(s string, n int) string { return textesc.Cut(s, n+len("…"), "…") }

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// PolicyDigest is the digest of the policies the broker's gate enforces.
func (b *Broker) PolicyDigest() string { return b.cfg.Gate.Digest() }
