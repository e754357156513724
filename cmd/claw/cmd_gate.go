package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/textesc"
)

func newGateCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "gate",
		Short: "Dry-run and test the policy gate",
	}
	c.AddCommand(newGateTestCommand(g), newGateExportCommand(g), newGateReplayCommand(g))
	return c
}

type gateTestOptions struct {
	autonomy    string
	workspace   string
	cwd         string
	explain     bool
	output      string
	actionJSON  string
	cases       string
	rego        bool
	bypassSuite bool
	verbose     bool
	noDaemon    bool
}

const gateTestLong = `Ask the gate what it would decide for an action, without running anything.

The action is given as a tool and its arguments:
  claw gate test shell 'rm -rf /'
  claw gate test file_read ~/.ssh/id_rsa
  claw gate test http https://example.com/ GET
or as JSON:
  claw gate test --action '{"tool":"shell","args":{"command":"ls"}}'

Positional arguments map to the tool's arguments in order: shell COMMAND…
(joined with spaces), file_read PATH, file_list PATH, file_write PATH
CONTENT, edit_file PATH OLD NEW, http URL [METHOD], time, memory_search
QUERY, tool SERVER NAME [ARGS-JSON], plugin PLUGIN TOOL [ARGS-JSON] (decided
with the installed plugin's declared reach, as when it runs).

--cases FILE runs a table of expectations (JSON lines or a YAML list of
{name, action, autonomy, workspace, config, expect, rules}) and prints
"N passed, N failed". --rego runs the Rego unit tests of the built-in and
user policies. --bypass-suite runs the corpus of attacks and benign
look-alikes shipped inside claw against the policies in force.

When a claw serve of the same user, config and user policies is running,
it decides a single action with the policies it has compiled (the same
output, without compiling them again; nothing is recorded); otherwise, or
with --no-daemon, the action is decided in this process.

EXIT STATUS
  0 allow (or every case and test passed), 3 deny, 6 ask or passphrase,
  2 usage or malformed action, 1 error or any failed case or test.`

