package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

func newPluginCommand(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "plugin", Short: "Install, list, verify and remove external-process plugins"}
	c.AddCommand(newPluginListCommand(g, "list", "List the installed plugins, their tools and whether each is unchanged"),
		newPluginListCommand(g, "verify", "Check every installed plugin against its pins; exit 4 when one changed"),
		newPluginInstallCommand(g), newPluginRemoveCommand(g))
	return c
}

// pluginStore is the plugins directory of the configured claw home.
func pluginStore(g *globals) (runtime.PluginDir, error) {
	e, err := loadEnv(g)
	if err != nil {
		return runtime.PluginDir{}, err
	}
	return runtime.PluginStore(e.home), nil
}

func newPluginInstallCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "install PATH",
		Short: "Copy a plugin directory into claw's home and pin every file",
		Long: `Copy a plugin directory (manifest.toml and its programs) into
$CLAW_HOME/plugins and pin the SHA-256 of every file. Installing a plugin
of the same name again replaces it and its pins.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := pluginStore(g)
			if err != nil {
				return err
			}
			m, err := s.Install(args[0])
			if err != nil {
				return withCode(exitError, fmt.Errorf("installing %s: %w", args[0], err), "fix the plugin directory and install it again")
			}
			fmt.Fprintf(g.stdout, "installed %s %s (%d tools, pinned)\n", m.Name, m.Version, len(m.Tools))
			if e, err := loadEnv(g); err == nil {
				if problem, fix := runtime.PluginRunAsProblem(e.rt()); problem != "" {
					warnFix(g.stderr, problem, fix)
				}
			}
			return nil
		},
	}
}

func newPluginRemoveCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an installed plugin and its pins",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := pluginStore(g)
			if err != nil {
				return err
			}
			if err := s.Remove(args[0]); err != nil {
				return withCode(exitError, err, "see 'claw plugin list'")
			}
			fmt.Fprintf(g.stdout, "removed %s\n", args[0])
			return nil
		},
	}
}

func newPluginListCommand(g *globals, use, short string) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := pluginStore(g)
			if err != nil {
				return err
			}
			list, changed, err := runtime.PluginList(s)
			if err != nil {
				return err
			}
			if asJSON {
				if err := json.NewEncoder(g.stdout).Encode(list); err != nil {
					return err
				}
			} else {
				for _, p := range list {
					fmt.Fprintf(g.stdout, "%-20s %-10s %s\n", p.Name, p.Version, pluginLine(p))
				}
				if len(list) == 0 {
					fmt.Fprintln(g.stdout, "no plugins installed (claw plugin install PATH)")
				}
			}
			if use == "verify" && changed > 0 {
				return withCode(exitVerify, fmt.Errorf("%d plugin(s) changed since they were installed; their tools are disabled", changed), "review the files, then 'claw plugin install PATH' again")
			}
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

func pluginLine(p runtime.InstalledPlugin) string {
	if p.Status != runtime.PluginOK {
		return "DISABLED " + p.Status + ": " + strings.Join(p.Changed, ", ")
	}
	var tools []string
	for _, t := range p.Manifest.Tools {
		tools = append(tools, t.Name)
	}
	return "ok  tools: " + strings.Join(tools, ", ")
}
