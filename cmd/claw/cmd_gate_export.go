package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

const gateExportLong = `Write the policy set in force to DIR, so stock OPA tools work on it:

  DIR/policies/*.rego        the built-in policies and their tests
  DIR/user/*.rego            the user's policies and tests (the directory is
                             made even when there are none)
  DIR/data.json              the data document (data.claw.config)
  DIR/input.json             the input document of ACTION, when one is given

For example:
  claw gate export /tmp/p --action '{"tool":"shell","args":{"command":"ls"}}'
  opa eval -d /tmp/p/policies -d /tmp/p/user -d /tmp/p/data.json -i /tmp/p/input.json data.claw.gate.result
  opa test /tmp/p/policies

DIR must not exist yet.`

func newGateExportCommand(g *globals) *cobra.Command {
	o := &gateTestOptions{}
	c := &cobra.Command{
		Use:   "export DIR [--action JSON | TOOL ARG…]",
		Short: "Write the policies, data and an input for use with opa",
		Long:  gateExportLong,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runGateExport(c, g, o, args[0], args[1:])
		},
	}
	c.Flags().StringVar(&o.actionJSON, "action", "", "the action as JSON")
	addOldSpelling(c, &o.actionJSON, "json", "action")
	c.Flags().StringVar(&o.autonomy, "autonomy", "", "autonomy level for the input")
	c.Flags().StringVar(&o.workspace, "workspace", "", "workspace directory for the input")
	return c
}

func runGateExport(c *cobra.Command, g *globals, o *gateTestOptions, dir string, args []string) error {
	e, err := g.runtimeEnv()
	if err != nil {
		return err
	}
	return runtime.GateExport(c.Context(), e, dir, o.actionJSON, args, o.workspace, o.autonomy, func(p string) { fmt.Fprintln(g.stdout, p) })
}
