package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/plugin"
	"github.com/clawsec/claw/internal/redact"
	"github.com/clawsec/claw/internal/toolkind"
)

// Agent is everything one channel's agent needs: the broker (the
// one path), the provider, the memory store and the loop.
type Agent struct {
	Agent *agent.Agent
	// Autonomous is the agent of autonomous runs in the daemon: Agent's
	// tools and yield_to_user (AgentOptions.autonomousAgent), or nil.
	Autonomous *agent.Agent
	Broker     *broker.Broker
	Memory     *memory.Store
	Provider   provider.Provider
	Env        *Env
	Redact     func(string) string
	Channel    string
	Autonomy   string
	Work       string // the canonical workspace
	model      string // the model asked of Provider ("": its default)

	closers []func()
}

// Close releases the memory store and writes the receipt log's final
// checkpoint.
func (rt *Agent) Close() error {
	for i := len(rt.closers) - 1; i >= 0; i-- {
		rt.closers[i]()
	}
	rt.closers = nil
	return nil
}

// AgentOptions adjust a runtime for its channel.
type AgentOptions struct {
	// AskUser answers the ask_user tool; nil removes the tool.
	AskUser func(ctx context.Context, question string) (string, error)
	// OnDecision is told each gate decision's latency.
	OnDecision func(time.Duration)
	// Log receives the structured events; nil means the CLAW_LOG logger
	// (startLogger).
	Log *slog.Logger
	// Autonomous offers the yield_to_user tool (claw agent --autonomous).
	Autonomous bool
	// AutonomousAgent builds Agent.Autonomous besides Agent, whose
	// catalog stays without yield_to_user (claw serve).
	AutonomousAgent bool
	// Prestart keeps a sandbox child started ahead of the next action
	// (long-lived channels: the REPL and the daemon).
	Prestart bool
}

