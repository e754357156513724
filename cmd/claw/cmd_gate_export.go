package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/policies"
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
	e, err := loadEnv(g)
	if err != nil {
		return err
	}
	eng, err := newEngine(c.Context(), e, policyFromConfig(e.cfg))
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return withCode(exitError, err, "give a directory that does not exist yet")
	}
	files := map[string][]byte{}
	mods, err := policies.Modules()
	if err != nil {
		return err
	}
	tests, err := policies.Tests()
	if err != nil {
		return err
	}
	for n, s := range mods {
		files["policies/"+n] = []byte(s)
	}
	for n, s := range tests {
		files["policies/"+n] = []byte(s)
	}
	for n, s := range eng.Modules() {
		if strings.HasPrefix(n, "user/") {
			files[n] = []byte(s)
		}
	}
	for n, s := range eng.UserTests() {
		files["user/"+n] = []byte(s)
	}
	data, err := json.MarshalIndent(eng.Data(), "", "  ")
	if err != nil {
		return err
	}
	files["data.json"] = data
	if o.actionJSON != "" || len(args) > 0 {
		action, err := actionFromArgs(o.actionJSON, args)
		if err != nil {
			return withCode(exitUsage, err)
		}
		gctx, err := gateContext(e, o)
		if err != nil {
			return err
		}
		in, err := json.MarshalIndent(gate.BuildInput(action, gctx), "", "  ")
		if err != nil {
			return err
		}
		files["input.json"] = in
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	// user/ is made even when there are no user policies, so the same
	// opa command line works with and without them.
	if err := os.Mkdir(filepath.Join(dir, "user"), 0o700); err != nil {
		return err
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n], 0o600); err != nil {
			return err
		}
		fmt.Fprintln(g.stdout, p)
	}
	return nil
}
