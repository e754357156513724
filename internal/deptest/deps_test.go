package deptest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/clawsec/claw"

// rule says what a package (and its subpackages) may depend on.
type rule struct {
	// mayUse lists the claw packages (prefixes, relative to the module)
	// the package may depend on, directly or not. nil means any.
	mayUse []string
	// never lists packages the package's own code must not import, with
	// why: standard ones (third-party libraries may import them for code
	// paths claw never calls, e.g. mvdan.cc/sh's LookPath), and claw ones
	// it may reach only through others; a key ending in "/..." covers a
	// package and everything under it.
	never map[string]string
}

var rules = map[string]rule{
	"policies": {mayUse: []string{}},
	"gate":     {mayUse: []string{"policies", "gate"}, never: map[string]string{"os/exec": "the gate is a pure function", "net/http": "the gate never reaches the network"}},
	"executor": {mayUse: []string{"executor"}, never: map[string]string{}},
	"receipts": {mayUse: []string{"receipts"}},
	"audit":    {mayUse: []string{"audit", "receipts", "gate", "policies"}},
	"agent": {mayUse: []string{"agent"}, never: map[string]string{
		"os/exec": "tools act only through the broker (agent.Invoker)",
	}},
	"internal/broker": {mayUse: []string{"internal/broker", "gate", "policies", "receipts", "executor", "agent", "internal/redact", "internal/grant"}},
	"internal/grant":  {mayUse: []string{"internal/grant", "gate", "policies", "receipts"}},
	"internal/redact": {mayUse: []string{"internal/redact"}},
	"internal/logx":   {mayUse: []string{"internal/logx", "internal/redact"}},
	"internal/config": {mayUse: []string{"internal/config"}},
	"internal/plugin": {mayUse: []string{"internal/plugin", "receipts"}, never: map[string]string{
		"os/exec": "plugins run only through the broker and the executor's sandbox",
	}},
	"internal/approvals": {never: map[string]string{
		"os/exec":             "approvals route answers; they run nothing",
		module + "/agent/...": "approvals reach the agent only through the functions they are given",
		module + "/cmd/...":   "the daemon's code is a library of the CLI, not the other way round",
	}},
	"internal/serve": {never: map[string]string{
		"os/exec":             "the daemon runs actions only through the broker",
		module + "/agent/...": "the daemon reaches the agent only through the functions it is given",
		module + "/cmd/...":   "the daemon's code is a library of the CLI, not the other way round",
	}},
	"internal/channel": {never: map[string]string{
		"os/exec":                      "a channel acts only through the broker",
		module + "/executor":           "a channel acts only through the broker",
		module + "/receipts":           "receipts are written by the broker only",
		module + "/cmd/...":            "channels are a library of the CLI, not the other way round",
		module + "/internal/serve":     "channels are given what they need by claw serve",
		module + "/agent/provider/...": "a channel reaches the agent only through Env.Chat",
	}},
	"internal/sop": {mayUse: []string{"internal/sop", "internal/config"}, never: map[string]string{
		"os/exec": "a workflow acts only through the broker, by the Steps it is given",
	}},
	"internal/hook": {never: map[string]string{
		"os/exec":                   "the agent runs the tool, not the hook",
		"net/http":                  "the hook never reaches the network",
		module + "/executor":        "the hook never runs an action",
		module + "/agent":           "the hook guards other agents, not claw's",
		module + "/internal/broker": "the hook decides and records; it has no approval or execution path",
	}},
}

// forbidden returns why imp is in never, if it is.
func forbidden(never map[string]string, imp string) (string, bool) {
	if why, ok := never[imp]; ok {
		return why, true
	}
	for k, why := range never {
		if prefix, ok := strings.CutSuffix(k, "/..."); ok && under(imp, prefix) {
			return why, true
		}
	}
	return "", false
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", module+"/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	if strings.HasPrefix(path, module+"/") {
		return strings.TrimPrefix(path, module+"/"), true
	}
	return "", false
}

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

