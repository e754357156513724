package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
	"github.com/open-policy-agent/opa/v1/rego"
)

// userModules reads the sample user policies in testdata/user.
func userModules(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "user", "*.rego"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out["user/"+filepath.Base(name)] = string(b)
	}
	if len(out) == 0 {
		t.Fatal("no sample user policies in testdata/user")
	}
	return out
}

func TestRegoUnitTests(t *testing.T) {
	var buf bytes.Buffer
	passed, failed, err := RunTests(context.Background(), nil, &buf)
	if err != nil {
		t.Fatalf("RunTests: %v\n%s", err, buf.String())
	}
	if failed != 0 || passed == 0 {
		t.Fatalf("rego tests: %d passed, %d failed\n%s", passed, failed, buf.String())
	}
	if !strings.Contains(buf.String(), "PASS: ") {
		t.Errorf("report has no summary:\n%s", buf.String())
	}
	t.Logf("%d rego test cases passed", passed)
}

func TestRegoUserPolicies(t *testing.T) {
	var builtin bytes.Buffer
	base, _, err := RunTests(context.Background(), nil, &builtin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	passed, failed, err := RunTests(context.Background(), userModules(t), &buf)
	if err != nil {
		t.Fatalf("RunTests: %v\n%s", err, buf.String())
	}
	if failed != 0 {
		t.Fatalf("%d failed\n%s", failed, buf.String())
	}
	// The built-in tests isolate themselves from user policies, so they
	// all still pass; the user tests add to them.
	if passed <= base {
		t.Errorf("passed = %d with user policies, %d without: the user tests did not run", passed, base)
	}
}

func TestRunTestsReportsFailures(t *testing.T) {
	extra := map[string]string{
		"mine_test.rego": `package claw.mine_test

import data.claw.gate

test_wrong if {
	gate.result.decision == "allow" with input as {} with data.claw.user as {}
}

test_right if {
	gate.result.decision == "deny" with input as {} with data.claw.user as {}
}
`,
	}
	var buf bytes.Buffer
	passed, failed, err := RunTests(context.Background(), extra, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if failed != 1 {
		t.Errorf("failed = %d, want 1\n%s", failed, buf.String())
	}
	if passed == 0 {
		t.Error("nothing passed")
	}
	out := buf.String()
	for _, want := range []string{"mine_test.rego", "test_wrong: FAIL", "FAIL: 1/"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestRunTestsRejectsBadModules(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]string
		want  string
	}{
		{
			name:  "parse error",
			extra: map[string]string{"bad.rego": "package claw.user.bad\n\ndeny contains if {"},
			want:  "failed to parse bad.rego",
		},
		{
			name:  "name clash",
			extra: map[string]string{"main.rego": "package claw.user.x\n"},
			want:  "has the name of a built-in policy file",
		},
		{
			name:  "forbidden built-in",
			extra: map[string]string{"net.rego": "package claw.user.net\n\nx := http.send({\"method\": \"get\", \"url\": \"http://127.0.0.1\"})\n"},
			want:  "http.send",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, _, err := RunTests(context.Background(), tt.extra, &buf)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// allRegoFiles returns every .rego file of the package and its testdata.
func allRegoFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".rego") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestRegoIsFormatted(t *testing.T) {
	for _, name := range allRegoFiles(t) {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := format.Source(name, src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, src) {
			t.Errorf("%s is not formatted; run opa fmt -w on it", name)
		}
	}
}

// parseAll parses the embedded modules, tests included, with annotations.
func parseAll(t *testing.T, tests bool) map[string]*ast.Module {
	t.Helper()
	srcs, err := Modules()
	if err != nil {
		t.Fatal(err)
	}
	if tests {
		ts, err := Tests()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range ts {
			srcs[k] = v
		}
	}
	out := map[string]*ast.Module{}
	for name, src := range srcs {
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = m
	}
	return out
}

func TestCompilesStrictUnderCapabilities(t *testing.T) {
	for _, withTests := range []bool{false, true} {
		c := ast.NewCompiler().
			WithCapabilities(Capabilities()).
			WithStrict(true).
			WithDefaultRegoVersion(ast.RegoV1)
		c.Compile(parseAll(t, withTests))
		if c.Failed() {
			t.Fatalf("strict compile (tests %v): %v", withTests, c.Errors)
		}
	}
}

func TestCapabilitiesAllowlist(t *testing.T) {
	caps := Capabilities()
	have := map[string]bool{}
	for _, b := range caps.Builtins {
		have[b.Name] = true
	}
	// Every allowlisted name exists in this OPA version (no typos).
	for _, name := range allowedBuiltins {
		if !have[name] {
			t.Errorf("allowlisted built-in %s does not exist", name)
		}
	}
	for _, name := range []string{
		"http.send", "net.lookup_ip_addr", "net.cidr_contains", "opa.runtime",
		"time.now_ns", "time.date", "rand.intn", "uuid.rfc4122",
		"crypto.hmac.sha256", "io.jwt.decode_verify", "providers.aws.sign_req",
		"json.match_schema", "rego.parse_module",
	} {
		if have[name] {
			t.Errorf("%s is allowed", name)
		}
	}
	if caps.AllowNet == nil || len(caps.AllowNet) != 0 {
		t.Errorf("AllowNet = %#v, want empty and non-nil", caps.AllowNet)
	}
}

func TestCapabilitiesRejectUnsafeBuiltins(t *testing.T) {
	for _, call := range []string{
		`http.send({"method": "get", "url": "http://127.0.0.1:1"})`,
		`net.lookup_ip_addr("localhost")`,
		`opa.runtime()`,
		`time.now_ns()`,
		`rand.intn("x", 10)`,
		`uuid.rfc4122("x")`,
	} {
		src := "package claw.user.x\n\nx := " + call + "\n"
		_, err := rego.New(
			rego.Query("data.claw.user.x.x"),
			rego.Module("x.rego", src),
			rego.Capabilities(Capabilities()),
		).PrepareForEval(context.Background())
		if err == nil {
			t.Errorf("%s compiled under Capabilities()", call)
		} else if !strings.Contains(err.Error(), "undefined function") {
			t.Errorf("%s: %v", call, err)
		}
	}
}

var (
	idPattern  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$|^estop$`)
	severities = []string{"low", "medium", "high", "critical"}
)

// ruleIDs returns the id of every annotated rule of the policies, checking
// that each has a title, an id of the right form and a known severity.
func ruleIDs(t *testing.T) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for name, m := range parseAll(t, false) {
		for _, a := range m.Annotations {
			if a.Scope != "rule" {
				continue
			}
			where := a.Location.String()
			if a.Title == "" {
				t.Errorf("%s: rule metadata has no title", where)
			}
			id, _ := a.Custom["id"].(string)
			sev, _ := a.Custom["severity"].(string)
			if !idPattern.MatchString(id) {
				t.Errorf("%s: custom.id %q is not a dotted lower-case id", where, id)
			}
			if !slices.Contains(severities, sev) {
				t.Errorf("%s: custom.severity %q is not one of %v", where, sev, severities)
			}
			if prev, dup := ids[id]; dup {
				t.Errorf("%s: id %s is also used at %s", where, id, prev)
			}
			ids[id] = where
		}
		// Every rule that produces reasons carries metadata, except the
		// rules that fold a family of reasons (deny contains r if { guard;
		// some r in destructive }).
		for _, r := range m.Rules {
			head := r.Head.Ref()[0].String()
			if !slices.Contains(reasonSets, head) || len(r.Annotations) > 0 {
				continue
			}
			if !foldsReasonSet(r) {
				t.Errorf("%s:%d: %s rule has no METADATA", name, r.Location.Row, head)
			}
		}
		// Every rule that reads its metadata has some.
		for _, r := range m.Rules {
			if len(r.Annotations) == 0 && strings.Contains(r.String(), "rego.metadata.rule") {
				t.Errorf("%s:%d: rule calls rego.metadata.rule() but has no METADATA", name, r.Location.Row)
			}
		}
	}
	return ids
}

// reasonSets are the sets of reasons in package claw.gate.
var reasonSets = []string{"deny", "ask", "outcome", "input_denials", "path_denials", "user_denials", "destructive", "mark_deny", "mark_ask", "reach_denials", "family_denials", "program_asks", "supervised_ask", "net_denials", "net_asks", "destructive_commands"}

// foldsReasonSet reports whether r adds the members of another reason set.
func foldsReasonSet(r *ast.Rule) bool {
	found := false
	ast.WalkTerms(r.Body, func(t *ast.Term) bool {
		var name string
		switch v := t.Value.(type) {
		case ast.Var:
			name = string(v)
		case ast.Ref:
			name = v[0].String()
		}
		if slices.Contains(reasonSets, name) {
			found = true
		}
		return false
	})
	return found
}

func TestRuleMetadata(t *testing.T) {
	ids := ruleIDs(t)
	if len(ids) < 40 {
		t.Errorf("only %d rule ids", len(ids))
	}
}

// TestEveryRuleHasCases checks that the rule tables hold, for every rule
// id, a case where the rule fires and one where it stays quiet.
func TestEveryRuleHasCases(t *testing.T) {
	ids := ruleIDs(t)
	var mods []func(*rego.Rego)
	for name, m := range parseAll(t, true) {
		mods = append(mods, rego.ParsedModule(m))
		_ = name
	}
	for _, table := range []string{"fires", "quiet"} {
		rs, err := rego.New(append(mods,
			rego.Query("{tc.id | some tc in data.claw.gate_test."+table+"}"),
			rego.Capabilities(Capabilities()),
		)...).Eval(context.Background())
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s: %v %v", table, rs, err)
		}
		covered := map[string]bool{}
		for _, v := range rs[0].Expressions[0].Value.([]any) {
			covered[v.(string)] = true
		}
		for id := range ids {
			if !covered[id] {
				t.Errorf("rule %s has no %s case", id, table)
			}
		}
	}
}

func TestDocListsEveryRule(t *testing.T) {
	doc, err := os.ReadFile("policies.go")
	if err != nil {
		t.Fatal(err)
	}
	for id := range ruleIDs(t) {
		if !regexp.MustCompile(`//\s+` + regexp.QuoteMeta(id) + `\s`).Match(doc) {
			t.Errorf("the package doc does not describe rule %s", id)
		}
	}
}

func TestModulesAndTests(t *testing.T) {
	mods, err := Modules()
	if err != nil {
		t.Fatal(err)
	}
	tests, err := Tests()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"main.rego", "lib.rego", "paths.rego", "commands.rego", "destructive.rego", "network.rego", "tools.rego"} {
		if _, ok := mods[want]; !ok {
			t.Errorf("Modules() lacks %s", want)
		}
	}
	for name := range mods {
		if strings.HasSuffix(name, "_test.rego") {
			t.Errorf("Modules() has the test %s", name)
		}
	}
	if len(tests) == 0 {
		t.Error("Tests() is empty")
	}
	for name := range tests {
		if !strings.HasSuffix(name, "_test.rego") {
			t.Errorf("Tests() has %s", name)
		}
	}
}

func TestBuiltinForbiddenPaths(t *testing.T) {
	got := BuiltinForbiddenPaths()
	seen := map[string]bool{}
	for _, p := range got {
		if seen[p] {
			t.Errorf("duplicate entry %s", p)
		}
		seen[p] = true
		if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "**/") {
			t.Errorf("entry %q is not absolute, ~/ or **/", p)
		}
		if strings.HasSuffix(p, "/") || strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") {
			t.Errorf("entry %q is not clean", p)
		}
	}
	for _, want := range []string{
		"~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.docker", "~/.netrc",
		"~/.config/gcloud", "~/.azure", "~/.git-credentials", "~/.npmrc",
		"~/.pypirc", "/root", "/etc/shadow*", "/etc/sudoers", "/proc/*/environ",
		"/proc/*/mem", "/proc/*/root", "/proc/kcore", "/dev/sd*", "/dev/nvme*",
		"/dev/vd*", "/dev/hd*", "/dev/mem", "/dev/kmem", "**/docker.sock",
		"**/containerd.sock", "/boot", "/sys",
	} {
		if !seen[want] {
			t.Errorf("built-in list lacks %s", want)
		}
	}
	got[0] = "changed"
	if BuiltinForbiddenPaths()[0] == "changed" {
		t.Error("BuiltinForbiddenPaths returns shared storage")
	}
}