// NewAgent opens config, gate, receipts, broker (with the given
// approver; nil means nobody can be asked), provider and memory for a
// channel ("cli", "serve", …).
func NewAgent(ctx context.Context, s Setup, channel string, approver broker.Approver, opts ...func(*AgentOptions)) (*Agent, error) {
	var ro AgentOptions
	for _, f := range opts {
		f(&ro)
	}
	rt := &Agent{Channel: channel}
	fail := func(err error) (*Agent, error) {
		rt.Close()
		return nil, err
	}
	if ro.Prestart {
		executor.Prestart()
		rt.closers = append(rt.closers, executor.StopPrestart)
	}
	var store *memory.Store
	b, closeBroker, err := OpenBroker(ctx, s, func(c *broker.Config, e *Env) {
		rt.Env = e
		if ro.Log == nil {
			ro.Log = startLogger(s.LogTo, e, s.Version)
		}
		c.Channel = channel
		if _, started := config.ChannelKeys[channel]; started {
			// a channel claw serve starts: its section's autonomy and
			// tools_allow bind the broker too, not only the model's catalog
			ch := e.Config.Channels[channel]
			c.Autonomy = channelAutonomy(c.Autonomy, ch.Autonomy, s.Actions.Autonomy != "")
			c.ToolsAllow = ch.ToolsAllow
		}
		c.Logger = ro.Log
		c.OnDecision = ro.OnDecision
		c.Approver = approver
		// The passphrase is asked by the channel's approver when it can
		// (the REPL, without echo, through its own reader); never by a
		// terminal read the channel does not own (a daemon's).
		c.Passphrase = nil
		if pa, ok := approver.(broker.PassphraseAsker); ok {
			c.Passphrase = pa
		}
		rt.Redact = KeyRedactor(e)
		c.Redact = rt.Redact
		rt.Autonomy, rt.Work = c.Autonomy, c.Workspace
		c.Sandbox.ToolTimeouts = toolTimeouts(e.Config, s.Actions.Timeout)
		if c.InProcess == nil {
			c.InProcess = map[toolkind.Kind]broker.ToolFunc{}
		}
		c.InProcess[toolkind.Time] = timeTool
		c.InProcess[toolkind.MemorySearch] = func(ctx context.Context, args map[string]any) (json.RawMessage, error) {
			if store == nil {
				return nil, errors.New("memory is not open")
			}
			return memorySearchTool(ctx, store, args)
		}
		if ro.Autonomous || ro.AutonomousAgent {
			c.InProcess[tool.YieldToUser.Name] = yieldTool
		}
		c.InProcess["delegate"] = delegateTool(rt, c, ro.Log)
		if ro.AskUser != nil {
			c.InProcess["ask_user"] = func(ctx context.Context, args map[string]any) (json.RawMessage, error) {
				q, _ := args["question"].(string)
				ans, err := ro.AskUser(ctx, q)
				if err != nil {
					return nil, err
				}
				return json.Marshal(map[string]string{"answer": ans})
			}
		}
	})
	if err != nil {
		return nil, err
	}
	rt.Broker = b
	rt.closers = append(rt.closers, closeBroker)
	e := rt.Env
	cfg := e.Config

	dbPath := cfg.Agent.MemoryDB
	store, err = memory.Open(dbPath, memory.WithRedactor(rt.Redact), memory.WithSecretFields(redact.SecretField))
	if err != nil {
		return fail(WithCode(ExitError, fmt.Errorf("opening the memory database: %w", err), "check [agent].memory_db in the config"))
	}
	rt.Memory = store
	rt.closers = append(rt.closers, func() { store.Close() })

	name := cfg.DefaultProvider
	p, err := provider.Build(ProviderSpecs(cfg), name, os.Getenv, ro.Log)
	if err != nil {
		return fail(WithCode(ExitError, fmt.Errorf("provider %q: %w", name, err), "see 'claw provider list', and set the key's environment variable"))
	}
	rt.Provider = p
	ro.Log.Info("provider selected", "event", "provider_selected", "provider", p.Name())

	var allow []string
	if ch, ok := cfg.Channels[channel]; ok && ch.ToolsAllow != nil {
		allow = ch.ToolsAllow
	}
	tools, err := tool.Select(allow)
	if err != nil {
		return fail(WithCode(ExitError, err, "fix [channels."+channel+"].tools_allow in the config"))
	}
	if ro.AskUser == nil {
		tools = withoutTool(tools, "ask_user")
	}
	if ro.Autonomous {
		tools = append(tools, tool.YieldToUser)
	}
	tools = WithPlugins(tools, PluginStore(e.Home))
	soul := ""
	if cfg.Agent.Soul != "" {
		if b, err := ReadBounded(cfg.Agent.Soul, 64<<10); err == nil {
			soul = string(b)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fail(WithCode(ExitError, fmt.Errorf("reading the soul file: %w", err), "fix or remove "+cfg.Agent.Soul))
		}
	}
	model := cfg.DefaultModel
	if model == "mock" {
		model = ""
	}
	rt.model = model
	acfg := agent.Config{
		Provider:         p,
		Memory:           store,
		Invoker:          b.Agent(),
		Tools:            tools,
		Channel:          channel,
		Model:            model,
		Soul:             soul,
		Policy:           PolicySummary(rt.Autonomy, rt.Work),
		MaxToolRounds:    cfg.Agent.MaxToolRounds,
		MaxResponseBytes: cfg.Agent.MaxResponseBytes,
		HistoryMessages:  cfg.Agent.HistoryMessages,
		HistoryBudget:    cfg.Agent.HistoryBudget,
		Log:              ro.Log,
	}
	ag, err := agent.New(acfg)
	if err != nil {
		return fail(err)
	}
	rt.Agent = ag
	if ro.AutonomousAgent {
		acfg.Tools = append(slices.Clone(tools), tool.YieldToUser)
		if rt.Autonomous, err = agent.New(acfg); err != nil {
			return fail(err)
		}
	}
	ro.Log.Info("channel started", logx.Event(logx.EventChannelStarted), slog.String("channel", channel),
		slog.String("autonomy", rt.Autonomy), slog.Int("tools", len(tools)))
	return rt, nil
}

// toolTimeouts is each tool's wall timeout: [agent] shell_timeout,
// http_timeout and tool_timeout (the others), or the --timeout given on
// the command line instead of all three; ask_user waits for a person as
// long as an approval does.
func toolTimeouts(cfg *config.Config, flag time.Duration) map[string]time.Duration {
	ag := cfg.Agent
	shell, http, other := ag.ShellTimeout.Duration, ag.HTTPTimeout.Duration, ag.ToolTimeout.Duration
	if flag > 0 {
		shell, http, other = flag, flag, flag
	}
	m := map[string]time.Duration{"shell": shell, "http": http, "ask_user": cfg.Security.ApprovalTimeout.Duration,
		"delegate": delegateTimeout(flag)}
	for _, t := range tool.Names() {
		if _, ok := m[t]; !ok {
			m[t] = other
		}
	}
	return m
}

