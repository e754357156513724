package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/hook"
)

// Run is one delegate call to an external agent: the agent's config and
// everything the parent claw lends it.
type Run struct {
	Name   string // the NAME of [delegate.external.NAME]
	Config config.External
	Task   string
	// Workspace is the canonical workspace the agent works in.
	Workspace string
	// Autonomy and ToolsAllow are the delegation's, already narrowed
	// (never wider than the parent's); ToolsAllow nil is every tool.
	Autonomy   string
	ToolsAllow []string
	// ParentAction is the delegate action's id; every receipt of the
	// agent's tool calls names it.
	ParentAction string
	// Exe is claw's executable: the agent's hook runs it.
	Exe     string
	Sandbox Sandbox
	// Guard returns a guard over the parent's gate and receipt log; Run
	// sets its autonomy, workspace, parent action and tools.
	Guard func() *hook.Guard
	// Getenv reads claw's environment, for the configured secrets.
	Getenv func(string) string
	// Redact removes secrets from the answer and from the receipts of the
	// agent's tool calls.
	Redact func(string) string
}

// Sandbox is the part of the parent's sandbox settings a run uses.
type Sandbox struct {
	Path           []string // the sandbox's PATH
	PathRead       []string // what that PATH needs readable
	Protect        []string // workspace paths kept read-only
	AllowPrivate   []string // non-public ranges the egress proxy may reach
	Limits         executor.Limits
	MinLandlockABI int
	RunAs          string
}