// prepare compiles the policies like the gate does.
func prepare(tb testing.TB) rego.PreparedEvalQuery {
	tb.Helper()
	mods, err := Modules()
	if err != nil {
		tb.Fatal(err)
	}
	opts := []func(*rego.Rego){
		rego.Query(Query),
		rego.Capabilities(Capabilities()),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
		rego.SetRegoVersion(ast.RegoV1),
		rego.Store(mustStore(tb, benchConfig)),
	}
	for name, src := range mods {
		opts = append(opts, rego.Module(name, src))
	}
	pq, err := rego.New(opts...).PrepareForEval(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return pq
}

// FuzzResult checks that the result is defined and well formed for any
// JSON input (or that evaluation fails, which the gate turns into a
// denial), and that it never panics.
func FuzzResult(f *testing.F) {
	for _, in := range benchInputs {
		b, err := json.Marshal(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"kind":"shell","parsed":{"commands":[{"name":"rm","paths":[1]}]}}`))
	f.Add([]byte(`{"kind":"http","url":{"host":7,"class":"public"}}`))
	pq := prepare(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var in any
		if json.Unmarshal(data, &in) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		rs, err := pq.Eval(ctx, rego.EvalInput(in))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("evaluation took %v for %s", d, data)
		}
		if err != nil {
			return
		}
		if len(rs) != 1 {
			t.Fatalf("result undefined for %s", data)
		}
		res, ok := rs[0].Expressions[0].Value.(map[string]any)
		if !ok {
			t.Fatalf("result %v is not an object", rs[0].Expressions[0].Value)
		}
		if d := res["decision"]; !slices.Contains([]any{"allow", "ask", "passphrase", "deny"}, d) {
			t.Fatalf("decision %v for %s", d, data)
		}
		if reasons, _ := res["reasons"].([]any); len(reasons) == 0 {
			t.Fatalf("no reasons for %s", data)
		}
		if d := res["decision"]; d != "deny" && !isWellFormedAction(in) {
			t.Fatalf("decision %v for malformed input %s", d, data)
		}
	})
}

// isWellFormedAction reports whether in looks enough like a gate input
// for something other than a denial to be possible.
func isWellFormedAction(in any) bool {
	m, ok := in.(map[string]any)
	if !ok {
		return false
	}
	v, _ := m["version"].(float64)
	return v == 1
}

// TestForbiddenGlobMatchesRego checks that ForbiddenGlob builds exactly the
// glob the policies build themselves.
func TestForbiddenGlobMatchesRego(t *testing.T) {
	mods, err := Modules()
	if err != nil {
		t.Fatal(err)
	}
	lists := [][]string{
		{"/etc", "/home/u/.ssh"},
		{"/proc/*/environ", "**/docker.sock", "/dev/sd*"},
		{`/odd/a,b{c}[d]?\e`, "/x"},
		{"/a", "/"},
		{"/only"},
	}
	for _, p := range BuiltinForbiddenPaths() {
		lists[len(lists)-1] = append(lists[len(lists)-1], strings.Replace(p, "~/", "/home/u/", 1))
	}
	for _, list := range lists {
		opts := []func(*rego.Rego){
			rego.Query("data.claw.gate.forbidden_glob"),
			rego.Capabilities(Capabilities()),
			rego.Store(mustStore(t, map[string]any{"claw": map[string]any{"config": map[string]any{"forbidden_paths": toAny(list)}}})),
		}
		for name, src := range mods {
			opts = append(opts, rego.Module(name, src))
		}
		rs, err := rego.New(opts...).Eval(context.Background())
		if err != nil || len(rs) != 1 {
			t.Fatalf("%v: %v %v", list, rs, err)
		}
		if got, want := ForbiddenGlob(list), rs[0].Expressions[0].Value; got != want {
			t.Errorf("ForbiddenGlob(%q) = %q, policies build %q", list, got, want)
		}
	}
	if g := ForbiddenGlob(nil); g != "" {
		t.Errorf("ForbiddenGlob(nil) = %q", g)
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
