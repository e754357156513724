package runtime

import (
	"context"
	"os"

	"github.com/clawsec/claw/internal/config"
)

// envOf is the Env of the claw home with the config cfg, for the user
// claw runs as.
func envOf(home string, cfg *config.Config) *Env {
	e := &Env{Home: home, Config: cfg}
	e.UserDir, _ = os.UserHomeDir()
	return e
}

// initProblems are the workspace and program problems claw init warns
// about, each with its fix.
func initProblems(ctx context.Context, home string, cfg *config.Config) []string {
	var out []string
	if problem, fix := WorkspaceIssue(ctx, envOf(home, cfg), cfg.WorkspaceDir); problem != "" {
		out = append(out, problem+"; fix: "+fix)
	}
	if problem, fix := ProgramsProblem(cfg.Sandbox.RunAs, ""); problem != "" {
		out = append(out, problem+"; fix: "+fix)
	}
	return out
}

// defaultWorkspace is the workspace_dir of a new config: "" (the
// template's ~/claw-workspace), or RootWorkspace when claw runs as root,
// actions run as run_as, and that user cannot reach ~/claw-workspace or it
// lies in a forbidden path.
func defaultWorkspace(ctx context.Context, home, path string) (string, error) {
	cfg, _, err := config.LoadOrDefault(path, home) // the defaults: path does not exist yet
	if err != nil {
		return "", err
	}
	uid, gid, ok, err := RunAsIDs(cfg.Sandbox.RunAs)
	if err != nil || !ok {
		return "", err
	}
	ws, err := CanonicalDir(cfg.WorkspaceDir)
	if err != nil {
		return "", err
	}
	if UnsearchableAbove(ws, uid, gid) != "" {
		return RootWorkspace, nil
	}
	if entry, err := WorkspaceForbidden(ctx, envOf(home, cfg), ws); err != nil || entry != "" {
		return RootWorkspace, nil
	}
	return "", nil
}
