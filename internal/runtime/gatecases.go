package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/bypass"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/policies"
)

// CaseReport is what a table of gate cases gave.
type CaseReport struct {
	Passed, Failed int
	Results        []gate.CaseResult
}

// ReadCases reads the table of cases in the file at name (JSON lines, or
// YAML for .yaml/.yml); a malformed table is a usage error.
func ReadCases(name string) ([]gate.Case, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cases, err := gate.ParseCases(f, name)
	if err != nil {
		return nil, WithCode(ExitUsage, err)
	}
	return cases, nil
}

// RunCases decides each case in its own context and policy overrides: its
// workspace (else workspace, else the config's) and cwd, at autonomy
// when given.
func RunCases(ctx context.Context, e *Env, cases []gate.Case, workspace, autonomy string) (*CaseReport, error) {
	e.DryRunTimeout = 10 * time.Second
	engines := map[string]*gate.Engine{}
	base := Policy(e.Config)
	rep := &CaseReport{}
	for _, cs := range cases {
		key, _ := json.Marshal(cs.Config)
		eng, ok := engines[string(key)]
		if !ok {
			pol, err := overridePolicy(base, cs.Config)
			if err != nil {
				return nil, WithCode(ExitUsage, fmt.Errorf("%s: config: %w", cs.Where, err))
			}
			if eng, err = NewEngine(ctx, e, pol); err != nil {
				return nil, err
			}
			engines[string(key)] = eng
		}
		ws := cs.Workspace
		if ws == "" {
			ws = workspace
		}
		gctx, err := DryRunContext(e, ws, cs.Cwd, autonomy)
		if err != nil {
			return nil, err
		}
		r := gate.Check(ctx, eng, cs, gctx)
		rep.Results = append(rep.Results, r)
		if r.Failure == "" {
			rep.Passed++
		} else {
			rep.Failed++
		}
	}
	return rep, nil
}

// WriteJSON writes the report as one JSON object: the counts and a row
// per case.
func (rep *CaseReport) WriteJSON(w io.Writer) error {
	type row struct {
		Name     string   `json:"name"`
		Where    string   `json:"where"`
		Expect   string   `json:"expect"`
		Decision string   `json:"decision"`
		Rules    []string `json:"rules"`
		Pass     bool     `json:"pass"`
		Failure  string   `json:"failure,omitempty"`
	}
	rows := make([]row, 0, len(rep.Results))
	for _, r := range rep.Results {
		rows = append(rows, row{r.Case.Name, r.Case.Where, r.Case.Expect, r.Decision.Decision, r.Decision.RuleIDs(), r.Failure == "", r.Failure})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(map[string]any{"passed": rep.Passed, "failed": rep.Failed, "cases": rows})
}

// WriteText writes a line per failed case (per case, with verbose), not
// the counts.
func (rep *CaseReport) WriteText(w io.Writer, verbose bool) {
	for _, r := range rep.Results {
		if r.Failure != "" {
			fmt.Fprintf(w, "FAIL %s %s: %s\n", r.Case.Where, textesc.String(r.Case.Name), textesc.String(r.Failure))
		} else if verbose {
			fmt.Fprintf(w, "ok   %s %s: %s\n", r.Case.Where, textesc.String(r.Case.Name), r.Decision.Decision)
		}
	}
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

// RunBypassSuite runs the corpus of attacks and benign look-alikes
// embedded in claw. The corpus is written for the default configuration
// in a fixed home, judged by the built-in policies and the user's of the
// claw home.
func RunBypassSuite(ctx context.Context, home, autonomy string) (*CaseReport, error) {
	cases, err := BypassCorpus()
	if err != nil {
		return nil, err
	}
	e := &Env{Home: home, UserDir: bypassHome, Config: config.Default(home)}
	if err := e.Config.Expand(func(k string) string {
		if k == "HOME" {
			return bypassHome
		}
		return ""
	}); err != nil {
		return nil, err
	}
	return RunCases(ctx, e, cases, bypassWorkspace, autonomy)
}

// BypassCorpus reads the corpus embedded in claw, each case in its own
// workspace or the corpus's.
func BypassCorpus() ([]gate.Case, error) {
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

// RunRegoTests runs the Rego unit tests of the built-in policies and the
// user's of the claw home, writing each failure to w.
func RunRegoTests(ctx context.Context, home string, w io.Writer) (passed, failed int, err error) {
	mods, tests, err := gate.LoadUserPolicies(home + "/policies")
	if err != nil {
		return 0, 0, WithCode(ExitError, err)
	}
	extra := map[string]string{}
	for n, s := range mods {
		extra["user/"+n] = s
	}
	for n, s := range tests {
		extra["user/"+n] = s
	}
	passed, failed, err = policies.RunTests(ctx, extra, w)
	if err != nil {
		return 0, 0, WithCode(ExitError, err)
	}
	return passed, failed, nil
}
