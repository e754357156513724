package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobwas/glob"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/policies"
)

// ForbiddenPaths is the list of forbidden paths (built-in and configured,
// with ~ and the claw home expanded) the policies were compiled with,
// matched as they match it (glob.match with "/" as the separator, the same
// library), so a path it clears is not denied as forbidden by the gate.
type ForbiddenPaths []forbiddenEntry

type forbiddenEntry struct {
	path string
	g    *glob.Pattern
}

func newForbiddenPaths(eng *gate.Engine) (ForbiddenPaths, error) {
	claw, _ := eng.Data()["claw"].(map[string]any)
	cfg, _ := claw["config"].(map[string]any)
	list, ok := cfg["forbidden_paths"].([]any)
	if !ok {
		return nil, fmt.Errorf("the policy data has no forbidden_paths")
	}
	paths := make([]string, 0, len(list))
	for _, v := range list {
		p, _ := v.(string)
		paths = append(paths, p)
	}
	return compileForbidden(paths)
}

// compileForbidden compiles each forbidden path as the policies do.
func compileForbidden(paths []string) (ForbiddenPaths, error) {
	out := make(ForbiddenPaths, 0, len(paths))
	for _, p := range paths {
		g, err := glob.Compile(policies.ForbiddenGlob([]string{p}), '/')
		if err != nil {
			return nil, fmt.Errorf("forbidden path %q: %w", p, err)
		}
		out = append(out, forbiddenEntry{p, g})
	}
	return out, nil
}

// Covering names the forbidden path that covers the canonical path p (p
// is it or lies below it), or "".
func (f ForbiddenPaths) Covering(p string) string {
	for _, e := range f {
		if e.g.Match(p) {
			return e.path
		}
	}
	return ""
}

// Within names a forbidden path that lies inside the directory dir (whose
// fixed part, before any *, is dir or below it), or "": granting dir
// would grant it too. Patterns for any directory ("**/docker.sock") are
// not counted: they lie in the system directories every action reads too.
func (f ForbiddenPaths) Within(dir string) string {
	for _, e := range f {
		fixed, _, _ := strings.Cut(e.path, "*")
		if fixed != "" && pathWithin(filepath.Clean(fixed), dir) {
			return e.path
		}
	}
	return ""
}

// pathWithin reports whether p is dir or lies below it (both clean).
func pathWithin(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// WorkspaceForbidden compiles the policies of e and names the forbidden
// path that covers the canonical workspace ws, or "".
func WorkspaceForbidden(ctx context.Context, e *Env, ws string) (string, error) {
	eng, err := NewEngine(ctx, e, Policy(e.Config))
	if err != nil {
		return "", err
	}
	f, err := newForbiddenPaths(eng)
	if err != nil {
		return "", err
	}
	return f.Covering(ws), nil
}

// WorkspaceIssue says what would stop actions from using the workspace
// ws, and how to fix it: not a directory, a forbidden path around it (file
// tools are denied there while shell commands that name no path are not),
// or a run_as user that cannot reach or write it. "" when nothing does.
func WorkspaceIssue(ctx context.Context, e *Env, ws string) (problem, fix string) {
	ws, err := CanonicalDir(ws)
	if err != nil {
		return err.Error(), "check workspace_dir in the config"
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return fmt.Sprintf("the workspace %s is not a directory", ws), "run 'claw init', or create it"
	}
	entry, err := WorkspaceForbidden(ctx, e, ws)
	if err != nil {
		return err.Error(), "check the policies with 'claw gate test --rego'"
	}
	if entry != "" {
		return fmt.Sprintf("the workspace %s lies in the forbidden path %s: file tools are denied in it", ws, entry),
			fmt.Sprintf("set workspace_dir to a directory outside %s (as root, %s)", entry, RootWorkspace)
	}
	return WorkspaceProblem(ws, e.Config.Sandbox.RunAs)
}
