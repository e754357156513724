package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/gate/shell"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/term"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/internal/toolkind"
)

// DryRun is how claw gate test shows the decision for one action.
type DryRun struct {
	Explain bool   // also the parsed action and the rules that fired
	Output  string // text or json
}

// DecideDryRun decides one action in gctx and writes the decision to
// stdout as claw gate test shows it (a gate error is a warning on
// stderr); its error is the decision's exit status. A plugin action is
// decided with the reach of the plugin installed in e's home, and a
// delegate call with the hosts of the external agent it names, as the
// broker does.
func DecideDryRun(ctx context.Context, eng *gate.Engine, e *Env, o DryRun, action gate.Action, gctx gate.Context, stdout, stderr io.Writer) error {
	in := gate.BuildInput(action, gctx)
	switch in.Kind {
	case toolkind.Plugin:
		broker.ResolvePlugin(PluginResolver(PluginStore(e.Home)), action, in)
	case toolkind.Delegate:
		broker.ResolveDelegate(DelegateHosts(e.Config), action, in)
	}
	var d gate.Decision
	var fired []string
	var err error
	if o.Explain {
		d, fired, err = eng.Explain(ctx, in)
	} else {
		d, err = eng.DecideInput(ctx, in)
	}
	if err != nil {
		term.Warnf(stderr, "%v", err)
	}
	if o.Output == "json" {
		out := struct {
			gate.Decision
			Parsed any      `json:"parsed"`
			Input  any      `json:"input,omitempty"`
			Fired  []string `json:"fired,omitempty"`
		}{Decision: d, Parsed: in.Parsed, Fired: fired}
		if o.Explain {
			out.Input = in
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		writeDecision(stdout, d, in, fired, o.Explain)
	}
	return DecisionExit(d)
}

// DecisionExit maps a decision to the published exit codes.
func DecisionExit(d gate.Decision) error {
	switch d.Decision {
	case gate.Allow:
		return nil
	case gate.Ask, gate.Passphrase:
		return SilentExit(ExitNeedsHuman)
	}
	return SilentExit(ExitDenied)
}

// DryRunContext builds the context a dry run's action is judged in: the
// config's workspace and autonomy unless workspace or autonomy are given,
// cwd the workspace unless given.
func DryRunContext(e *Env, workspace, cwd, autonomy string) (gate.Context, error) {
	ws := e.Config.WorkspaceDir
	if workspace != "" {
		ws = workspace
	}
	ws, err := CanonicalDir(ws)
	if err != nil {
		return gate.Context{}, err
	}
	dir := ws
	if cwd != "" {
		if dir, err = CanonicalDir(cwd); err != nil {
			return gate.Context{}, err
		}
	}
	if autonomy == "" {
		autonomy = e.Config.Security.Autonomy
	}
	_, estop := os.Stat(e.Home + "/ESTOP")
	return gate.Context{
		Autonomy:  autonomy,
		Workspace: ws,
		Cwd:       dir,
		Home:      e.UserDir,
		Channel:   "cli",
		Estop:     estop == nil,
	}, nil
}

// DryRunAction builds the action of a dry run from its JSON js, or else
// from TOOL ARG… (args): positional arguments map to the tool's arguments
// in order.
func DryRunAction(js string, args []string) (gate.Action, error) {
	if js != "" {
		return gate.ParseAction([]byte(js))
	}
	tool, rest := toolkind.Kind(args[0]), args[1:]
	a := gate.Action{Tool: tool, Args: map[string]any{}}
	spec, known := gate.Kinds[tool]
	if !known {
		// Unknown tools are the gate's to deny, not a usage error.
		if len(rest) > 0 {
			a.Args["args"] = rest
		}
		return a, nil
	}
	switch tool {
	case "shell":
		if len(rest) == 0 {
			return a, errors.New("shell needs a COMMAND")
		}
		a.Args["command"] = strings.Join(rest, " ")
		return a, nil
	case "tool", "plugin":
		keys := map[string][2]string{"tool": {"server", "name"}, "plugin": {"plugin", "tool"}}[string(tool)]
		if len(rest) < 2 || len(rest) > 3 {
			return a, fmt.Errorf("%s needs %s %s [ARGS-JSON]", tool, strings.ToUpper(keys[0]), strings.ToUpper(keys[1]))
		}
		a.Args[keys[0]], a.Args[keys[1]] = rest[0], rest[1]
		if len(rest) == 3 {
			var v map[string]any
			if err := json.Unmarshal([]byte(rest[2]), &v); err != nil {
				return a, fmt.Errorf("%s ARGS-JSON: %w", tool, err)
			}
			a.Args["args"] = v
		}
		return a, nil
	}
	names := append(append([]string{}, spec.Required...), spec.Optional...)
	if tool == "http" {
		names = []string{"url", "method"}
	}
	if len(rest) < len(spec.Required) || len(rest) > len(names) {
		return a, fmt.Errorf("%s takes %s", tool, strings.ToUpper(strings.Join(names, " ")))
	}
	for i, v := range rest {
		a.Args[names[i]] = v
	}
	return a, nil
}

// writeDecision writes a decision as text; with explain, also the parsed
// input and the rules that fired.
func writeDecision(w io.Writer, d gate.Decision, in *gate.Input, fired []string, explain bool) {
	fmt.Fprintf(w, "decision: %s (risk %s)\n", d.Decision, d.Risk)
	for _, r := range d.Reasons {
		fmt.Fprintf(w, "  %-30s %-8s %s\n", r.ID, r.Severity, textesc.String(r.Msg))
	}
	fmt.Fprintf(w, "sandbox: read=%s write=%s net=%t\n", term.ListOrNone(d.Sandbox.Read), term.ListOrNone(d.Sandbox.Write), d.Sandbox.Net)
	if len(d.Sandbox.Network.Hosts) > 0 {
		fmt.Fprintf(w, "egress: %s (through claw's proxy only)\n", strings.Join(d.Sandbox.Network.Hosts, " "))
	}
	fmt.Fprintf(w, "policy: %s\n", d.PolicyDigest)
	if !explain {
		return
	}
	if len(in.Errors) > 0 {
		fmt.Fprintln(w, "input errors:")
		for _, e := range in.Errors {
			fmt.Fprintf(w, "  %s\n", textesc.String(e))
		}
	}
	if in.Parsed != nil {
		writeParsed(w, in.Parsed)
	} else if len(in.Paths) > 0 {
		fmt.Fprintf(w, "paths: %s\n", textesc.String(strings.Join(in.Paths, " ")))
	}
	if in.URL != nil {
		fmt.Fprintf(w, "url: scheme=%s host=%s port=%d ip=%s class=%s\n", in.URL.Scheme, textesc.String(in.URL.Host), in.URL.Port, in.URL.IP, in.URL.Class)
	}
	fmt.Fprintln(w, "rules fired:")
	if len(fired) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, f := range fired {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

// writeParsed writes the commands the gate parsed out of a shell action.
func writeParsed(w io.Writer, p *shell.Analysis) {
	fmt.Fprintln(w, "parsed:")
	for _, c := range p.Commands {
		via := ""
		if len(c.Via) > 0 {
			via = " via " + strings.Join(c.Via, " > ")
		}
		fmt.Fprintf(w, "  [%d] %s%s\n", c.Depth, textesc.String(strings.Join(quoteArgs(c.Argv), " ")), via)
		if len(c.Paths) > 0 {
			fmt.Fprintf(w, "      paths: %s\n", textesc.String(strings.Join(c.Paths, " ")))
		}
		if len(c.Writes) > 0 {
			fmt.Fprintf(w, "      writes: %s\n", textesc.String(strings.Join(c.Writes, " ")))
		}
		for _, m := range c.Marks {
			fmt.Fprintf(w, "      mark: %s %s\n", m.Kind, textesc.String(m.Detail))
		}
	}
	if p.Dynamic {
		fmt.Fprintf(w, "  dynamic: %s\n", textesc.String(strings.Join(p.DynamicReasons, "; ")))
	}
	if p.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", textesc.String(p.Error))
	}
}

// quoteArgs quotes the arguments a shell would not read as one word.
func quoteArgs(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}~") {
			out[i] = fmt.Sprintf("%q", a)
		} else {
			out[i] = a
		}
	}
	return out
}
