package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

func newToolCommand(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "tool", Short: "List and run the tools agents use"}
	c.AddCommand(newToolListCommand(g), newToolRunCommand(g))
	return c
}

func newToolListCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the tools and their arguments",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			home := "" // no plugin tools without a config
			if e, err := loadEnv(g); err == nil {
				home = e.home
			}
			rows := runtime.ToolList(home)
			if asJSON {
				return json.NewEncoder(g.stdout).Encode(rows)
			}
			for _, r := range rows {
				args := strings.Join(r.Required, " ")
				if len(r.Optional) > 0 {
					args += " [" + strings.Join(r.Optional, " ") + "]"
				}
				note := ""
				if !r.Runs {
					note = " (decided by the gate; runs in the agent)"
				}
				fmt.Fprintf(g.stdout, "%-14s %-7s %-28s %s%s\n", r.Name, r.Risk, args, r.Description, note)
			}
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

func newToolRunCommand(g *globals) *cobra.Command {
	o := &actionOptions{}
	var argsJSON string
	c := &cobra.Command{
		Use:         "run NAME --args JSON",
		Annotations: map[string]string{argValuesAnnotation: "tool"},
		Short:       "Run one tool call through the gate, the sandbox and the receipts",
		Long: `Run one tool call exactly as an agent's call would run: gate, receipts,
approval on a terminal, sandbox. The result is printed as JSON.

  claw tool run file_read --args '{"path":"README.md"}'

EXIT STATUS
  0 the tool succeeded, 1 it failed (the JSON says why), 3 denied, 6 needs
  approval and there is no terminal, 5 sandbox unavailable, 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			a, err := runtime.ToolAction(args[0], argsJSON)
			if err != nil {
				return err
			}
			b, closeLog, err := openBroker(c.Context(), g, o)
			if err != nil {
				return err
			}
			defer closeLog()
			out, err := b.Invoke(c.Context(), a, "")
			result := runtime.ToolResult(args[0], out)
			if result == nil {
				return outcomeExit(g, out, err, true)
			}
			enc := json.NewEncoder(g.stdout)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(result); err != nil {
				return err
			}
			if out.Status != runtime.StatusOK {
				return silentExit(exitError)
			}
			return nil
		},
	}
	o.addFlags(c.Flags())
	o.keys.addFlags(c)
	c.Flags().StringVar(&argsJSON, "args", "", "the tool's arguments as a JSON object")
	addOldSpelling(c, &argsJSON, "json", "args")
	return c
}
