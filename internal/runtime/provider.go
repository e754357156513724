package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/textesc"

	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/redact"
)

// ProviderInfo is one row of claw provider list.
type ProviderInfo struct {
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

// ListProviders describes every configured provider (specs, made from
// cfg), sorted by name,
// building each one to find out whether it is usable. Building makes no
// request.
func ListProviders(cfg *config.Config, specs []provider.Spec, getenv func(string) string) []ProviderInfo {
	out := make([]ProviderInfo, 0, len(specs))
	for _, s := range specs {
		p := ProviderInfo{
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
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if v := m[k]; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// ProbeResult is the outcome of claw provider test, in -o json form.
type ProbeResult struct {
	Provider  string `json:"provider"`
	OK        bool   `json:"ok"`
	LatencyMS int64  `json:"latency_ms"`
	Model     string `json:"model,omitempty"`
	Answered  string `json:"answered_by,omitempty"`
	Reply     string `json:"reply,omitempty"`
	Error     string `json:"error,omitempty"`
	Hint      string `json:"hint,omitempty"`
}

// ProbeProvider builds provider name (from specs, made from cfg) and
// makes one small round trip. On failure the error is res.Error and
// res.Hint says what to do; res is filled either way.
func ProbeProvider(ctx context.Context, cfg *config.Config, specs []provider.Spec, name string, timeout time.Duration, getenv func(string) string) (ProbeResult, error) {
	res := ProbeResult{Provider: name}
	fail := func(err error, hint string) (ProbeResult, error) {
		// Provider errors never carry the key; redact anyway, in case a
		// server echoed some other credential.
		res.Error = redact.String(err.Error())
		res.Hint = hint
		return res, errors.New(res.Error)
	}
	if _, ok := cfg.Providers[name]; !ok {
		return fail(fmt.Errorf("no provider %q in the config", name), "configured: "+strings.Join(slices.Sorted(maps.Keys(cfg.Providers)), ", ")+" (see 'claw provider list')")
	}
	p, err := provider.Build(specs, name, getenv, logx.Discard())
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
	res.Reply = textesc.Cut(reply, 200+len("…"), "…")
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
