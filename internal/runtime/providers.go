package runtime

import (
	"sort"

	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/internal/config"
)

// ProviderSpecs turns the [providers.NAME] sections into the provider
// package's specs, sorted by name.
func ProviderSpecs(cfg *config.Config) []provider.Spec {
	names := make([]string, 0, len(cfg.Providers))
	for n := range cfg.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	specs := make([]provider.Spec, 0, len(names))
	for _, n := range names {
		p := cfg.Providers[n]
		specs = append(specs, provider.Spec{
			Name:             n,
			Kind:             p.Kind,
			BaseURL:          p.BaseURL,
			APIKeyEnv:        p.APIKeyEnv,
			Model:            p.Model,
			Timeout:          p.Timeout.Duration,
			MaxResponseBytes: int64(p.MaxResponseBytes),
			Script:           p.Script,
			Headers:          p.Headers,
			Fallbacks:        p.Fallbacks,
			Routes:           p.Routes,
			Default:          p.Default,
		})
	}
	return specs
}
