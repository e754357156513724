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
	// why says why mayUse is what it is; it is part of every violation
	// of mayUse.
	why string
	// stdOnly, when not empty, says why the package may depend on nothing
	// outside the standard library and the claw packages in mayUse.
	stdOnly string
	// imports, when not nil, lists all the package's own code may import
	// besides the standard library: claw packages (relative to the
	// module) and other modules' packages, each with what is under it.
	// importsWhy says why; it is part of every violation.
	imports    []string
	importsWhy string
}

// leaves are claw packages every package may use, as it may use the
// standard library: each does one small job, imports no claw package and
// nothing outside the standard library (its own rule says so), so it
// widens no package's reach.
var leaves = map[string]string{
	"internal/atomicfile": "one atomic file replacement (temp file, fsync, rename, fsync of the directory) for every state file",
	"internal/idlegc":     "collecting garbage when a process is idle; it counts requests and calls the runtime, nothing else",
	"internal/textesc":    "escaping and cutting text for display, a pure function of its input",
	"internal/toolkind":   "the names of the kinds of action",
}

// writers lists the packages whose own code may import a package, and
// why no other may.
var writers = map[string]struct {
	by  map[string]string // package (and those under it) → why it may
	why string
}{
	"receipts/store": {why: "receipts are written by the broker only: every other package records through broker.Log", by: map[string]string{
		"internal/broker":   "the one recorder",
		"receipts/store":    "the writer itself",
		"bench/receiptsgen": "a load generator that measures the store's group commit itself, not a path of claw's; it is never linked into claw",
	}},
}

