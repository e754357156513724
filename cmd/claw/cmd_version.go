package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

// version is set by the linker (-X main.version=...) in release builds.
var version = "dev"

func newVersionCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of claw",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			info := versionInfo()
			if asJSON {
				return json.NewEncoder(g.stdout).Encode(info)
			}
			fmt.Fprintln(g.stdout, versionLine(info))
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

// versionInfo describes this build.
func versionInfo() map[string]string { return runtime.BuildInfo(version) }

// versionLine is what claw version and claw --version print.
func versionLine(info map[string]string) string {
	return fmt.Sprintf("claw %s (%s %s/%s)", info["version"], info["go"], info["os"], info["arch"])
}
