// Command friction measures how often a supervised session of everyday
// coding work stops to ask a person, without grants and with them.
//
// It sets up three small projects (Go, Python, Node, each a git repository
// and each its own workspace), then takes the session in session.go (104
// actions: read, search, build, test, fix, commit, add a dependency)
// through the broker twice at supervised autonomy, with the default
// configuration's policy: once with an approver that approves each ask
// once, and once with one that accepts the proposed grant the first time
// a family of actions asks (a person who answers "grant" when one is
// offered, "yes" otherwise). Actions run for real in the sandbox (without
// network: the dependency installs fail, as they would offline).
//
// It prints the actions that asked in each run, the actions denied, the
// grants created, how many cases of the attack corpus those grants allow
// (it must be none), and as its last line
//
//	friction: N prompts per 100 actions without grants, M with grants
//
// Run it with bench/friction.sh.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/bypass"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/receipts"
)

func main() {
	if code, ok := executor.EnterChild(os.Args); ok {
		os.Exit(code)
	}
	executor.AllowSelfExec()
	timeout := flag.Duration("timeout", 10*time.Second, "wall timeout of each action")
	flag.Parse()
	if err := run(*timeout); err != nil {
		fmt.Fprintln(os.Stderr, "friction:", err)
		os.Exit(1)
	}
}

// approver answers like a person: yes to every ask; with grants on, it
// accepts the proposed grant when there is one.
type approver struct {
	grants  bool
	project string
	asked   []string
}

func (a *approver) Approve(_ context.Context, r broker.Request) (broker.Answer, error) {
	line := fmt.Sprintf("%-8s %s: %s", a.project, r.Tool, r.Summary)
	ans := broker.Answer{Result: "approved", By: "bench", Remember: broker.RememberOnce}
	if a.grants && r.Proposal != nil {
		ans.Remember = broker.RememberGrant
		line += "  -> grant " + r.Proposal.Text
	} else if a.grants {
		line += "  (no grant offered)"
	}
	a.asked = append(a.asked, line)
	return ans, nil
}

type result struct {
	asked, denied []string
	grants        []grant.Grant
	statuses      map[string]int
}