// PolicySummary tells the model (and the /policy command) the rules of
// the road.
func PolicySummary(autonomy, workspace string) string {
	var how string
	switch autonomy {
	case "readonly":
		how = "read-only: only low-risk reads are allowed; everything else is denied"
	case "full":
		how = "full: allowed actions run without asking; denials still apply"
	default:
		how = "supervised: reads in the workspace run; writes, commands and network need the user's approval"
	}
	return fmt.Sprintf("Autonomy: %s.\nWorkspace: %s (tools work inside it; paths outside it are denied unless configured).", how, workspace)
}

// KeyRedactor removes the values of the configured providers' keys and
// channels' tokens, and everything broker.Redact knows, from text.
func KeyRedactor(e *Env) func(string) string {
	var vals []string
	names := []string{}
	for _, p := range e.Config.Providers {
		names = append(names, p.APIKeyEnv)
	}
	for _, ch := range e.Config.Channels {
		names = append(names, ch.TokenEnv)
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if v := os.Getenv(n); len(v) >= 8 {
			vals = append(vals, v)
		}
	}
	return func(s string) string {
		for _, v := range vals {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
		return broker.Redact(s)
	}
}

func withoutTool(tools []tool.Spec, name toolkind.Kind) []tool.Spec {
	out := tools[:0:0]
	for _, t := range tools {
		if t.Name != name {
			out = append(out, t)
		}
	}
	return out
}

// timeTool is the time tool: it needs no sandbox.
func timeTool(ctx context.Context, _ map[string]any) (json.RawMessage, error) {
	now := time.Now()
	return json.Marshal(map[string]string{
		"utc":   now.UTC().Format(time.RFC3339),
		"local": now.Format(time.RFC3339),
		"zone":  now.Format("MST"),
	})
}

// memorySearchTool searches the memory database, which belongs to the
// broker's side (the model only sees hits).
func memorySearchTool(ctx context.Context, st *memory.Store, args map[string]any) (json.RawMessage, error) {
	q, _ := args["query"].(string)
	hits, err := st.Search(ctx, q, 10)
	if err != nil {
		return nil, err
	}
	type hit struct {
		Conversation string `json:"conversation"`
		Role         string `json:"role"`
		When         string `json:"when"`
		Snippet      string `json:"snippet"`
	}
	out := []hit{}
	for _, h := range hits {
		out = append(out, hit{h.Message.ConversationID, string(h.Message.Role), h.Message.CreatedAt.UTC().Format(time.RFC3339), h.Snippet})
	}
	return json.Marshal(map[string]any{"hits": out})
}

// ReadBounded reads at most max bytes of a file; larger is an error.
func ReadBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}

// channelAutonomy is a started channel's autonomy: its section's when
// set, else the daemon's; a --autonomy given on the command line may
// lower it, never raise it.
func channelAutonomy(daemon, section string, flag bool) string {
	if section == "" {
		return daemon
	}
	if flag && slices.Index(config.Autonomies, daemon) < slices.Index(config.Autonomies, section) {
		return daemon
	}
	return section
}

// yieldTool runs yield_to_user: it does nothing but answer; the run sees
// the call succeed and rests.
func yieldTool(_ context.Context, args map[string]any) (json.RawMessage, error) {
	reason, _ := args["reason"].(string)
	return json.Marshal(map[string]any{"yielded": true, "reason": reason})
}

// WithPlugins gives the model's plugin tool a description that lists the
// installed, unchanged plugin tools and their schemas, or drops it when
// there are none.
func WithPlugins(tools []tool.Spec, s plugin.Store) []tool.Spec {
	catalog := PluginCatalog(s)
	if catalog == "" {
		return withoutTool(tools, "plugin")
	}
	out := append([]tool.Spec(nil), tools...)
	for i := range out {
		if out[i].Name == "plugin" {
			out[i].Description += " Installed:" + catalog
		}
	}
	return out
}

// AutonomousBounds are the intervals and bounds of [autonomous], with
// estopped as the run's emergency stop.
func (rt *Agent) AutonomousBounds(estopped func() bool) agent.Autonomous {
	a := rt.Env.Config.Autonomous
	return agent.Autonomous{
		Intervals: agent.Intervals{Engaged: a.Engaged.Duration, Working: a.Working.Duration,
			Foraging: a.Foraging.Duration, Resting: a.Resting.Duration},
		MaxTurns: a.MaxTurns, MaxToolCalls: a.MaxToolCalls, MaxTokens: a.MaxTokens,
		MaxErrors: a.MaxErrors, Backoff: a.Backoff.Duration,
		Estopped: estopped,
	}
}
