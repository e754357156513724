package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/bypass"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/plugin"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/term"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/policies"
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

// oneShotGC turns the garbage collector off, up to a bounded heap, for a
// process that makes one decision and exits: it allocates some 15 MB,
// most of it compiling the policies, all of it live until the decision,
// and collecting it would only cost time.
func oneShotGC() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeapLimit)
}

// oneShotHeapLimit bounds the heap of a one-decision process: past it the
// collector runs again.
const oneShotHeapLimit = 256 << 20

func runGateTest(ctx context.Context, g *globals, o *gateTestOptions, args []string) error {
	if o.output != "text" && o.output != "json" {
		return usageErrorf("--output must be text or json, not %q", o.output)
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
	if o.autonomy != "" && o.autonomy != "readonly" && o.autonomy != "supervised" && o.autonomy != "full" {
		return usageErrorf("--autonomy %q is not one of readonly, supervised, full", o.autonomy)
	}
	if !o.rego && o.cases == "" && !o.bypassSuite {
		oneShotGC()
	}
	e, err := loadEnv(g)
	if err != nil {
		return err
	}
	switch {
	case o.rego:
		return runRegoTests(ctx, g, e)
	case o.cases != "":
		f, err := os.Open(o.cases)
		if err != nil {
			return err
		}
		defer f.Close()
		cases, err := gate.ParseCases(f, o.cases)
		if err != nil {
			return withCode(exitUsage, err)
		}
		return runCases(ctx, g, e, o, cases)
	case o.bypassSuite:
		cases, err := loadBypassCorpus()
		if err != nil {
			return err
		}
		// The corpus is written for the default configuration in a fixed
		// home, judged by the built-in and the user's policies.
		be := &env{home: e.home, userDir: bypassHome, cfg: config.Default(e.home)}
		if err := be.cfg.Expand(func(k string) string {
			if k == "HOME" {
				return bypassHome
			}
			return ""
		}); err != nil {
			return err
		}
		if o.workspace == "" {
			o.workspace = bypassWorkspace
		}
		return runCases(ctx, g, be, o, cases)
	}
	action, err := actionFromArgs(o.actionJSON, args)
	if err != nil {
		return withCode(exitUsage, err, "see 'claw gate test --help'")
	}
	if !o.noDaemon {
		if a, ok := askGateDaemon(ctx, g, e, o, args); ok {
			return printAnswer(g, a)
		}
	}
	gate.Prefetch()
	gctx, err := gateContext(e, o)
	if err != nil {
		return err
	}
	eng, err := newEngine(ctx, e, policyFromConfig(e.cfg))
	if err != nil {
		return err
	}
	applyGrants(g, e, eng)
	return decideAndPrint(ctx, g, eng, e, o, action, gctx)
}

// decideAndPrint decides one action in gctx and prints the decision as
// claw gate test does; its error is the decision's exit status. A plugin
// action is decided with the reach of the plugin installed in e's home,
// and a delegate call with the hosts of the external agent it names, as
// the broker does.
func decideAndPrint(ctx context.Context, g *globals, eng *gate.Engine, e *env, o *gateTestOptions, action gate.Action, gctx gate.Context) error {
	in := gate.BuildInput(action, gctx)
	switch in.Kind {
	case toolkind.Plugin:
		broker.ResolvePlugin(runtime.PluginResolver(plugin.Store{Dir: filepath.Join(e.home, "plugins")}), action, in)
	case toolkind.Delegate:
		broker.ResolveDelegate(runtime.DelegateHosts(e.cfg), action, in)
	}
	var d gate.Decision
	var fired []string
	var err error
	if o.explain {
		d, fired, err = eng.Explain(ctx, in)
	} else {
		d, err = eng.DecideInput(ctx, in)
	}
	if err != nil {
		warnf(g.stderr, "%v", err)
	}
	if o.output == "json" {
		out := struct {
			gate.Decision
			Parsed any      `json:"parsed"`
			Input  any      `json:"input,omitempty"`
			Fired  []string `json:"fired,omitempty"`
		}{Decision: d, Parsed: in.Parsed, Fired: fired}
		if o.explain {
			out.Input = in
		}
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printDecision(g.stdout, d, in, fired, o.explain)
	}
	return decisionExit(d)
}

// decisionExit maps a decision to the published exit codes.
func decisionExit(d gate.Decision) error {
	switch d.Decision {
	case gate.Allow:
		return nil
	case gate.Ask, gate.Passphrase:
		return silentExit(exitNeedsHuman)
	}
	return silentExit(exitDenied)
}

// gateContext builds the context the action is judged in.
func gateContext(e *env, o *gateTestOptions) (gate.Context, error) {
	ws := e.cfg.WorkspaceDir
	if o.workspace != "" {
		ws = o.workspace
	}
	ws, err := canonicalDir(ws)
	if err != nil {
		return gate.Context{}, err
	}
	cwd := ws
	if o.cwd != "" {
		if cwd, err = canonicalDir(o.cwd); err != nil {
			return gate.Context{}, err
		}
	}
	autonomy := e.cfg.Security.Autonomy
	if o.autonomy != "" {
		autonomy = o.autonomy
	}
	_, estop := os.Stat(e.home + "/ESTOP")
	return gate.Context{
		Autonomy:  autonomy,
		Workspace: ws,
		Cwd:       cwd,
		Home:      e.userDir,
		Channel:   "cli",
		Estop:     estop == nil,
	}, nil
}

// actionFromArgs builds the action from --action or TOOL ARG….
func actionFromArgs(js string, args []string) (gate.Action, error) {
	if js != "" {
		return gate.ParseAction([]byte(js))
	}
	tool, rest := args[0], args[1:]
	a := gate.Action{Tool: tool, Args: map[string]any{}}
	spec, known := gate.Kinds[tool]
	if !known {
		// Unknown tools are the gate's to deny, not a usage error.
		if len(rest) > 0 {
			a.Args["args"] = rest
		}
		return a, nil
	}
	switch tool {
	case "shell":
		if len(rest) == 0 {
			return a, errors.New("shell needs a COMMAND")
		}
		a.Args["command"] = strings.Join(rest, " ")
		return a, nil
	case "tool", "plugin":
		keys := map[string][2]string{"tool": {"server", "name"}, "plugin": {"plugin", "tool"}}[tool]
		if len(rest) < 2 || len(rest) > 3 {
			return a, fmt.Errorf("%s needs %s %s [ARGS-JSON]", tool, strings.ToUpper(keys[0]), strings.ToUpper(keys[1]))
		}
		a.Args[keys[0]], a.Args[keys[1]] = rest[0], rest[1]
		if len(rest) == 3 {
			var v map[string]any
			if err := json.Unmarshal([]byte(rest[2]), &v); err != nil {
				return a, fmt.Errorf("%s ARGS-JSON: %w", tool, err)
			}
			a.Args["args"] = v
		}
		return a, nil
	}
	names := append(append([]string{}, spec.Required...), spec.Optional...)
	if tool == "http" {
		names = []string{"url", "method"}
	}
	if len(rest) < len(spec.Required) || len(rest) > len(names) {
		return a, fmt.Errorf("%s takes %s", tool, strings.ToUpper(strings.Join(names, " ")))
	}
	for i, v := range rest {
		a.Args[names[i]] = v
	}
	return a, nil
}

func printDecision(w io.Writer, d gate.Decision, in *gate.Input, fired []string, explain bool) {
	fmt.Fprintf(w, "decision: %s (risk %s)\n", d.Decision, d.Risk)
	for _, r := range d.Reasons {
		fmt.Fprintf(w, "  %-30s %-8s %s\n", r.ID, r.Severity, sanitize(r.Msg))
	}
	fmt.Fprintf(w, "sandbox: read=%s write=%s net=%t\n", term.ListOrNone(d.Sandbox.Read), term.ListOrNone(d.Sandbox.Write), d.Sandbox.Net)
	if len(d.Sandbox.Network.Hosts) > 0 {
		fmt.Fprintf(w, "egress: %s (through claw's proxy only)\n", strings.Join(d.Sandbox.Network.Hosts, " "))
	}
	fmt.Fprintf(w, "policy: %s\n", d.PolicyDigest)
	if !explain {
		return
	}
	if len(in.Errors) > 0 {
		fmt.Fprintln(w, "input errors:")
		for _, e := range in.Errors {
			fmt.Fprintf(w, "  %s\n", sanitize(e))
		}
	}
	if in.Parsed != nil {
		fmt.Fprintln(w, "parsed:")
		for _, c := range in.Parsed.Commands {
			via := ""
			if len(c.Via) > 0 {
				via = " via " + strings.Join(c.Via, " > ")
			}
			fmt.Fprintf(w, "  [%d] %s%s\n", c.Depth, sanitize(strings.Join(quoteArgs(c.Argv), " ")), via)
			if len(c.Paths) > 0 {
				fmt.Fprintf(w, "      paths: %s\n", sanitize(strings.Join(c.Paths, " ")))
			}
			if len(c.Writes) > 0 {
				fmt.Fprintf(w, "      writes: %s\n", sanitize(strings.Join(c.Writes, " ")))
			}
			for _, m := range c.Marks {
				fmt.Fprintf(w, "      mark: %s %s\n", m.Kind, sanitize(m.Detail))
			}
		}
		if in.Parsed.Dynamic {
			fmt.Fprintf(w, "  dynamic: %s\n", sanitize(strings.Join(in.Parsed.DynamicReasons, "; ")))
		}
		if in.Parsed.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", sanitize(in.Parsed.Error))
		}
	} else if len(in.Paths) > 0 {
		fmt.Fprintf(w, "paths: %s\n", sanitize(strings.Join(in.Paths, " ")))
	}
	if in.URL != nil {
		fmt.Fprintf(w, "url: scheme=%s host=%s port=%d ip=%s class=%s\n", in.URL.Scheme, sanitize(in.URL.Host), in.URL.Port, in.URL.IP, in.URL.Class)
	}
	fmt.Fprintln(w, "rules fired:")
	if len(fired) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, f := range fired {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

func quoteArgs(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}~") {
			out[i] = fmt.Sprintf("%q", a)
		} else {
			out[i] = a
		}
	}
	return out
}

