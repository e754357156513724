package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
)

// PluginCall is a plugin tool as the plugins directory resolved it for one
// call (see Config.Plugins).
type PluginCall struct {
	// Info is what the policies see: Status "ok" or why it cannot run.
	Info gate.PluginInfo
	// Dir is the installed plugin directory, granted read-only; Argv the
	// absolute command inside it.
	Dir  string
	Argv []string
	// Read and Write are the reach the manifest declares, as written
	// there; the gate canonicalises and judges them.
	Read, Write []string
	// Hosts are the declared network destinations (host:port); the gate
	// judges them like a shell command's and the plugin reaches the ones
	// its decision plans, through the egress proxy.
	Hosts []string
	// Timeout is the tool's own timeout; 0 takes the sandbox's.
	Timeout time.Duration
	// Digest identifies the plugin's files as they were checked; the
	// plugin is checked again right before it runs (after any approval)
	// and must still have the same.
	Digest string
}

// PluginResolver looks up a plugin tool, verifies the plugin against its
// pins, and checks args against the tool's schema.
type PluginResolver func(plugin, tool string, args map[string]any) PluginCall

// Bounds of a plugin call: its JSON on stdin and on stdout.
const (
	MaxPluginInput  = 1 << 20
	MaxPluginOutput = 1 << 20
)

// resolvePlugin looks the plugin of a "plugin" action up and adds what it
// found to the gate's input.
func (b *Broker) resolvePlugin(a gate.Action, in *gate.Input) PluginCall {
	return ResolvePlugin(b.cfg.Plugins, a, in)
}

// ResolvePlugin looks the plugin of a "plugin" action up with plugins
// (nil: no plugins directory) and adds what it found, its status and the
// reach its manifest declares, to the gate's input: what the broker does
// before it decides, and what a dry run must do to decide the same.
func ResolvePlugin(plugins PluginResolver, a gate.Action, in *gate.Input) PluginCall {
	name, _ := a.Args["plugin"].(string)
	tool, _ := a.Args["tool"].(string)
	pc := PluginCall{Info: gate.PluginInfo{Name: name, Tool: tool, Status: "unresolved", Detail: "no plugins directory is configured"}}
	if plugins != nil && len(in.Errors) == 0 {
		args, _ := a.Args["args"].(map[string]any)
		pc = plugins(name, tool, args)
		pc.Info.Name, pc.Info.Tool = name, tool
	}
	in.SetPlugin(pc.Info, pc.Read, pc.Write, pc.Hosts)
	return pc
}

// pluginSpec runs the plugin's command with its arguments as JSON on
// stdin, in its own read-only directory, with the reach it declared that
// the decision also grants, and network only to the hosts the decision
// plans, through the egress proxy.
func (b *Broker) pluginSpec(a gate.Action, in *gate.Input, d gate.Decision, pc PluginCall) (executor.Spec, error) {
	spec := b.baseSpec(toolkind.Plugin, in, d)
	if pc.Info.Status != "ok" || len(pc.Argv) == 0 {
		return spec, errors.New("plugin call without a resolved plugin")
	}
	args, _ := a.Args["args"].(map[string]any)
	if again := b.cfg.Plugins(pc.Info.Name, pc.Info.Tool, args); again.Info.Status != "ok" || again.Digest != pc.Digest || !slices.Equal(again.Argv, pc.Argv) {
		return spec, errors.New("the plugin changed after the gate decided; it did not run")
	}
	input := a.Args["args"]
	if input == nil {
		input = map[string]any{}
	}
	stdin, err := json.Marshal(input)
	if err != nil {
		return spec, fmt.Errorf("plugin arguments: %w", err)
	}
	if len(stdin) > MaxPluginInput {
		return spec, fmt.Errorf("plugin arguments larger than %d bytes", MaxPluginInput)
	}
	writes := map[string]bool{}
	for _, w := range in.Writes {
		writes[w] = true
	}
	var read, write []string
	for _, p := range in.Paths {
		if writes[p] {
			if covered(p, d.Sandbox.Write) {
				write = append(write, p)
			}
		} else if covered(p, d.Sandbox.Read) {
			read = append(read, p)
		}
	}
	spec.Tool, spec.Argv, spec.Stdin = executor.ToolShell, pc.Argv, stdin
	spec.Cwd = pc.Dir
	spec.Read = append([]string{pc.Dir}, read...)
	spec.Write = write
	spec.Net = executor.Net{}
	if len(d.Sandbox.Network.Hosts) > 0 {
		spec.Net.Egress = b.egressGrant(d)
	}
	spec.MaxOutput = MaxPluginOutput
	if pc.Timeout > 0 {
		spec.Timeout = pc.Timeout
	}
	return spec, nil
}

// covered reports whether p is one of roots or lies below one.
func covered(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// pluginResult turns a plugin's run into a tool result: its stdout must be
// one JSON value, whole; a non-zero exit is a failure with its stderr.
func pluginResult(res *executor.Result) {
	switch {
	case res.TimedOut || res.Signal != "":
		return
	case res.ExitCode != 0:
		res.Tool = &executor.ToolResult{Error: fmt.Sprintf("plugin exited %d: %s", res.ExitCode, clip(strings.TrimSpace(string(res.Stderr)), 512))}
	case res.StdoutTruncated:
		res.Tool = &executor.ToolResult{Error: fmt.Sprintf("plugin output larger than %d bytes", MaxPluginOutput)}
	case !json.Valid(res.Stdout):
		res.Tool = &executor.ToolResult{Error: "plugin output is not JSON"}
	default:
		res.Tool = &executor.ToolResult{Payload: res.Stdout}
	}
}

// DelegateHosts returns the host:port destinations the external agent
// agent reaches ([delegate.external.NAME] hosts); none for an agent that
// is not configured.
type DelegateHosts func(agent string) []string

// ResolveDelegate adds the hosts of the external agent a "delegate"
// action names to the gate's input, as destinations that send data: the
// task and the workspace's contents go to them. What the broker does
// before it decides, and what a dry run must do to decide the same.
func ResolveDelegate(hosts DelegateHosts, a gate.Action, in *gate.Input) {
	agent, _ := a.Args["agent"].(string)
	if agent == "" || hosts == nil || len(in.Errors) > 0 {
		return
	}
	in.AddHosts(agent, "delegate", hosts(agent))
}
