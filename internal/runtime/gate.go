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
// candidate policies.
type ReplayInput struct {
	Gate      gate.Options // the candidate policies: Policy, UserPolicyDir, homes, Timeout
	GrantFile string       // the grants in force
	LogDir    string       // the receipt log
	Workspace string       // canonical
	Since     time.Time
	Until     time.Time
	Now       time.Time
}

// PolicyError is a candidate policy set that does not compile.
type PolicyError struct{ Err error }

func (e *PolicyError) Error() string { return e.Err.Error() }
func (e *PolicyError) Unwrap() error { return e.Err }

// ReplayLog re-decides every action recorded in the receipt log under the
// candidate policies of in, with the grants active at in.Now.
func ReplayLog(ctx context.Context, in ReplayInput) (*audit.ReplayReport, error) {
	eng, err := gate.New(ctx, in.Gate)
	if err != nil {
		return nil, &PolicyError{err}
	}
	gs, err := grant.Open(in.GrantFile).Load()
	if err != nil {
		return nil, err
	}
	eng.SetGrants(grant.Active(gs, in.Now))
	return audit.Replay(ctx, in.LogDir, audit.ReplayOptions{
		Engine:  eng,
		Context: gate.Context{Workspace: in.Workspace, Cwd: in.Workspace, Home: in.Gate.Home},
		Since:   in.Since,
		Until:   in.Until,
	})
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

// PolicyExport is the policy set in force as files for stock OPA tools:
// policies/ (built-in policies and their tests), user/ (the user's), and
// data.json.
func PolicyExport(eng *gate.Engine) (map[string][]byte, error) {
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

// WriteExport writes files into the directory dir (which exists), in name
// order, calling wrote with each path. user/ is made even when there are
// no user policies, so the same opa command line works with and without
// them.
func WriteExport(dir string, files map[string][]byte, wrote func(path string)) error {
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