// Result is what the delegate call gives back to the model.
type Result struct {
	Agent    string `json:"agent"`
	Autonomy string `json:"autonomy"`
	// Status is ok, failed (the agent's error, or a non-zero exit),
	// timeout or killed.
	Status    string  `json:"status"`
	Exit      int     `json:"exit"`
	Result    string  `json:"result"`
	Truncated bool    `json:"truncated,omitempty"`
	NumTurns  int     `json:"num_turns,omitempty"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
	// ToolCalls are the agent's tool calls as claw's hook answered them.
	ToolCalls []Call `json:"tool_calls"`
	// Stderr is the end of the agent's standard error when it failed.
	Stderr string `json:"stderr,omitempty"`
}

// Call is one of the agent's tool calls and claw's answer to it.
type Call struct {
	Tool   string `json:"tool"`
	Answer string `json:"answer"` // allow, ask, deny, or block (no answer)
}

// maxCalls bounds the tool calls listed in a Result.
const maxCalls = 100

// Start runs the agent to its end and returns its answer. An error means
// it could not run (the sandbox, a missing secret); an agent that ran and
// failed is a Result with its status.
func (r *Run) Start(ctx context.Context) (*Result, error) {
	spool, err := r.makeSpool()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(spool)
	spec, err := r.spec(spool)
	if err != nil {
		return nil, err
	}
	red := hiding(r.Redact, spec.Secrets, r.Config.Secrets)
	res := &Result{Agent: r.Name, Autonomy: r.Autonomy, ToolCalls: []Call{}}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		serve(sctx, spool, r.decider(res, red))
	}()
	out, err := executor.Run(ctx, spec)
	stop()
	<-served
	if err != nil {
		return nil, err
	}
	r.fill(res, &out, red)
	return res, nil
}

// hiding is red (nil: none) that also replaces the values of the
// entries of env (NAME=value) that names lists: the secrets the agent was
// handed stay out of its answer and the receipts of its tool calls.
func hiding(red func(string) string, env, names []string) func(string) string {
	var vals []string
	for _, e := range env {
		if n, v, _ := strings.Cut(e, "="); slices.Contains(names, n) && v != "" {
			vals = append(vals, v)
		}
	}
	return func(s string) string {
		for _, v := range vals {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
		if red != nil {
			s = red(s)
		}
		return s
	}
}

// decider answers the agent's hook calls with a guard of the
// delegation, and notes each answer in res.
func (r *Run) decider(res *Result, red func(string) string) decideFunc {
	return func(ctx context.Context, event []byte) answer {
		g := r.Guard()
		g.Redact = red
		g.Autonomy, g.Workspace, g.ParentAction, g.ToolsAllow = r.Autonomy, r.Workspace, r.ParentAction, r.ToolsAllow
		g.Trusted = map[string]bool{}
		for _, t := range r.Config.TrustTools {
			g.Trusted[t] = true
		}
		run := hook.Runner{Format: hook.ClaudeCode, Open: func(context.Context) (*hook.Guard, func(), error) { return g, nil, nil }}
		var stdout, stderr bytes.Buffer
		code := run.Run(ctx, bytes.NewReader(event), &stdout, &stderr)
		if len(res.ToolCalls) < maxCalls {
			res.ToolCalls = append(res.ToolCalls, Call{Tool: toolName(event), Answer: answerOf(code, stdout.Bytes())})
		}
		return answer{Exit: code, Stdout: stdout.String(), Stderr: stderr.String()}
	}
}

// toolName is the event's tool name, clipped, or "?".
func toolName(event []byte) string {
	var ev struct {
		ToolName string `json:"tool_name"`
	}
	if json.Unmarshal(event, &ev) != nil || ev.ToolName == "" {
		return "?"
	}
	return clip(ev.ToolName, 64)
}

// answerOf is the permission decision in a hook answer, or "block".
func answerOf(code int, stdout []byte) string {
	var o struct {
		H struct {
			D string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if code != hook.ExitAnswered || json.Unmarshal(stdout, &o) != nil || o.H.D == "" {
		return "block"
	}
	return o.H.D
}

// makeSpool makes the run's spool: the settings file and the answers
// readable by the sandbox, requests writable by it.
func (r *Run) makeSpool() (string, error) {
	sweepSpools(os.TempDir())
	spool, err := os.MkdirTemp("", spoolPrefix+spoolOwner())
	if err != nil {
		return "", fmt.Errorf("delegate: %w", err)
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(spool)
		return "", fmt.Errorf("delegate: %w", err)
	}
	if err := os.Chmod(spool, 0o711); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(filepath.Join(spool, ansDir), 0o711); err != nil {
		return fail(err)
	}
	req := filepath.Join(spool, reqDir)
	if err := os.Mkdir(req, 0o700); err != nil {
		return fail(err)
	}
	if uid, gid, ok := r.runAs(); ok {
		if err := os.Chown(req, uid, gid); err != nil {
			return fail(err)
		}
	}
	settings, err := hookSettings(r.Exe, spool)
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(spool, "settings.json"), settings, 0o644); err != nil {
		return fail(err)
	}
	return spool, nil
}

// runAs is the uid the sandbox runs the agent as when claw is root and
// the config names a user.
func (r *Run) runAs() (uid, gid int, ok bool) {
	if os.Geteuid() != 0 || r.Sandbox.RunAs == "" {
		return 0, 0, false
	}
	if n, err := strconv.Atoi(r.Sandbox.RunAs); err == nil {
		return n, n, true
	}
	u, err := user.Lookup(r.Sandbox.RunAs)
	if err != nil {
		return 0, 0, false
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	return uid, gid, err1 == nil && err2 == nil
}

// hookTimeout is the agent's timeout for one hook call, above the
// relay's own deadline: a hook the agent kills is one that failed open.
const hookTimeout = 60

// hookSettings is a Claude Code settings file that runs claw's hook
// before every tool call.
func hookSettings(exe, spool string) ([]byte, error) {
	type h struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type m struct {
		Matcher string `json:"matcher"`
		Hooks   []h    `json:"hooks"`
	}
	var s struct {
		Hooks struct {
			PreToolUse []m `json:"PreToolUse"`
		} `json:"hooks"`
	}
	cmd := shellQuote(exe) + " " + HookEntry + " " + shellQuote(spool)
	s.Hooks.PreToolUse = []m{{Matcher: "*", Hooks: []h{{Type: "command", Command: cmd, Timeout: hookTimeout}}}}
	return json.MarshalIndent(s, "", "  ")
}

// shellQuote quotes s for sh, which runs the hook's command.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// spec is the agent's sandbox.
func (r *Run) spec(spool string) (executor.Spec, error) {
	x := r.Config
	argv := slices.Concat(x.Command, []string{x.SettingsFlag, filepath.Join(spool, "settings.json")})
	if x.TurnsFlag != "" && x.MaxTurns > 0 {
		argv = append(argv, x.TurnsFlag, strconv.Itoa(x.MaxTurns))
	}
	argv = append(argv, r.Task)
	path := executor.DefaultPath
	if len(r.Sandbox.Path) > 0 {
		path = strings.Join(r.Sandbox.Path, ":")
	}
	s := executor.Spec{
		Argv:           argv,
		Cwd:            r.Workspace,
		Read:           slices.Concat([]string{r.Workspace, spool, r.Exe}, r.Sandbox.PathRead),
		Write:          []string{filepath.Join(spool, reqDir)},
		Env:            []string{"PATH=" + path},
		Timeout:        x.Timeout.Duration,
		MaxOutput:      maxStdout,
		Limits:         r.Sandbox.Limits,
		MinLandlockABI: r.Sandbox.MinLandlockABI,
	}
	if os.Geteuid() == 0 {
		// run_as is for a claw that runs as root, as the broker has it
		s.RunAs = r.Sandbox.RunAs
	}
	if s.Timeout <= 0 {
		s.Timeout = config.DefaultExternalTimeout
	}
	s.Limits.CPUSeconds = uint64(s.Timeout / time.Second)
	if exe, err := executor.LookPath(x.Command[0], path); err == nil {
		s.Read = append(s.Read, exe)
	}
	if r.Autonomy != config.AutonomyReadonly {
		s.Write = append(s.Write, r.Workspace)
		s.Protect = r.Sandbox.Protect
	}
	if len(x.Hosts) > 0 {
		s.Net.Egress = &executor.Egress{Hosts: x.Hosts, AllowPrivate: r.Sandbox.AllowPrivate}
	}
	for _, e := range x.Env {
		// A value the config writes is set as written, whatever its name
		// (ANTHROPIC_BASE_URL); a name alone passes claw's value, and one
		// that looks like a secret must be listed in secrets instead.
		if strings.Contains(e, "=") {
			s.Secrets = append(s.Secrets, e)
		} else {
			s.Env = append(s.Env, e)
		}
	}
	for _, name := range x.Secrets {
		v := r.Getenv(name)
		if v == "" {
			return executor.Spec{}, fmt.Errorf("the secret %s of external agent %s is not set in claw's environment", name, r.Name)
		}
		s.Secrets = append(s.Secrets, name+"="+v)
	}
	return s, nil
}

// maxStdout is what is kept of the agent's standard output: its JSON
// answer must arrive whole to be read.
const maxStdout = 8 << 20

// printResult is the JSON object claude -p --output-format json prints.
type printResult struct {
	Type     string  `json:"type"`
	Subtype  string  `json:"subtype"`
	IsError  bool    `json:"is_error"`
	Result   string  `json:"result"`
	NumTurns int     `json:"num_turns"`
	CostUSD  float64 `json:"total_cost_usd"`
}

// fill sets res from the agent's exit and output: the answer of a
// Claude Code JSON result, else the output itself, clipped.
func (r *Run) fill(res *Result, out *executor.Result, red func(string) string) {
	res.Exit = out.ExitCode
	switch {
	case out.TimedOut:
		res.Status = "timeout"
	case out.Signal != "":
		res.Status = "killed"
	case out.ExitCode != 0:
		res.Status = "failed"
	default:
		res.Status = "ok"
	}
	text := string(bytes.TrimSpace(out.Stdout))
	var pr printResult
	if err := json.Unmarshal([]byte(text), &pr); err == nil && pr.Type == "result" {
		text, res.NumTurns, res.CostUSD = pr.Result, pr.NumTurns, pr.CostUSD
		if pr.IsError && res.Status == "ok" {
			res.Status = "failed"
		}
	}
	max := r.Config.MaxOutput
	if max <= 0 {
		max = config.DefaultExternalMaxOutput
	}
	res.Result = red(clip(text, max))
	res.Truncated = len(text) > max || out.StdoutTruncated
	if res.Status != "ok" {
		res.Stderr = red(tail(string(out.Stderr), 2048))
	}
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

// tail is the last n bytes of s, from a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8Start(s[i]) {
		i++
	}
	return s[i:]
}

func utf8Start(b byte) bool { return b&0xc0 != 0x80 }