func newGateTestCommand(g *globals) *cobra.Command {
	o := &gateTestOptions{}
	c := &cobra.Command{
		Use:         "test [flags] (--action JSON | TOOL [ARG…] | --cases FILE | --rego | --bypass-suite)",
		Annotations: map[string]string{argValuesAnnotation: "tool"},
		Short:       "Show the decision for an action without running it",
		Long:        gateTestLong,
		RunE: func(c *cobra.Command, args []string) error {
			return runGateTest(c.Context(), g, o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.autonomy, "autonomy", "", "autonomy level: readonly, supervised or full (default from config)")
	f.StringVar(&o.workspace, "workspace", "", "workspace directory (default from config)")
	f.StringVar(&o.cwd, "cwd", "", "working directory of the action (default the workspace)")
	f.BoolVar(&o.explain, "explain", false, "also show the parsed action and the rules that fired")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	f.StringVar(&o.actionJSON, "action", "", "the action as JSON: {\"tool\":…,\"args\":{…}}")
	addOldSpelling(c, &o.actionJSON, "json", "action")
	f.StringVar(&o.cases, "cases", "", "run the cases in FILE (JSON lines, or YAML for .yaml/.yml)")
	f.BoolVar(&o.rego, "rego", false, "run the Rego unit tests of the built-in and user policies")
	f.BoolVar(&o.bypassSuite, "bypass-suite", false, "run the built-in bypass corpus against the policies in force")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "with --cases or --bypass-suite, list passing cases too")
	f.BoolVar(&o.noDaemon, "no-daemon", false, "decide in this process even when a claw serve of this config is running")
	c.MarkFlagsMutuallyExclusive("action", "json", "cases", "rego", "bypass-suite")
	return c
}

func runGateTest(ctx context.Context, g *globals, o *gateTestOptions, args []string) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	modes := 0
	for _, on := range []bool{o.actionJSON != "", o.cases != "", o.rego, o.bypassSuite} {
		if on {
			modes++
		}
	}
	if modes > 0 && len(args) > 0 {
		return usageErrorf("give the action either as TOOL ARG… or with --action, --cases, --rego or --bypass-suite, not both")
	}
	if modes == 0 && len(args) == 0 {
		return withCode(exitUsage, errors.New("no action given"), "try: claw gate test shell 'rm -rf /'")
	}
	if err := runtime.CheckAutonomy(o.autonomy); err != nil {
		return err
	}
	if !o.rego && o.cases == "" && !o.bypassSuite {
		runtime.OneShotGC()
	}
	e, err := loadEnv(g)
	if err != nil {
		return err
	}
	switch {
	case o.rego:
		passed, failed, err := runtime.RunRegoTests(ctx, e.home, g.stdout)
		if err != nil {
			return err
		}
		return passFail(g, passed, failed)
	case o.cases != "":
		cases, err := runtime.ReadCases(o.cases)
		if err != nil {
			return err
		}
		rep, err := runtime.RunCases(ctx, e.rt(), cases, o.workspace, o.autonomy)
		return printCases(g, o, rep, err)
	case o.bypassSuite:
		rep, err := runtime.RunBypassSuite(ctx, e.home, o.autonomy)
		return printCases(g, o, rep, err)
	}
	action, err := runtime.DryRunAction(o.actionJSON, args)
	if err != nil {
		return withCode(exitUsage, err, "see 'claw gate test --help'")
	}
	if !o.noDaemon {
		if a, ok := askGateDaemon(ctx, g, e, o, args); ok {
			return printAnswer(g, a)
		}
	}
	runtime.Prefetch()
	gctx, err := gateContext(e, o)
	if err != nil {
		return err
	}
	eng, err := runtime.NewEngine(ctx, e.rt(), runtime.Policy(e.cfg))
	if err != nil {
		return err
	}
	applyGrants(g, e, eng)
	return decideAndPrint(ctx, g, eng, e, o, action, gctx)
}

// decideAndPrint decides one action in gctx and prints the decision as
// claw gate test does (runtime.DecideDryRun); its error is the decision's
// exit status.
func decideAndPrint(ctx context.Context, g *globals, eng *runtime.Engine, e *env, o *gateTestOptions, action runtime.Action, gctx runtime.GateContext) error {
	return runtime.DecideDryRun(ctx, eng, e.rt(), runtime.DryRun{Explain: o.explain, Output: o.output}, action, gctx, g.stdout, g.stderr)
}

// gateContext builds the context the action is judged in.
func gateContext(e *env, o *gateTestOptions) (runtime.GateContext, error) {
	return runtime.DryRunContext(e.rt(), o.workspace, o.cwd, o.autonomy)
}

// printCases prints the report of a table of cases, and fails when a
// case did.
func printCases(g *globals, o *gateTestOptions, rep *runtime.CaseReport, err error) error {
	if err != nil {
		return err
	}
	if o.output != "json" {
		rep.WriteText(g.stdout, o.verbose)
		return passFail(g, rep.Passed, rep.Failed)
	}
	if err := rep.WriteJSON(g.stdout); err != nil {
		return err
	}
	if rep.Failed > 0 {
		return silentExit(exitError)
	}
	return nil
}

// passFail prints "N passed, N failed" and fails when something did.
func passFail(g *globals, passed, failed int) error {
	fmt.Fprintf(g.stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return silentExit(exitError)
	}
	return nil
}

// sanitize makes untrusted text safe to show on a terminal: control
// characters, bidi overrides and other invisible formatting are escaped so
// an approval prompt or report shows what will really run.
func sanitize(s string) string { return sanitizeClip(s, -1) }

// sanitizeClip is sanitize, cut at max bytes of escaped text (no cut when
// max is negative); see textesc.Clip.
func sanitizeClip(s string, max int) string { return textesc.Clip(s, max) }
