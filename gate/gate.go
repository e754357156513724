package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/policies"
)

// Decision values, strictest first.
const (
	Deny       = "deny"
	Passphrase = "passphrase"
	Ask        = "ask"
	Allow      = "allow"
)

// Reason is one rule that contributed to a decision.
type Reason struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Msg      string `json:"msg"`
}

// SandboxPlan is what the executor may grant the action.
type SandboxPlan struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
	Net   bool     `json:"net"`
	// Network lists what a shell action may connect to.
	Network NetworkPlan `json:"network"`
	// Protect lists workspace paths that run code outside the sandbox
	// later (.git/hooks, .git/config, .vscode, ...): the executor keeps
	// those that exist read-only inside the writable workspace.
	Protect []string `json:"protect"`
}

// NetworkPlan is the network reach of a shell action: the destinations
// the gate checked against allowed_domains, as canonical "host:port"
// strings ("[v6]:port" for an IPv6 address), sorted. The egress proxy
// admits these and nothing else. Empty: no network.
type NetworkPlan struct {
	Hosts []string `json:"hosts"`
}

// Decision is the gate's answer for one action.
type Decision struct {
	Decision     string      `json:"decision"`
	Risk         string      `json:"risk"`
	Reasons      []Reason    `json:"reasons"`
	Sandbox      SandboxPlan `json:"sandbox"`
	PolicyDigest string      `json:"policy_digest"`
	// Grant is the id of the grant that turned an ask into this allow
	// (reason grant.applied); empty otherwise.
	Grant string `json:"grant,omitempty"`
}

// RuleIDs returns the ids of the reasons, in order.
func (d Decision) RuleIDs() []string {
	ids := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		ids[i] = r.ID
	}
	return ids
}

// Policy is the configuration the policies see as data.claw.config. Paths
// must already be absolute and expanded; the built-in forbidden paths are
// merged in by New.
type Policy struct {
	WorkspaceOnly            bool     `json:"workspace_only"`
	ForbiddenPaths           []string `json:"forbidden_paths"`
	ReadPaths                []string `json:"read_paths"`
	ForbiddenCommands        []string `json:"forbidden_commands"`
	AllowedCommands          []string `json:"allowed_commands"`
	AllowedDomains           []string `json:"allowed_domains"`
	AllowedRegistries        []string `json:"allowed_registries"`   // package managers' default registries
	AllowPrivateCIDRs        []string `json:"allow_private_cidrs"`  // non-public ranges shell network may reach
	WorkspaceExecAllow       []string `json:"workspace_exec_allow"` // workspace-relative paths exempt from persist.workspace_exec
	PassphraseEnabled        bool     `json:"passphrase_enabled"`
	PassphraseFor            []string `json:"passphrase_for"`
	AllowPrivilegeEscalation bool     `json:"allow_privilege_escalation"`
}

// Options configure an Engine.
type Options struct {
	Policy Policy
	// Home expands "~/" in the built-in forbidden paths.
	Home string
	// ClawHome is claw's own state directory ($CLAW_HOME: config, keys,
	// receipts, user policies). It is always forbidden: an agent that
	// could write there could rewrite its own policy or its audit trail.
	ClawHome string
	// UserPolicyDir holds user policies (*.rego; *_test.rego are tests).
	// A missing directory is fine; an unreadable or invalid policy is an
	// error.
	UserPolicyDir string
	// Timeout bounds the CPU time one decision may use (default 250ms),
	// and at 40 times that (at most 2 minutes, or Timeout when that is
	// more) its wall-clock time. A timeout is a deny.
	Timeout time.Duration
}

// Limits on user policies.
const (
	maxUserPolicies     = 64
	maxUserPolicyBytes  = 256 << 10
	defaultTimeout      = 250 * time.Millisecond
	userPackagePrefix   = "claw.user."
	resultQuery         = "data.claw.gate.result"
	reasonGateError     = "gate.error"
	reasonGateInvariant = "gate.invariant"
	reasonEstop         = "estop"
)

// ErrPolicy marks errors in loading or compiling policies.
var ErrPolicy = errors.New("policy error")