// violations returns every broken rule among pkgs, and how many packages
// a rule applied to.
func violations(pkgs []pkg) (bad []string, checked int) {
	for _, p := range pkgs {
		me, _ := rel(p.ImportPath)
		for owner, r := range rules {
			if !under(me, owner) {
				continue
			}
			checked++
			for _, d := range p.Deps {
				if dr, ok := rel(d); ok && r.mayUse != nil {
					allowed := false
					for _, m := range r.mayUse {
						if under(dr, m) {
							allowed = true
						}
					}
					if !allowed {
						bad = append(bad, me+" depends on "+dr+"; "+owner+" may only use "+strings.Join(r.mayUse, ", "))
					}
				}
			}
			for _, imp := range p.Imports {
				if why, no := forbidden(r.never, imp); no {
					bad = append(bad, me+" imports "+imp+": "+why)
				}
			}
		}
		// Production code never imports the testing packages.
		for _, imp := range p.Imports {
			if imp == "testing" || strings.HasSuffix(imp, "/testscript") {
				bad = append(bad, me+" imports "+imp+" in non-test code")
			}
		}
	}
	return bad, checked
}

// TestDependencyRules checks every package of the module against the rules.
func TestDependencyRules(t *testing.T) {
	pkgs := listPackages(t)
	bad, checked := violations(pkgs)
	if checked == 0 {
		t.Fatal("no package matched a rule")
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestViolationsAreFound proves the checker is not vacuous.
func TestViolationsAreFound(t *testing.T) {
	tests := []struct {
		name string
		pkg  pkg
		want string
	}{
		{name: "agent runs a process", pkg: pkg{ImportPath: module + "/agent/tool", Imports: []string{"os/exec"}}, want: "os/exec"},
		{name: "gate reaches the network", pkg: pkg{ImportPath: module + "/gate/shell", Imports: []string{"net/http"}}, want: "net/http"},
		{name: "agent imports executor", pkg: pkg{ImportPath: module + "/agent", Deps: []string{module + "/executor"}}, want: "executor"},
		{name: "gate imports receipts", pkg: pkg{ImportPath: module + "/gate", Deps: []string{module + "/receipts"}}, want: "receipts"},
		{name: "receipts imports gate", pkg: pkg{ImportPath: module + "/receipts", Deps: []string{module + "/gate"}}, want: "gate"},
		{name: "policies imports claw", pkg: pkg{ImportPath: module + "/policies", Deps: []string{module + "/gate/shell"}}, want: "gate/shell"},
		{name: "testing in production", pkg: pkg{ImportPath: module + "/executor", Imports: []string{"testing"}}, want: "testing"},
		{name: "daemon imports the agent", pkg: pkg{ImportPath: module + "/internal/serve", Imports: []string{module + "/agent/provider"}}, want: "agent/provider"},
		{name: "daemon runs a process", pkg: pkg{ImportPath: module + "/internal/serve", Imports: []string{"os/exec"}}, want: "os/exec"},
		{name: "approvals import the CLI", pkg: pkg{ImportPath: module + "/internal/approvals", Imports: []string{module + "/cmd/claw"}}, want: "cmd/claw"},
		{name: "channel writes receipts", pkg: pkg{ImportPath: module + "/internal/channel/bridge", Imports: []string{module + "/receipts"}}, want: "receipts"},
		{name: "hook imports the broker", pkg: pkg{ImportPath: module + "/internal/hook", Imports: []string{module + "/internal/broker"}}, want: "internal/broker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad, _ := violations([]pkg{tt.pkg})
			if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), tt.want) {
				t.Fatalf("violations = %q, want one naming %q", bad, tt.want)
			}
		})
	}
	ok, _ := violations([]pkg{
		{ImportPath: module + "/gate", Deps: []string{module + "/policies", "fmt"}},
		{ImportPath: module + "/internal/serve", Imports: []string{module + "/internal/broker", module + "/agentic"}},
	})
	if len(ok) != 0 {
		t.Fatalf("allowed dependency reported: %q", ok)
	}
}
