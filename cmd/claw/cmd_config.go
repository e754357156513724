package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/runtime"
)

func newConfigCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Validate or show the configuration",
		Long: `Validate or show the configuration, HOME/config.toml unless --config names
another file.

EXIT STATUS
  0 ok, 1 the config is invalid or cannot be read, 2 usage.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return withCode(exitUsage, fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), "see 'claw config --help'")
			}
			return withCode(exitUsage, errors.New("missing subcommand: validate or show"), "see 'claw config --help'")
		},
	}
	c.AddCommand(newConfigValidateCommand(g), newConfigShowCommand(g))
	return c
}

func newConfigValidateCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "validate",
		Short: "Check the config file and report every problem in it",
		Long: `Check the config file strictly: syntax, unknown keys, types, allowed values,
paths and their expansion. Every problem is reported at once, one per line,
as FILE:LINE:COL: KEY: MESSAGE. With -o json, prints
{"valid":BOOL,"file":F,"errors":[{"file","line","col","key","message"}]}.

EXIT STATUS
  0 valid, 1 invalid or unreadable (an invalid config is not a usage error
  of this command), 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			home, path, err := configPaths(g)
			if err != nil {
				return err
			}
			cfg, errs, err := runtime.CheckConfigFile(home, path)
			switch {
			case err != nil:
				return err
			case errs != nil && asJSON:
				if err := writeConfigJSON(g, map[string]any{"valid": false, "file": path, "errors": errs.List}); err != nil {
					return err
				}
				return silentExit(exitError)
			case errs != nil:
				return runtime.InvalidConfig(path, errs, problemLines(g))
			}
			for _, w := range cfg.Warnings {
				warnf(g.stderr, "%s", w)
			}
			if asJSON {
				return writeConfigJSON(g, map[string]any{"valid": true, "file": path, "errors": []*config.Error{}})
			}
			fmt.Fprintf(g.stdout, "ok: %s\n", path)
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

func newConfigShowCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration with secrets masked",
		Long: `Print the effective configuration: the config file with the defaults of
absent keys applied and paths expanded, as TOML (or JSON with -o json).
Secrets (the passphrase hash, anything that looks like a credential) are
masked. Without a config file, prints the defaults and says so on stderr.

EXIT STATUS
  0 ok, 1 the config is invalid or cannot be read, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := loadUserConfig(g)
			if err != nil {
				return err
			}
			m := cfg.Masked()
			if asJSON {
				return writeConfigJSON(g, m)
			}
			return m.WriteTOML(g.stdout)
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

// configPaths resolves the claw home and the config file from --home,
// --config and $CLAW_HOME.
func configPaths(g *globals) (home, path string, err error) {
	return runtime.ConfigPaths(g.home, g.config)
}

// loadUserConfig is the effective config for commands that act on it: the
// config file, or the defaults with a note on stderr when there is none.
// Problems in the file are printed one per line and end the command with
// exit status 1.
func loadUserConfig(g *globals) (*config.Config, error) {
	home, path, err := configPaths(g)
	if err != nil {
		return nil, err
	}
	cfg, missing, err := runtime.LoadConfig(home, path, problemLines(g))
	if err != nil {
		return nil, err
	}
	if missing {
		infof(g.stderr, "no config file at %s; using the defaults (create one with 'claw init')", path)
	}
	for _, w := range cfg.Warnings {
		warnf(g.stderr, "%s", w)
	}
	return cfg, nil
}

// problemLines prints the problems of a config file on stderr, one per
// line.
func problemLines(g *globals) func(string) {
	return func(l string) { fmt.Fprintln(g.stderr, l) }
}

func writeConfigJSON(g *globals, v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