// Engine evaluates actions against the compiled policies. It is safe for
// concurrent use; Reload swaps the compiled policies atomically.
type Engine struct {
	opts   Options
	cur    atomic.Pointer[compiled]
	grants grantState
}

type compiled struct {
	pq      rego.PreparedEvalQuery
	digest  string
	modules map[string]string // all modules, by name
	tests   map[string]string // user tests, by name
	data    map[string]any
	store   storage.Store
	granted grantsWritten
}

// New compiles the built-in and user policies once.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	e := &Engine{opts: opts}
	if err := e.Reload(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// Reload re-reads the user policies and re-prepares the query. On error
// the previous policies stay in force.
func (e *Engine) Reload(ctx context.Context) error {
	c, err := compile(ctx, e.opts)
	if err != nil {
		return err
	}
	e.cur.Store(c)
	return nil
}

// Digest is the sha256 of the policy set in force ("sha256:…").
func (e *Engine) Digest() string { return e.cur.Load().digest }

// Modules returns the policy modules in force (built-in and user), by name.
func (e *Engine) Modules() map[string]string { return e.cur.Load().modules }

// UserTests returns the user policy test modules, by name.
func (e *Engine) UserTests() map[string]string { return e.cur.Load().tests }

// Data returns the data document the policies see.
func (e *Engine) Data() map[string]any { return e.cur.Load().data }

func compile(ctx context.Context, opts Options) (*compiled, error) {
	return compileWith(ctx, opts, false)
}

// compileWith compiles the built-in and user policies, the collector
// held off (see pauseGC): the built-ins
// parsed ahead (see Prefetch), and without the compiler's check stages
// when there are no user policies (see checkStages). With plain set it
// compiles them the way OPA does on its own, every stage over modules it
// parses itself: the reference the tests compare with.
func compileWith(ctx context.Context, opts Options, plain bool) (*compiled, error) {
	defer pauseGC()()
	all, err := builtinSources()
	if err != nil {
		return nil, err
	}
	var parsed map[string]*ast.Module
	if !plain {
		if parsed, err = parsedBuiltins(all); err != nil {
			return nil, err
		}
	}
	userMods, userTests, err := LoadUserPolicies(opts.UserPolicyDir)
	if err != nil {
		return nil, err
	}
	for n, s := range userMods {
		all["user/"+n] = s
	}
	data := map[string]any{"claw": map[string]any{"config": configData(opts), "grants": []any{}}}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	// AST values on read: otherwise every decision converts
	// data.claw.config (the forbidden list) again.
	store := inmem.NewFromObjectWithOpts(data, inmem.OptReturnASTValuesOnRead(true))
	regoOpts := []func(*rego.Rego){
		rego.Query(resultQuery),
		rego.Store(store),
		rego.Capabilities(policies.Capabilities()),
		rego.Strict(true),
		rego.StrictBuiltinErrors(true),
		rego.SetRegoVersion(ast.RegoV1),
	}
	if len(userMods) == 0 && !plain {
		regoOpts = append(regoOpts, rego.CompilerHook(func(c *ast.Compiler) {
			c.WithSkipStages(checkStages...)
		}))
	}
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", n, len(all[n]), all[n])
		if m, ok := parsed[n]; ok {
			regoOpts = append(regoOpts, rego.ParsedModule(m))
		} else {
			regoOpts = append(regoOpts, rego.Module(n, all[n]))
		}
	}
	dj, _ := json.Marshal(data)
	h.Write(dj)
	pq, err := rego.New(regoOpts...).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	return &compiled{
		pq:      pq,
		digest:  "sha256:" + hex.EncodeToString(h.Sum(nil)),
		modules: all,
		tests:   userTests,
		data:    data,
		store:   store,
	}, nil
}