// sanitize makes untrusted text safe to show on a terminal: control
// characters, bidi overrides and other invisible formatting are escaped so
// an approval prompt or report shows what will really run.
func sanitize(s string) string { return sanitizeClip(s, -1) }

// sanitizeClip is sanitize, cut at max bytes of escaped text (no cut when
// max is negative); see textesc.Clip.
func sanitizeClip(s string, max int) string { return textesc.Clip(s, max) }

// invisible reports whether r shows as something other than itself, or as
// nothing (textesc.Invisible).
func invisible(r rune) bool { return textesc.Invisible(r) }

// runCases runs cases, each in its own context and policy overrides.
func runCases(ctx context.Context, g *globals, e *env, o *gateTestOptions, cases []gate.Case) error {
	e.dryRunTimeout = 10 * time.Second
	engines := map[string]*gate.Engine{}
	base := policyFromConfig(e.cfg)
	passed, failed := 0, 0
	var results []gate.CaseResult
	for _, cs := range cases {
		key, _ := json.Marshal(cs.Config)
		eng, ok := engines[string(key)]
		if !ok {
			pol, err := overridePolicy(base, cs.Config)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("%s: config: %w", cs.Where, err))
			}
			if eng, err = newEngine(ctx, e, pol); err != nil {
				return err
			}
			engines[string(key)] = eng
		}
		gctx, err := gateContext(e, &gateTestOptions{workspace: firstNonEmpty(cs.Workspace, o.workspace), cwd: cs.Cwd})
		if err != nil {
			return err
		}
		if o.autonomy != "" {
			gctx.Autonomy = o.autonomy
		}
		r := gate.Check(ctx, eng, cs, gctx)
		results = append(results, r)
		if r.Failure == "" {
			passed++
		} else {
			failed++
		}
	}
	if o.output == "json" {
		type row struct {
			Name     string   `json:"name"`
			Where    string   `json:"where"`
			Expect   string   `json:"expect"`
			Decision string   `json:"decision"`
			Rules    []string `json:"rules"`
			Pass     bool     `json:"pass"`
			Failure  string   `json:"failure,omitempty"`
		}
		rows := make([]row, 0, len(results))
		for _, r := range results {
			rows = append(rows, row{r.Case.Name, r.Case.Where, r.Case.Expect, r.Decision.Decision, r.Decision.RuleIDs(), r.Failure == "", r.Failure})
		}
		enc := json.NewEncoder(g.stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"passed": passed, "failed": failed, "cases": rows}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.Failure != "" {
				fmt.Fprintf(g.stdout, "FAIL %s %s: %s\n", r.Case.Where, sanitize(r.Case.Name), sanitize(r.Failure))
			} else if o.verbose {
				fmt.Fprintf(g.stdout, "ok   %s %s: %s\n", r.Case.Where, sanitize(r.Case.Name), r.Decision.Decision)
			}
		}
		fmt.Fprintf(g.stdout, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return silentExit(exitError)
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// overridePolicy applies a case's config object (security keys) to base.
func overridePolicy(base gate.Policy, over map[string]any) (gate.Policy, error) {
	if len(over) == 0 {
		return base, nil
	}
	b, _ := json.Marshal(base)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for k, v := range over {
		if k == "passphrase_hash" {
			k, v = "passphrase_enabled", v != ""
		}
		m[k] = v
	}
	b, _ = json.Marshal(m)
	var out gate.Policy
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return base, err
	}
	return out, nil
}