var rules = map[string]rule{
	"policies": {mayUse: []string{}},
	"gate":     {mayUse: []string{"policies", "gate", "internal/netclass"}, never: map[string]string{"os/exec": "the gate is a pure function", "net/http": "the gate never reaches the network"}},
	"executor": {mayUse: []string{"executor", "internal/netclass"}, never: map[string]string{}},
	"receipts": {mayUse: []string{"receipts"}},
	"audit":    {mayUse: []string{"audit", "receipts", "gate", "policies", "internal/netclass"}},
	"agent": {mayUse: []string{"agent"}, never: map[string]string{
		"os/exec": "tools act only through the broker (agent.Invoker)",
	}},
	"agent/memory": {mayUse: []string{"agent/memory"}, why: "the conversation store is a leaf the agent and the channels share", never: map[string]string{
		"os/exec":  "the store keeps conversations; it runs nothing",
		"syscall":  "the store reaches the system only through its SQLite driver",
		"net/http": "the store never reaches the network",
	}},
	"internal/broker": {mayUse: []string{"internal/broker", "gate", "policies", "receipts", "executor", "agent", "internal/redact", "internal/grant", "internal/netclass", "internal/estop"}},
	"internal/estop": {mayUse: []string{}, why: "the emergency stop file is a leaf the broker, the CLI and the daemon share; its receipts are the broker's",
		stdOnly: "every entry links it; it adds no third-party code"},
	"internal/grant":  {mayUse: []string{"internal/grant", "gate", "policies", "receipts", "internal/netclass"}},
	"internal/redact": {mayUse: []string{"internal/redact"}},
	"internal/atomicfile": {mayUse: []string{}, why: "a leaf every package may use (see leaves)",
		stdOnly: "the executor's sandboxed child links it; it adds no code of its own there"},
	"internal/logx": {mayUse: []string{"internal/logx", "internal/redact"}, why: "logging must not reach the broker or the gate",
		stdOnly: "every package logs through it; it adds no third-party code to any of them"},
	"internal/config": {mayUse: []string{"internal/config"}, why: "every package reads config; config reads none of them"},
	"internal/termtest": {mayUse: []string{"internal/termtest", "internal/textesc"},
		why: "helpers of the terminal tests: a pseudo-terminal and printable checks; only tests import it", never: map[string]string{
			"testing": "it takes the test as an interface, so that importing it links no test code into a non-test package",
		}},
	"internal/idlegc": {mayUse: []string{}, why: "a leaf every long-lived entry may use (see leaves)",
		stdOnly: "every entry may link it; it adds no third-party code"},
	"internal/busytest": {mayUse: []string{}, why: "keeps the CPUs busy for the tests that check answers under load; only tests import it",
		never: map[string]string{"testing": "importing it must link no test code into a non-test package"}},
	"internal/bypass": {mayUse: []string{}, why: "the bypass corpus is data claw gate test --bypass-suite ships; it decides nothing itself",
		stdOnly: "claw links it; it is embedded files only", never: map[string]string{"os": "the corpus is embedded, never read from disk"}},
	"internal/netclass": {mayUse: []string{}, why: "the gate and the executor's egress proxy class addresses with it: a leaf both may use",
		stdOnly: "the executor links it; it adds no code of its own to the sandbox"},
	"internal/textesc": {mayUse: []string{}, why: "escaping and cutting text is a leaf every package may use", stdOnly: "every package may link it", never: map[string]string{
		"os":       "escaping is a pure function of its input",
		"os/exec":  "escaping is a pure function of its input",
		"net/http": "escaping is a pure function of its input",
	}},
	"internal/toolkind": {mayUse: []string{}, why: "the names of the kinds of action are a leaf every package may use",
		stdOnly: "every package may link it", never: map[string]string{"os": "names only; it does nothing"}},
	"internal/service": {mayUse: []string{"internal/service", "internal/config"}, why: "installing the daemon as a service needs only its config", never: map[string]string{
		"net/http": "installing a service never reaches the network",
	}},
	"internal/mcpgate": {never: map[string]string{
		"os/exec":                      "MCP calls run only through the broker and the executor's sandbox",
		module + "/executor":           "MCP calls run only through the broker",
		module + "/agent/provider/...": "the MCP client is the model; mcpgate talks to no provider",
		module + "/internal/serve":     "claw serve is one entry and the MCP server another; neither runs the other",
		module + "/cmd/...":            "mcpgate is a library of the CLI, not the other way round",
	}},
	// cmd/claw is the command line: flags, prompts and output. What it
	// runs is built by internal/runtime, the composition root.
	"cmd/claw": {mayUse: []string{
		"agent", "audit", "executor", "gate", "policies", "receipts", "internal/bypass",
		"internal/approvals", "internal/broker", "internal/channel", "internal/config", "internal/grant",
		"internal/hook", "internal/logx", "internal/mcpgate", "internal/plugin", "internal/redact",
		"internal/serve", "internal/service", "internal/sop", "internal/textesc", "internal/netclass",
		"internal/runtime", "internal/term", "internal/estop", "internal/delegate",
	}, why: "the binary holds production packages only, no test fakes or benchmarks", never: map[string]string{
		module + "/internal/channel/discord/discordtest/...": "a fake Discord is for tests, never in the binary",
		module + "/internal/broker/brokertest":               "receipt fixtures are for tests, never in the binary",
		module + "/internal/termtest":                        "terminal test helpers are for tests, never in the binary",
		module + "/internal/busytest":                        "the load of the under-load tests is for tests, never in the binary",
	},
		imports: []string{
			"internal/runtime", "internal/config", // what runs, and what it is configured by
			"internal/term", "golang.org/x/term", // presentation: output and prompts
			"github.com/spf13/cobra", "github.com/spf13/pflag", // the CLI library
		},
		importsWhy: "the command line keeps flags, prompts and output; internal/runtime builds and runs the rest",
	},
	"internal/runtime": {never: map[string]string{
		module + "/cmd/...": "the runtime is a library of the CLI, not the other way round",
	}},
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
	"internal/term": {never: map[string]string{
		"os/exec":                    "the terminal presentation shows and asks; it runs nothing",
		"net/http":                   "the terminal presentation never reaches the network",
		module + "/executor":         "the terminal presentation shows outcomes; the broker runs actions",
		module + "/receipts":         "receipts are written by the broker only",
		module + "/gate":             "the terminal presentation shows decisions; it makes none",
		module + "/cmd/...":          "the presentation is a library of the CLI, not the other way round",
		module + "/internal/runtime": "the runtime wires the terminal, not the other way round",
	}},
	"internal/delegate": {mayUse: []string{"internal/delegate", "agent", "executor", "internal/config", "internal/hook", "internal/broker", "internal/estop", "internal/grant", "gate", "policies", "receipts", "internal/redact", "internal/netclass"},
		why: "an external agent runs in the executor's sandbox and is answered by the hook's guard, which decides and records through the broker", never: map[string]string{
			"os/exec": "the external agent runs only in the executor's sandbox",
		}},
	"internal/hook": {never: map[string]string{
		"os/exec":            "the agent runs the tool, not the hook",
		"net/http":           "the hook never reaches the network",
		module + "/executor": "the hook never runs an action; it decides and records through the broker",
		module + "/agent":    "the hook guards other agents, not claw's",
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
	return listPackagesOf(t, module+"/...")
}

// listPackagesOf lists the packages pattern names (./... skips testdata,
// so its packages are named apart).
func listPackagesOf(t *testing.T, pattern string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", pattern)
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

// standard reports whether path is a standard library package: its first
// element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

// importName is imp relative to the module when it is a claw package,
// else imp.
func importName(imp string) string {
	if r, ok := rel(imp); ok {
		return r
	}
	return imp
}

// mayImport reports whether r lets a package import imp: r has no
// imports list, imp is standard, a leaf, or under an entry of the list.
func mayImport(r rule, imp string) bool {
	if r.imports == nil || standard(imp) {
		return true
	}
	name := importName(imp)
	if _, ok := leaves[name]; ok {
		return true
	}
	for _, m := range r.imports {
		if under(name, m) {
			return true
		}
	}
	return false
}

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
					_, allowed := leaves[dr]
					for _, m := range r.mayUse {
						if under(dr, m) {
							allowed = true
						}
					}
					if !allowed {
						msg := me + " depends on " + dr + "; " + owner + " may only use " + strings.Join(r.mayUse, ", ")
						if r.why != "" {
							msg += ": " + r.why
						}
						bad = append(bad, msg)
					}
				}
				if _, claw := rel(d); !claw && r.stdOnly != "" && !standard(d) {
					bad = append(bad, me+" depends on "+d+", outside the standard library: "+r.stdOnly)
				}
			}
			for _, imp := range p.Imports {
				if why, no := forbidden(r.never, imp); no {
					bad = append(bad, me+" imports "+imp+": "+why)
				}
				if !mayImport(r, imp) {
					bad = append(bad, me+" imports "+imp+"; "+owner+" may only import the standard library and "+
						strings.Join(r.imports, ", ")+": "+r.importsWhy)
				}
			}
		}
		for _, imp := range p.Imports {
			dr, _ := rel(imp)
			if w, ok := writers[dr]; ok && !writerMay(w.by, me) {
				bad = append(bad, me+" imports "+dr+": "+w.why)
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

// writerMay reports whether package me is under one of by's packages.
func writerMay(by map[string]string, me string) bool {
	for p := range by {
		if under(me, p) {
			return true
		}
	}
	return false
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
		{name: "logx uses a library", pkg: pkg{ImportPath: module + "/internal/logx", Deps: []string{"golang.org/x/exp/slog"}}, want: "standard library"},
		{name: "config imports receipts", pkg: pkg{ImportPath: module + "/internal/config", Deps: []string{module + "/receipts"}}, want: "receipts"},
		{name: "textesc uses a claw package", pkg: pkg{ImportPath: module + "/internal/textesc", Deps: []string{module + "/internal/redact"}}, want: "internal/redact"},
		{name: "textesc reads files", pkg: pkg{ImportPath: module + "/internal/textesc", Imports: []string{"os"}}, want: "os"},
		{name: "service imports the broker", pkg: pkg{ImportPath: module + "/internal/service", Deps: []string{module + "/internal/broker"}}, want: "internal/broker"},
		{name: "mcpgate runs the executor", pkg: pkg{ImportPath: module + "/internal/mcpgate", Imports: []string{module + "/executor"}}, want: "executor"},
		{name: "mcpgate runs a process", pkg: pkg{ImportPath: module + "/internal/mcpgate", Imports: []string{"os/exec"}}, want: "os/exec"},
		{name: "claw links a benchmark", pkg: pkg{ImportPath: module + "/cmd/claw", Deps: []string{module + "/bench/procs"}}, want: "bench/procs"},
		{name: "claw links a test fake", pkg: pkg{ImportPath: module + "/cmd/claw", Imports: []string{module + "/internal/broker/brokertest"}}, want: "brokertest"},
		{name: "claw links the fake discord", pkg: pkg{ImportPath: module + "/cmd/claw", Imports: []string{module + "/internal/channel/discord/discordtest"}}, want: "discordtest"},
		{name: "plugin runs a process", pkg: pkg{ImportPath: module + "/internal/plugin", Imports: []string{"os/exec"}}, want: "os/exec"},
		{name: "plugin imports the broker", pkg: pkg{ImportPath: module + "/internal/plugin", Deps: []string{module + "/internal/broker"}}, want: "internal/broker"},
		{name: "sop imports the broker", pkg: pkg{ImportPath: module + "/internal/sop", Deps: []string{module + "/internal/broker"}}, want: "internal/broker"},
		{name: "grant imports the executor", pkg: pkg{ImportPath: module + "/internal/grant", Deps: []string{module + "/executor"}}, want: "executor"},
		{name: "egress imports the gate", pkg: pkg{ImportPath: module + "/executor/internal/egress", Deps: []string{module + "/gate"}}, want: "gate"},
		{name: "discord channel runs the executor", pkg: pkg{ImportPath: module + "/internal/channel/discord", Imports: []string{module + "/executor"}}, want: "executor"},
		{name: "memory imports the broker", pkg: pkg{ImportPath: module + "/agent/memory", Deps: []string{module + "/internal/broker"}}, want: "internal/broker"},
		{name: "memory makes system calls", pkg: pkg{ImportPath: module + "/agent/memory", Imports: []string{"syscall"}}, want: "syscall"},
		{name: "term runs a process", pkg: pkg{ImportPath: module + "/internal/term", Imports: []string{"os/exec"}}, want: "os/exec"},
		{name: "term writes receipts", pkg: pkg{ImportPath: module + "/internal/term", Imports: []string{module + "/receipts"}}, want: "receipts"},
		{name: "atomicfile imports claw", pkg: pkg{ImportPath: module + "/internal/atomicfile", Deps: []string{module + "/internal/redact"}}, want: "internal/redact"},
		{name: "atomicfile uses a library", pkg: pkg{ImportPath: module + "/internal/atomicfile", Deps: []string{"golang.org/x/sys/unix"}}, want: "standard library"},
		{name: "hook runs the executor", pkg: pkg{ImportPath: module + "/internal/hook", Imports: []string{module + "/executor"}}, want: "executor"},
		{name: "hook writes receipts", pkg: pkg{ImportPath: module + "/internal/hook", Imports: []string{module + "/receipts/store"}}, want: "receipts/store"},
		{name: "daemon writes receipts", pkg: pkg{ImportPath: module + "/internal/serve", Imports: []string{module + "/receipts/store"}}, want: "broker only"},
		{name: "claw writes receipts", pkg: pkg{ImportPath: module + "/cmd/claw", Imports: []string{module + "/receipts/store"}}, want: "receipts/store"},
		{name: "a benchmark writes receipts", pkg: pkg{ImportPath: module + "/bench/friction", Imports: []string{module + "/receipts/store"}}, want: "receipts/store"},
		{name: "estop imports the broker", pkg: pkg{ImportPath: module + "/internal/estop", Deps: []string{module + "/internal/broker"}}, want: "internal/broker"},
		{name: "runtime imports the CLI", pkg: pkg{ImportPath: module + "/internal/runtime", Imports: []string{module + "/cmd/claw"}}, want: "cmd/claw"},
		{name: "claw imports gate/shell", pkg: pkg{ImportPath: module + "/cmd/claw", Imports: []string{module + "/gate/shell"}}, want: "may only import"},
		{name: "claw imports the broker", pkg: pkg{ImportPath: module + "/cmd/claw", Imports: []string{module + "/internal/broker"}}, want: "may only import"},
		{name: "claw imports a library", pkg: pkg{ImportPath: module + "/cmd/claw", Imports: []string{"github.com/BurntSushi/toml"}}, want: "BurntSushi"},
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
		{ImportPath: module + "/gate", Deps: []string{module + "/policies", module + "/internal/textesc", "fmt"}},
		{ImportPath: module + "/executor/internal/child", Deps: []string{module + "/internal/atomicfile", "os"}},
		{ImportPath: module + "/internal/broker", Imports: []string{module + "/receipts/store"}},
		{ImportPath: module + "/bench/receiptsgen", Imports: []string{module + "/receipts/store"}},
		{ImportPath: module + "/internal/hook", Imports: []string{module + "/internal/broker", module + "/receipts"}},
		{ImportPath: module + "/internal/serve", Imports: []string{module + "/internal/broker", module + "/agentic"}},
		{ImportPath: module + "/internal/logx", Deps: []string{module + "/internal/redact", "log/slog"}},
		{ImportPath: module + "/cmd/claw", Deps: []string{module + "/internal/config", module + "/executor/internal/child", "github.com/pelletier/go-toml/v2"},
			Imports: []string{module + "/internal/runtime", module + "/internal/config", "github.com/spf13/cobra", "golang.org/x/term", "os", "net/http"}},
	})
	if len(ok) != 0 {
		t.Fatalf("allowed dependency reported: %q", ok)
	}
}