// configData builds data.claw.config, merging the built-in forbidden paths.
func configData(opts Options) map[string]any {
	p := opts.Policy
	forbidden := append([]string{}, p.ForbiddenPaths...)
	for _, f := range policies.BuiltinForbiddenPaths() {
		if strings.HasPrefix(f, "~/") {
			if opts.Home == "" {
				continue
			}
			f = filepath.Join(opts.Home, f[2:])
		}
		forbidden = append(forbidden, f)
	}
	if opts.ClawHome != "" {
		forbidden = append(forbidden, filepath.Clean(opts.ClawHome))
	}
	sort.Strings(forbidden)
	forbidden = dedupe(forbidden)
	list := func(s []string) []any {
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	return map[string]any{
		"workspace_only":             p.WorkspaceOnly,
		"forbidden_paths":            list(forbidden),
		"forbidden_glob":             policies.ForbiddenGlob(forbidden),
		"read_paths":                 list(p.ReadPaths),
		"forbidden_commands":         list(p.ForbiddenCommands),
		"allowed_commands":           list(p.AllowedCommands),
		"allowed_domains":            list(p.AllowedDomains),
		"allowed_registries":         list(p.AllowedRegistries),
		"allow_private_cidrs":        list(p.AllowPrivateCIDRs),
		"workspace_exec_allow":       list(p.WorkspaceExecAllow),
		"passphrase_enabled":         p.PassphraseEnabled,
		"passphrase_for":             list(p.PassphraseFor),
		"allow_privilege_escalation": p.AllowPrivilegeEscalation,
	}
}

// LoadUserPolicies reads dir/*.rego. Each module must be in a package
// claw.user.<name>, exactly one level below claw.user (so it can only add
// denials and gates, which the built-in policies collect from
// data.claw.user[_]); *_test.rego files are
// returned as tests. A missing dir is not an error.
func LoadUserPolicies(dir string) (mods, tests map[string]string, err error) {
	mods, tests = map[string]string{}, map[string]string{}
	if dir == "" {
		return mods, tests, nil
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return mods, tests, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: reading user policies: %v", ErrPolicy, err)
	}
	n := 0
	for _, ent := range entries {
		name := ent.Name()
		if ent.IsDir() || !strings.HasSuffix(name, ".rego") {
			continue
		}
		n++
		if n > maxUserPolicies {
			return nil, nil, fmt.Errorf("%w: more than %d user policy files in %s", ErrPolicy, maxUserPolicies, dir)
		}
		path := filepath.Join(dir, name)
		src, err := readBounded(path, maxUserPolicyBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		m, err := ast.ParseModuleWithOpts(path, src, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		pkg := strings.TrimPrefix(m.Package.Path.String(), "data.")
		rest, ok := strings.CutPrefix(pkg, userPackagePrefix)
		if !ok || rest == "" || strings.ContainsAny(rest, ".[") {
			return nil, nil, fmt.Errorf("%w: %s: package %s: user policies must be in a package under %s<name>, where they can only add deny, ask and passphrase rules",
				ErrPolicy, path, pkg, userPackagePrefix)
		}
		if strings.HasSuffix(name, "_test.rego") {
			tests[name] = src
		} else {
			mods[name] = src
		}
	}
	return mods, tests, nil
}

func readBounded(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(b)) > limit {
		return "", fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return string(b), nil
}

// Decide evaluates one action. It always returns a usable Decision: when
// the gate cannot decide (evaluation error, timeout, undefined or malformed
// result) the decision is a deny with reason gate.error, and err says why.
func (e *Engine) Decide(ctx context.Context, a Action, c Context) (Decision, error) {
	d, _, err := e.decide(ctx, BuildInput(a, c), nil)
	return d, err
}

// DecideInput evaluates a prepared input (see BuildInput).
func (e *Engine) DecideInput(ctx context.Context, in *Input) (Decision, error) {
	d, _, err := e.decide(ctx, in, nil)
	return d, err
}

// Explain evaluates like DecideInput and also returns the rules that
// fired, in evaluation order, as "id (file:line)" lines.
func (e *Engine) Explain(ctx context.Context, in *Input) (Decision, []string, error) {
	buf := topdown.NewBufferTracer()
	d, _, err := e.decide(ctx, in, buf)
	return d, firedRules(*buf), err
}

func (e *Engine) decide(ctx context.Context, in *Input, tracer *topdown.BufferTracer) (Decision, *compiled, error) {
	c := e.cur.Load()
	fail := func(err error) (Decision, *compiled, error) {
		return denyDecision(c.digest, reasonGateError, "the gate could not decide: "+err.Error()), c, err
	}
	val, err := inputValue(in)
	if err != nil {
		return fail(fmt.Errorf("building input: %w", err))
	}
	if err := e.syncGrants(ctx, c); err != nil {
		return fail(fmt.Errorf("loading grants: %w", err))
	}
	evalOpts := []rego.EvalOption{rego.EvalParsedInput(val)}
	if tracer != nil {
		evalOpts = append(evalOpts, rego.EvalQueryTracer(tracer))
	}
	rs, err := e.eval(ctx, c, evalOpts)
	if err != nil {
		return fail(fmt.Errorf("evaluating policy: %w", err))
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return fail(errors.New("policy result is undefined"))
	}
	d, err := parseResult(rs[0].Expressions[0].Value)
	if err != nil {
		return fail(err)
	}
	d.PolicyDigest = c.digest
	d.Sandbox.Protect = underWorkspace(in.Context.Workspace, d.Sandbox.Protect)
	return enforceInvariants(d, in), c, nil
}

// eval evaluates the prepared query within the decision's CPU budget
// (workBudget), on the calling goroutine's thread. The evaluation is
// stopped through a cancel the context's end triggers: left to itself,
// OPA starts a goroutine per evaluation to watch the context, and ending
// it woke another thread at the end of every decision.
func (e *Engine) eval(ctx context.Context, c *compiled, opts []rego.EvalOption) (rego.ResultSet, error) {
	ctx, done := workBudget(ctx, e.opts.Timeout, wallBound(e.opts.Timeout))
	defer done()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	cancel := topdown.NewCancel()
	defer context.AfterFunc(ctx, cancel.Cancel)()
	rs, err := c.pq.Eval(ctx, append(opts, rego.EvalExternalCancel(cancel))...)
	if ctx.Err() != nil {
		// A decision that arrives after its deadline is not one, and
		// the cause says which bound it crossed.
		err = context.Cause(ctx)
	}
	return rs, err
}

func denyDecision(digest, id, msg string) Decision {
	return Decision{
		Decision:     Deny,
		Risk:         "critical",
		Reasons:      []Reason{{ID: id, Severity: "critical", Msg: msg}},
		Sandbox:      SandboxPlan{Read: []string{}, Write: []string{}, Network: NetworkPlan{Hosts: []string{}}, Protect: []string{}},
		PolicyDigest: digest,
	}
}

var (
	validDecisions = map[string]bool{Allow: true, Ask: true, Passphrase: true, Deny: true}
	validRisks     = map[string]bool{"low": true, "medium": true, "high": true, "critical": true}
)

// parseResult converts the policy's result document, refusing anything
// malformed: it reads the document the way a strict JSON decoder would
// (unknown fields and wrong types are errors; null leaves a field empty),
// without a JSON round trip.
func parseResult(v any) (Decision, error) {
	var d Decision
	m, ok := v.(map[string]any)
	if !ok {
		return Decision{}, fmt.Errorf("malformed policy result: %T is not an object", v)
	}
	for k, fv := range m {
		var err error
		switch k {
		case "decision":
			err = resultString(fv, &d.Decision)
		case "risk":
			err = resultString(fv, &d.Risk)
		case "policy_digest":
			err = resultString(fv, &d.PolicyDigest)
		case "grant":
			err = resultString(fv, &d.Grant)
		case "reasons":
			d.Reasons, err = resultReasons(fv)
		case "sandbox":
			err = resultSandbox(fv, &d.Sandbox)
		default:
			err = fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return Decision{}, fmt.Errorf("malformed policy result: %s: %w", k, err)
		}
	}
	if !validDecisions[d.Decision] {
		return Decision{}, fmt.Errorf("policy result has invalid decision %q", d.Decision)
	}
	if !validRisks[d.Risk] {
		return Decision{}, fmt.Errorf("policy result has invalid risk %q", d.Risk)
	}
	if len(d.Reasons) == 0 {
		return Decision{}, errors.New("policy result has no reasons")
	}
	for _, r := range d.Reasons {
		if r.ID == "" {
			return Decision{}, errors.New("policy result has a reason without an id")
		}
	}
	if d.Sandbox.Read == nil {
		d.Sandbox.Read = []string{}
	}
	if d.Sandbox.Write == nil {
		d.Sandbox.Write = []string{}
	}
	if d.Sandbox.Network.Hosts == nil {
		d.Sandbox.Network.Hosts = []string{}
	}
	if d.Sandbox.Protect == nil {
		d.Sandbox.Protect = []string{}
	}
	return d, nil
}

func resultString(v any, dst *string) error {
	switch s := v.(type) {
	case nil:
		return nil
	case string:
		*dst = s
		return nil
	}
	return fmt.Errorf("%T is not a string", v)
}

// resultArray returns v as an array; null is an empty one.
func resultArray(v any) ([]any, error) {
	if v == nil {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%T is not an array", v)
	}
	return a, nil
}

func resultStrings(v any) ([]string, error) {
	a, err := resultArray(v)
	if err != nil || a == nil {
		return nil, err
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("element %d: %T is not a string", i, e)
		}
		out[i] = s
	}
	return out, nil
}

func resultReasons(v any) ([]Reason, error) {
	a, err := resultArray(v)
	if err != nil || a == nil {
		return nil, err
	}
	out := make([]Reason, len(a))
	for i, e := range a {
		if e == nil {
			continue
		}
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reason %d: %T is not an object", i, e)
		}
		for k, fv := range m {
			var err error
			switch k {
			case "id":
				err = resultString(fv, &out[i].ID)
			case "severity":
				err = resultString(fv, &out[i].Severity)
			case "msg":
				err = resultString(fv, &out[i].Msg)
			default:
				err = fmt.Errorf("unknown field %q", k)
			}
			if err != nil {
				return nil, fmt.Errorf("reason %d: %s: %w", i, k, err)
			}
		}
	}
	return out, nil
}

func resultSandbox(v any, sb *SandboxPlan) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%T is not an object", v)
	}
	for k, fv := range m {
		var err error
		switch k {
		case "read":
			sb.Read, err = resultStrings(fv)
		case "write":
			sb.Write, err = resultStrings(fv)
		case "network":
			err = resultNetwork(fv, &sb.Network)
		case "protect":
			sb.Protect, err = resultStrings(fv)
		case "net":
			switch b := fv.(type) {
			case nil:
			case bool:
				sb.Net = b
			default:
				err = fmt.Errorf("%T is not a boolean", fv)
			}
		default:
			err = fmt.Errorf("unknown field %q", k)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func resultNetwork(v any, np *NetworkPlan) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%T is not an object", v)
	}
	for k, fv := range m {
		if k != "hosts" {
			return fmt.Errorf("unknown field %q", k)
		}
		hosts, err := resultStrings(fv)
		if err != nil {
			return fmt.Errorf("hosts: %w", err)
		}
		np.Hosts = hosts
	}
	return nil
}