// bypassHome and bypassWorkspace fix the environment of the bypass corpus,
// so its expectations hold on any machine.
const (
	bypassHome      = "/home/claw"
	bypassWorkspace = "/home/claw/ws"
)

// loadBypassCorpus reads the corpus embedded in claw.
func loadBypassCorpus() ([]gate.Case, error) {
	names, err := fs.Glob(bypass.FS, "*.jsonl")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var all []gate.Case
	for _, n := range names {
		b, err := bypass.FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		cases, err := gate.ParseCases(bytes.NewReader(b), path.Join("bypass", n))
		if err != nil {
			return nil, fmt.Errorf("built-in corpus: %w", err)
		}
		for i := range cases {
			if cases[i].Workspace == "" {
				cases[i].Workspace = bypassWorkspace
			}
		}
		all = append(all, cases...)
	}
	return all, nil
}

// runRegoTests runs the Rego unit tests of the built-in and user policies.
func runRegoTests(ctx context.Context, g *globals, e *env) error {
	mods, tests, err := gate.LoadUserPolicies(e.home + "/policies")
	if err != nil {
		return withCode(exitError, err)
	}
	extra := map[string]string{}
	for n, s := range mods {
		extra["user/"+n] = s
	}
	for n, s := range tests {
		extra["user/"+n] = s
	}
	passed, failed, err := policies.RunTests(ctx, extra, g.stdout)
	if err != nil {
		return withCode(exitError, err)
	}
	fmt.Fprintf(g.stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return silentExit(exitError)
	}
	return nil
}
