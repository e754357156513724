package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawsec/claw/internal/runtime"

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
			infos := runtime.ListProviders(cfg, providerSpecs(cfg), os.Getenv)
			if asJSON {
				return writeConfigJSON(g, struct {
					Default   string                 `json:"default_provider"`
					Providers []runtime.ProviderInfo `json:"providers"`
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
			res, err := runtime.ProbeProvider(c.Context(), cfg, providerSpecs(cfg), name, timeout, os.Getenv)
			if err != nil {
				err = withCode(exitError, err, res.Hint)
			}
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
