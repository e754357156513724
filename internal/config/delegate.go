package config

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Delegate is the [delegate] table: the budget of a delegate call's claw
// sub-agent, and the external coding agents a delegate call may run
// ([delegate.external.NAME]).
type Delegate struct {
	// MaxTokens bounds the model tokens (input and output, as the
	// provider reports them) of one claw sub-agent run; 0 is no budget.
	MaxTokens int `toml:"max_tokens" json:"max_tokens"`
	// External are the [delegate.external.NAME] sections.
	External map[string]External `toml:"external" json:"external,omitempty"`
}

// External is one [delegate.external.NAME] table: an external coding
// agent (Claude Code: claude -p --output-format json) that a delegate
// call runs in claw's sandbox, in the workspace, with claw's hook
// installed in it.
type External struct {
	// Command is the agent's command line; the task is added as the last
	// argument.
	Command []string `toml:"command" json:"command"`
	// SettingsFlag passes the generated settings file (the hook), e.g.
	// "--settings".
	SettingsFlag string `toml:"settings_flag" json:"settings_flag"`
	// TurnsFlag, when set, passes MaxTurns, e.g. "--max-turns".
	TurnsFlag string `toml:"turns_flag" json:"turns_flag,omitempty"`
	MaxTurns  int    `toml:"max_turns" json:"max_turns,omitempty"`
	// Autonomy and ToolsAllow narrow the agent below the delegate call's
	// own (never wider).
	Autonomy   string   `toml:"autonomy" json:"autonomy,omitempty"`
	ToolsAllow []string `toml:"tools_allow" json:"tools_allow,omitempty"`
	// TrustTools names agent tools with no claw equivalent that the hook
	// allows (Claude Code's TodoWrite), as claw hook --trust-tool does.
	TrustTools []string `toml:"trust_tools" json:"trust_tools,omitempty"`
	// Timeout bounds the whole run (wall time); MaxOutput the bytes of its
	// answer kept.
	Timeout   Duration `toml:"timeout" json:"timeout"`
	MaxOutput int      `toml:"max_output" json:"max_output,omitempty"`
	// Hosts are the host:port destinations it may reach through claw's
	// egress proxy (its model API).
	Hosts []string `toml:"hosts" json:"hosts,omitempty"`
	// Env are variables set ("NAME=value") or passed ("NAME"); Secrets
	// name environment variables of claw whose values are passed under
	// the same name (its API key). Their values are never written
	// anywhere.
	Env     []string `toml:"env" json:"env,omitempty"`
	Secrets []string `toml:"secrets" json:"secrets,omitempty"`
}

// Defaults of an external agent's budget.
const (
	DefaultExternalTimeout   = 10 * time.Minute
	DefaultExternalMaxOutput = 64 << 10
)

func (s *source) validateDelegate(d *Delegate) {
	s.checkRange("delegate.max_tokens", d.MaxTokens, 0, 1<<40)
	for _, n := range slices.Sorted(maps.Keys(d.External)) {
		s.validateExternal(n, d.External[n])
	}
}

func (s *source) validateExternal(name string, x External) {
	base := joinKey(joinKey("delegate", "external"), name)
	key := func(k string) string { return joinKey(base, k) }
	if !providerShape.MatchString(name) {
		s.errAtKey(base, "agent name %q must be letters, digits, - and _", name)
	}
	if len(x.Command) == 0 || strings.TrimSpace(x.Command[0]) == "" {
		s.errAtKey(base, "external agent %s has no command; set command = [\"claude\", \"-p\", \"--output-format\", \"json\"]", name)
	}
	for i, a := range x.Command {
		if strings.IndexByte(a, 0) >= 0 {
			s.errAtVal(fmt.Sprintf("%s[%d]", key("command"), i), "must not contain a NUL byte")
		}
	}
	if x.SettingsFlag == "" || !strings.HasPrefix(x.SettingsFlag, "-") {
		s.errAtKey(base, "external agent %s needs settings_flag, the flag that passes the hook's settings file (Claude Code: \"--settings\")", name)
	}
	if x.TurnsFlag != "" && !strings.HasPrefix(x.TurnsFlag, "-") {
		s.errAtVal(key("turns_flag"), "%s is not a flag", show(key("turns_flag"), x.TurnsFlag))
	}
	s.checkRange(key("max_turns"), x.MaxTurns, 1, 1000)
	if s.has(key("autonomy")) && !slices.Contains(Autonomies, x.Autonomy) {
		s.errAtVal(key("autonomy"), "%s is not one of %s", show(key("autonomy"), x.Autonomy), strings.Join(Autonomies, ", "))
	}
	for i, t := range x.ToolsAllow {
		if !slices.Contains(ToolNames, t) {
			p := fmt.Sprintf("%s[%d]", key("tools_allow"), i)
			s.errAtVal(p, "%s is not a claw tool (%s)", show(p, t), strings.Join(ToolNames, ", "))
		}
	}
	for i, t := range x.TrustTools {
		if p := fmt.Sprintf("%s[%d]", key("trust_tools"), i); strings.TrimSpace(t) == "" || strings.HasPrefix(t, "mcp__") {
			s.errAtVal(p, "%s: name an agent tool claw has no equivalent for, like \"TodoWrite\" (MCP tools are judged by the gate)", show(p, t))
		}
	}
	s.checkDuration(key("timeout"), x.Timeout, maxShellTimeout)
	s.checkRange(key("max_output"), x.MaxOutput, 1<<10, 16<<20)
	for i, h := range x.Hosts {
		p := fmt.Sprintf("%s[%d]", key("hosts"), i)
		if host, port, err := net.SplitHostPort(h); err != nil || host == "" || !validPort(port) {
			s.errAtVal(p, "%s is not host:port, like \"api.anthropic.com:443\"", show(p, h))
		}
	}
	for i, e := range x.Env {
		name, _, _ := strings.Cut(e, "=")
		if !envNameShape.MatchString(name) {
			p := fmt.Sprintf("%s[%d]", key("env"), i)
			s.errAtVal(p, "%s is not NAME or NAME=value", show(p, name))
		}
	}
	for i, n := range x.Secrets {
		if !envNameShape.MatchString(n) {
			// Never echo it: a pasted key is the usual mistake.
			s.errAtVal(fmt.Sprintf("%s[%d]", key("secrets"), i), "must name an environment variable (like \"ANTHROPIC_API_KEY\"), not hold the key itself")
		}
	}
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
