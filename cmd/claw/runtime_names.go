package main

import (
	"context"

	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/runtime"
)

// Names in this package for what the runtime package now holds; each goes
// when the code that calls it has moved into the runtime too.
var (
	providerSpecs        = runtime.ProviderSpecs
	runAsIDs             = runtime.RunAsIDs
	handWorkspaceToRunAs = runtime.HandWorkspaceToRunAs
	unsearchableAbove    = runtime.UnsearchableAbove
	programsProblem      = runtime.ProgramsProblem
	newForbiddenPaths    = runtime.NewForbiddenPaths
	sandboxPath          = runtime.SandboxPath
	pluginResolver       = runtime.PluginResolver
)

func workspaceIssue(ctx context.Context, e *env, ws string) (problem, fix string) {
	return runtime.WorkspaceIssue(ctx, e.rt(), ws)
}

func workspaceForbidden(ctx context.Context, e *env, ws string) (string, error) {
	return runtime.WorkspaceForbidden(ctx, e.rt(), ws)
}

func grantExpiry(e *env) grant.Expiry { return runtime.GrantExpiry(e.cfg) }
