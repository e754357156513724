package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/redact"
	"github.com/spf13/cobra"
)

func newProviderCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "provider",
		Short: "List the configured model providers and test one",
		Long: `List the [providers.NAME] sections of the config, and test that one answers.

Keys are never shown: only the name of the environment variable that holds
each key, and whether it is set.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newProviderListCommand(g), newProviderTestCommand(g))
	return c
}

// providerInfo is one row of claw provider list.
type providerInfo struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Model     string   `json:"model,omitempty"`
	BaseURL   string   `json:"base_url,omitempty"`
	KeyEnv    string   `json:"api_key_env,omitempty"`
	KeySet    bool     `json:"api_key_set"`
	Default   bool     `json:"default"`
	Members   []string `json:"members,omitempty"`
	Usable    bool     `json:"usable"`
	Problem   string   `json:"problem,omitempty"`
	Network   bool     `json:"network"`
	Streaming bool     `json:"streaming"`
}

func newProviderListCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the configured providers, the default one, and whether each key is set",
		Long: `List every [providers.NAME] section: kind, model, base URL, the name of the
environment variable holding the key and whether it is set (never its
value), and which provider is the default. A provider that cannot be built
(its key is unset, a member is missing) is listed with the reason.

EXIT STATUS
  0 ok, 1 the config is invalid, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadUserConfig(g)
			if err != nil {
				return err
			}
			infos := listProviders(cfg, os.Getenv)
			if asJSON {
				return writeConfigJSON(g, struct {
					Default   string         `json:"default_provider"`
					Providers []providerInfo `json:"providers"`
				}{cfg.DefaultProvider, infos})
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tMODEL\tBASE URL\tKEY\tSTATUS")
			for _, p := range infos {
				name := p.Name
				if p.Default {
					name += " *"
				}
				key := "-"
				if p.KeyEnv != "" {
					key = "$" + p.KeyEnv + " (unset)"
					if p.KeySet {
						key = "$" + p.KeyEnv + " (set)"
					}
				}
				model := p.Model
				if len(p.Members) > 0 {
					model = strings.Join(p.Members, ",")
				}
				status := "ok"
				if !p.Usable {
					status = p.Problem
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", sanitize(name), sanitize(p.Kind), orDash(sanitize(model)),
					orDash(sanitize(p.BaseURL)), sanitize(key), sanitize(status))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if _, ok := cfg.Providers[cfg.DefaultProvider]; !ok {
				warnf(g.stderr, "default_provider %q is not a configured provider", cfg.DefaultProvider)
			}
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

// listProviders describes every configured provider, sorted by name,
// building each one to find out whether it is usable. Building makes no
// request.
func listProviders(cfg *config.Config, getenv func(string) string) []providerInfo {
	specs := providerSpecs(cfg)
	out := make([]providerInfo, 0, len(specs))
	for _, s := range specs {
		p := providerInfo{
			Name:    s.Name,
			Kind:    s.Kind,
			Model:   s.Model,
			BaseURL: redact.String(s.BaseURL), // a URL may carry a password
			KeyEnv:  s.APIKeyEnv,
			Default: s.Name == cfg.DefaultProvider,
		}
		if p.BaseURL == "" {
			switch s.Kind {
			case provider.KindOpenAI, "openai":
				p.BaseURL = provider.DefaultOpenAIBaseURL
			case provider.KindAnthropic:
				p.BaseURL = provider.DefaultAnthropicBaseURL
			}
		}
		if s.APIKeyEnv != "" {
			p.KeySet = getenv(s.APIKeyEnv) != ""
		}
		switch s.Kind {
		case provider.KindReliable:
			p.Members = s.Fallbacks
		case provider.KindRouter:
			p.Members = append([]string{s.Default}, sortedValues(s.Routes)...)
		}
		built, err := provider.Build(specs, s.Name, getenv, logx.Discard())
		if err != nil {
			p.Problem = redact.String(err.Error())
		} else {
			p.Usable = true
			caps := built.Capabilities()
			p.Network, p.Streaming = caps.Network, caps.Streaming
		}
		out = append(out, p)
	}
	return out
}

func sortedValues(m map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range sortedKeys(m) {
		if v := m[k]; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// probeResult is the outcome of claw provider test, in -o json form.
type probeResult struct {
	Provider  string `json:"provider"`
	OK        bool   `json:"ok"`
	LatencyMS int64  `json:"latency_ms"`
	Model     string `json:"model,omitempty"`
	Answered  string `json:"answered_by,omitempty"`
	Reply     string `json:"reply,omitempty"`
	Error     string `json:"error,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

func newProviderTestCommand(g *globals) *cobra.Command {
	var (
		asJSON  bool
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:         "test [NAME]",
		Annotations: map[string]string{argValuesAnnotation: "provider"},
		Short:       "Send one tiny chat request to a provider and report how it went",
		Long: `Send one small chat request ("Reply with the single word: ok") to the provider
NAME (default: default_provider) and print the latency and the first line of
the reply. This is a real round trip: it costs one request, or up to three
when the server answers 429 or 5xx and asks for a wait of 10 s or less (the
client retries then, as it does for the agent).

A failure is explained: a rejected key (401/403), rate limiting (429, with
the retry-after the server asked for), a timeout, a malformed answer, or an
unreachable endpoint (connection refused, DNS). The key itself is never
printed.

EXIT STATUS
  0 the provider answered, 1 it did not (or the config is invalid), 2 usage.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := loadUserConfig(g)
			if err != nil {
				return err
			}
			name := cfg.DefaultProvider
			if len(args) == 1 {
				name = args[0]
			}
			res, err := probeProvider(c.Context(), cfg, name, timeout, os.Getenv)
			if asJSON {
				if jerr := writeConfigJSON(g, res); jerr != nil {
					return jerr
				}
				if err != nil {
					return silentExit(exitCodeOf(err))
				}
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "ok: %s answered in %d ms", sanitize(res.Provider), res.LatencyMS)
			if res.Model != "" {
				fmt.Fprintf(g.stdout, " (model %s)", sanitize(res.Model))
			}
			if res.Answered != "" && res.Answered != res.Provider {
				fmt.Fprintf(g.stdout, " through %s", sanitize(res.Answered))
			}
			fmt.Fprintln(g.stdout)
			fmt.Fprintf(g.stdout, "reply: %s\n", sanitize(res.Reply))
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	c.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up after this long")
	return c
}

// probeProvider builds provider name and makes one small round trip. The
// error carries the exit code and a hint; res is filled either way.
func probeProvider(ctx context.Context, cfg *config.Config, name string, timeout time.Duration, getenv func(string) string) (probeResult, error) {
	res := probeResult{Provider: name}
	fail := func(err error, hints ...string) (probeResult, error) {
		// Provider errors never carry the key; redact anyway, in case a
		// server echoed some other credential.
		res.Error = redact.String(err.Error())
		if len(hints) > 0 {
			res.Hint = hints[0]
		}
		return res, withCode(exitError, errors.New(res.Error), hints...)
	}
	if _, ok := cfg.Providers[name]; !ok {
		return fail(fmt.Errorf("no provider %q in the config", name), "configured: "+strings.Join(sortedKeys(cfg.Providers), ", ")+" (see 'claw provider list')")
	}
	p, err := provider.Build(providerSpecs(cfg), name, getenv, logx.Discard())
	if err != nil {
		if h := provider.Hint(err); h != "" {
			return fail(err, h)
		}
		return fail(err, "see 'claw config validate' and 'claw provider list'")
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	resp, err := provider.Probe(ctx, p)
	res.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, provider.ErrTimeout) {
			err = fmt.Errorf("provider %q: %w after %s", name, provider.ErrTimeout, timeout)
		}
		return fail(err, probeHint(err))
	}
	res.OK = true
	res.Model = resp.Model
	res.Answered = resp.Provider
	reply, _, _ := strings.Cut(strings.TrimSpace(resp.Text), "\n")
	if len(resp.ToolCalls) > 0 && reply == "" {
		reply = fmt.Sprintf("(%d tool call(s))", len(resp.ToolCalls))
	}
	if len(reply) > 200 {
		reply = reply[:200] + "…"
	}
	res.Reply = reply
	return res, nil
}

// probeHint is provider.Hint, with a fallback for errors it has nothing
// specific to say about.
func probeHint(err error) string {
	if h := provider.Hint(err); h != "" {
		return h
	}
	if strings.Contains(err.Error(), "connection refused") {
		return "the endpoint is unreachable: check base_url and that the server is running"
	}
	return "check the provider's kind, base_url and model with 'claw provider list'"
}
