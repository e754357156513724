package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/policies"
)

// ReplayInput says what claw gate replay re-decides, and under which
// candidate policies: the built-in ones, the user's of PolicyDir, the
// [security] settings of the config and the grants of GrantFile.
type ReplayInput struct {
	PolicyDir string // default HOME/policies
	GrantFile string // default HOME/grants.json
	LogDir    string // the receipt log; default the config's, else ReceiptDir's
	// ReceiptDir is the receipt log's directory when neither LogDir nor
	// the config names one.
	ReceiptDir func() (string, error)
	Since      time.Time
	Until      time.Time
	Now        time.Time // when the grants are looked at
}

// ReplayLog re-decides every action recorded in the receipt log under the
// candidate policies of in, with the grants active at in.Now, in the
// workspace of e's config.
func ReplayLog(ctx context.Context, e *Env, in ReplayInput) (*audit.ReplayReport, error) {
	e.DryRunTimeout = 5 * time.Second // a log replayed on a busy machine is not an agent waiting
	if in.PolicyDir == "" {
		in.PolicyDir = filepath.Join(e.Home, "policies")
	}
	if in.GrantFile == "" {
		in.GrantFile = filepath.Join(e.Home, grant.FileName)
	}
	if in.LogDir == "" {
		in.LogDir = e.Config.Receipts.Dir
	}
	if in.LogDir == "" {
		var err error
		if in.LogDir, err = in.ReceiptDir(); err != nil {
			return nil, err
		}
	}
	ws, err := CanonicalDir(e.Config.WorkspaceDir)
	if err != nil {
		return nil, err
	}
	eng, err := gate.New(ctx, gate.Options{
		Policy:        Policy(e.Config),
		Home:          e.UserDir,
		ClawHome:      e.Home,
		UserPolicyDir: in.PolicyDir,
		Timeout:       max(e.Config.Security.GateTimeout.Duration, e.DryRunTimeout),
	})
	if err != nil {
		return nil, WithCode(ExitError, err, "check the candidate policies with 'claw gate test --rego'")
	}
	gs, err := grant.Open(in.GrantFile).Load()
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	eng.SetGrants(grant.Active(gs, in.Now))
	rep, err := audit.Replay(ctx, in.LogDir, audit.ReplayOptions{
		Engine:  eng,
		Context: gate.Context{Workspace: ws, Cwd: ws, Home: e.UserDir},
		Since:   in.Since,
		Until:   in.Until,
	})
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	return rep, nil
}

// ReplayBreaking describes the breaking changes of a replay ("2 allow ->
// deny and 1 deny -> allow"), or "" when there are none.
func ReplayBreaking(rep *audit.ReplayReport) string {
	if rep.Breaking == 0 {
		return ""
	}
	keys := make([]string, 0, 2)
	for _, k := range []string{"allow -> deny", "deny -> allow"} {
		if n := rep.Counts[k]; n > 0 {
			keys = append(keys, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(keys, " and ")
}

// GateExport writes the policy set in force for e into dir, which it
// makes and which must not exist yet, calling wrote with each file's
// path; with the dry run of js or args (as [DryRunAction] takes them),
// also its input document, in workspace at autonomy (when given).
func GateExport(ctx context.Context, e *Env, dir, js string, args []string, workspace, autonomy string, wrote func(path string)) error {
	eng, err := NewEngine(ctx, e, Policy(e.Config))
	if err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return WithCode(ExitError, err, "give a directory that does not exist yet")
	}
	files, err := policyExport(eng)
	if err != nil {
		return err
	}
	if js != "" || len(args) > 0 {
		action, err := DryRunAction(js, args)
		if err != nil {
			return WithCode(ExitUsage, err)
		}
		gctx, err := DryRunContext(e, workspace, "", autonomy)
		if err != nil {
			return err
		}
		in, err := json.MarshalIndent(gate.BuildInput(action, gctx), "", "  ")
		if err != nil {
			return err
		}
		files["input.json"] = in
	}
	return writeExport(dir, files, wrote)
}

// policyExport is the policy set in force as files for stock OPA tools:
// policies/ (built-in policies and their tests), user/ (the user's), and
// data.json.
func policyExport(eng *gate.Engine) (map[string][]byte, error) {
	files := map[string][]byte{}
	mods, err := policies.Modules()
	if err != nil {
		return nil, err
	}
	tests, err := policies.Tests()
	if err != nil {
		return nil, err
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
		return nil, err
	}
	files["data.json"] = data
	return files, nil
}

// writeExport writes files into the directory dir (which exists), in name
// order, calling wrote with each path. user/ is made even when there are
// no user policies, so the same opa command line works with and without
// them.
func writeExport(dir string, files map[string][]byte, wrote func(path string)) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
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
		wrote(p)
	}
	return nil
}