// underWorkspace makes the plan's protected paths, relative to the
// workspace, absolute; one that would leave the workspace is dropped.
func underWorkspace(ws string, rel []string) []string {
	out := make([]string, 0, len(rel))
	for _, r := range rel {
		p := filepath.Join(ws, r)
		if filepath.IsAbs(r) || !strings.HasPrefix(p, ws+"/") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// enforceInvariants holds the design's invariants even against a faulty
// policy: estop and unusable input always deny, and a dynamic or
// unparseable shell command never gets a plain allow.
func enforceInvariants(d Decision, in *Input) Decision {
	switch {
	case in.Context.Estop && d.Decision != Deny:
		return denyDecision(d.PolicyDigest, reasonEstop, "emergency stop is engaged")
	case in.Kind == toolkind.Unknown && d.Decision != Deny:
		return denyDecision(d.PolicyDigest, reasonGateInvariant, "unknown tool "+string(in.Action.Tool)+" was not denied by the policy")
	case len(in.Errors) > 0 && d.Decision != Deny:
		return denyDecision(d.PolicyDigest, reasonGateInvariant, "invalid input was not denied by the policy: "+in.Errors[0])
	case in.Parsed != nil && in.Parsed.Error != "" && d.Decision != Deny:
		return denyDecision(d.PolicyDigest, reasonGateInvariant, "unparseable command was not denied by the policy")
	case in.Parsed != nil && in.Parsed.Dynamic && d.Decision == Allow:
		return denyDecision(d.PolicyDigest, reasonGateInvariant, "dynamic command got a plain allow from the policy")
	}
	return d
}
