package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set by the linker (-X main.version=...) in release builds.
var version = "dev"

func init() { registerCommand("version", newVersionCommand) }

func newVersionCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version of claw",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			info := map[string]string{"version": version, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						info["revision"] = s.Value
					}
				}
			}
			if asJSON {
				return json.NewEncoder(g.stdout).Encode(info)
			}
			fmt.Fprintf(g.stdout, "claw %s (%s %s/%s)\n", info["version"], info["go"], info["os"], info["arch"])
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}