// unruled are the packages no rule covers, each with why none needs one:
// none of them is linked into claw (cmd/claw's rule lists what it may
// import, and production packages never import these).
var unruled = map[string]string{
	"bench":                "measurement programs, run by bench/*.sh next to their anchors",
	"internal/channeltest": "the channels' test rig: real servers on 127.0.0.1 for tests",
	"internal/ttydrive":    "types into a terminal for the demo and the pty tests",
	"scripts/ttydrive":     "the command around internal/ttydrive",
	"internal/deptest":     "this checker",
	"testdata/everyday":    "the everyday-work corpus, decided by its own test",
}

// ruleFor returns the owner of the rule covering package p (relative to
// the module), or the unruled entry covering it.
func ruleFor(p string) (string, bool) {
	for owner := range rules {
		if under(p, owner) {
			return owner, true
		}
	}
	for owner := range unruled {
		if under(p, owner) {
			return owner, true
		}
	}
	return "", false
}

// TestEveryPackageHasARule: a new package gets a rule (or a reason in
// unruled) when it is added, not when something goes wrong.
func TestEveryPackageHasARule(t *testing.T) {
	pkgs := append(listPackages(t), listPackagesOf(t, module+"/testdata/everyday")...)
	for _, p := range pkgs {
		me, ok := rel(p.ImportPath)
		if !ok || me == "" {
			continue
		}
		if _, ok := ruleFor(me); !ok {
			t.Errorf("%s has no rule in deps_test.go: add one (what it may use and why), or say in unruled why it needs none", me)
		}
	}
	for owner := range unruled {
		if _, ruled := rules[owner]; ruled {
			t.Errorf("%s has a rule and is in unruled", owner)
		}
	}
	if _, ok := ruleFor("internal/newpkg"); ok {
		t.Error("a package without a rule was found covered: the check cannot fail")
	}
}