func run(timeout time.Duration) error {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "claw-friction-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	os.Chmod(root, 0o755)
	root, _ = filepath.EvalSymlinks(root)
	home, _ := os.UserHomeDir()
	cfg := config.Default(filepath.Join(root, "clawhome"))
	if err := cfg.Expand(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}); err != nil {
		return err
	}
	pol := runtime.Policy(cfg)

	without, err := session(ctx, root, "without", pol, home, false, timeout)
	if err != nil {
		return err
	}
	with, err := session(ctx, root, "with", pol, home, true, timeout)
	if err != nil {
		return err
	}
	n := len(steps)
	fmt.Printf("session: %d actions in 3 projects (Go, Python, Node), supervised, default policy\n\n", n)
	for _, r := range []struct {
		name string
		res  *result
	}{{"without grants", without}, {"with grants", with}} {
		fmt.Printf("asked %s (%d):\n", r.name, len(r.res.asked))
		for _, a := range r.res.asked {
			fmt.Printf("  %s\n", a)
		}
		fmt.Printf("denied %s (%d):\n", r.name, len(r.res.denied))
		for _, d := range r.res.denied {
			fmt.Printf("  %s\n", d)
		}
		fmt.Printf("outcomes %s: %s\n\n", r.name, counts(r.res.statuses))
	}
	fmt.Printf("grants created (%d):\n", len(with.grants))
	for _, g := range with.grants {
		fmt.Printf("  %s %s\n", g.ID, grant.Format(g.Scope))
	}
	allowed, attacks, err := corpusAllowed(ctx, pol, home, root, with.grants)
	if err != nil {
		return err
	}
	fmt.Printf("attack corpus: %d of %d attack cases (x %d workspaces) allowed by a grant of this session\n", len(allowed), attacks, len(projects))
	for _, a := range allowed {
		fmt.Printf("  ALLOWED BY A GRANT: %s\n", a)
	}
	per100 := func(k int) string { return fmt.Sprintf("%.0f", float64(k)*100/float64(n)) }
	fmt.Printf("friction: %s prompts per 100 actions without grants, %s with grants\n", per100(len(without.asked)), per100(len(with.asked)))
	if len(allowed) > 0 {
		return fmt.Errorf("%d attack cases allowed by a session grant", len(allowed))
	}
	return nil
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s []string
	for _, k := range keys {
		s = append(s, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(s, ", ")
}

// session runs the steps once in fresh copies of the projects, with
// its own claw home (receipt log, grant store).
func session(ctx context.Context, root, name string, pol gate.Policy, home string, grants bool, timeout time.Duration) (*result, error) {
	dir := filepath.Join(root, name)
	clawHome := filepath.Join(dir, "clawhome")
	if err := os.MkdirAll(clawHome, 0o700); err != nil {
		return nil, err
	}
	eng, err := gate.New(ctx, gate.Options{Policy: pol, Home: home, ClawHome: clawHome, Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	k, err := receipts.GenerateKey(receipts.Ed25519)
	if err != nil {
		return nil, err
	}
	signer, err := receipts.NewSigner(k)
	if err != nil {
		return nil, err
	}
	log, err := broker.OpenLog(filepath.Join(clawHome, "receipts"), signer, broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	store := grant.Open(filepath.Join(clawHome, grant.FileName))
	res := &result{statuses: map[string]int{}}
	brokers := map[string]*broker.Broker{}
	approvers := map[string]*approver{}
	for p, files := range projects {
		ws := filepath.Join(dir, p)
		if err := makeProject(ws, files); err != nil {
			return nil, err
		}
		ap := &approver{grants: grants, project: p}
		c := broker.Config{Gate: eng, Log: log, Approver: ap, Autonomy: "supervised", Workspace: ws, Home: home, Channel: "bench",
			Sandbox: broker.Sandbox{Timeout: timeout}}
		if grants {
			c.Grants = store
		}
		brokers[p], approvers[p] = broker.New(c), ap
	}
	for i, s := range steps {
		ap := approvers[s.project]
		before := len(ap.asked)
		out, err := brokers[s.project].Invoke(ctx, gate.Action{Tool: s.tool, Args: s.args}, "session")
		if err != nil && out == nil {
			return nil, fmt.Errorf("action %d: %w", i+1, err)
		}
		res.statuses[out.Status]++
		if len(ap.asked) > before {
			res.asked = append(res.asked, ap.asked[before:]...)
		}
		if out.Status == broker.StatusDenied {
			res.denied = append(res.denied, fmt.Sprintf("%-8s %s: %s [%s]", s.project, s.tool, gate.Summary(gate.Action{Tool: s.tool, Args: s.args}), strings.Join(out.Decision.RuleIDs(), ", ")))
		}
	}
	gs, err := store.Load()
	if err != nil {
		return nil, err
	}
	res.grants = gs
	return res, nil
}

// makeProject writes files into a new git repository at ws with one
// commit, readable by a sandboxed action that runs as another user.
func makeProject(ws string, files map[string]string) error {
	if err := os.MkdirAll(ws, 0o777); err != nil {
		return err
	}
	os.Chmod(ws, 0o777)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o666); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
			"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
	}
	return filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chmod(p, map[bool]os.FileMode{true: 0o777, false: 0o666}[d.IsDir()])
		}
		return nil
	})
}

// corpusAllowed decides every attack case of the corpus (every class but
// the benign look-alikes) in each project's workspace, with the session's
// grants, and returns those a grant allowed.
func corpusAllowed(ctx context.Context, pol gate.Policy, home, root string, gs []grant.Grant) ([]string, int, error) {
	eng, err := gate.New(ctx, gate.Options{Policy: pol, Home: home, Timeout: 5 * time.Second})
	if err != nil {
		return nil, 0, err
	}
	eng.SetGrants(grant.Active(gs, time.Now()))
	names, _ := fs.Glob(bypass.FS, "*.jsonl")
	var allowed []string
	attacks := 0
	for _, name := range names {
		if name == "benign.jsonl" {
			continue
		}
		b, _ := bypass.FS.ReadFile(name)
		cases, err := gate.ParseCases(bytes.NewReader(b), name)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range cases {
			attacks++
			for p := range projects {
				ws := filepath.Join(root, "with", p)
				d, _ := eng.Decide(ctx, c.Action, gate.Context{Autonomy: c.Autonomy, Workspace: ws, Cwd: ws, Home: home, Channel: "bench"})
				if d.Grant != "" {
					allowed = append(allowed, fmt.Sprintf("%s (%s, in %s): %s", c.Name, c.Where, p, d.Grant))
				}
			}
		}
	}
	return allowed, attacks, nil
}
