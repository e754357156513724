package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/delegate"
	"github.com/clawsec/claw/internal/hook"
)

// delegateExternal runs the delegate call's task on the external agent
// name ([delegate.external.NAME]) in the sandbox, its delegation d
// narrowed further by the agent's config; c is the broker's config,
// whose gate and receipt log answer the agent's hook.
func delegateExternal(ctx context.Context, rt *Agent, c *broker.Config, name, task string, d broker.Delegation) (json.RawMessage, error) {
	x, ok := rt.Env.Config.Delegate.External[name]
	if !ok {
		return nil, fmt.Errorf("no external agent %q (configured: %s)", name, strings.Join(slices.Sorted(maps.Keys(rt.Env.Config.Delegate.External)), ", "))
	}
	ctx = broker.WithDelegation(ctx, d.Narrow(x.Autonomy, x.ToolsAllow))
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding claw's executable for the hook: %w", err)
	}
	protect, err := protected(ctx, c)
	if err != nil {
		return nil, err
	}
	run := delegate.Run{
		Name: name, Config: x, Task: task, Workspace: c.Workspace,
		Autonomy: rt.Broker.Autonomy(ctx), ToolsAllow: rt.Broker.ToolsAllow(ctx),
		ParentAction: d.ParentAction, Exe: exe,
		Sandbox: delegate.Sandbox{
			Path: c.Sandbox.Path, PathRead: c.Sandbox.PathRead, Protect: protect,
			AllowPrivate: rt.Env.Config.Security.AllowPrivateCIDRs, Limits: c.Sandbox.Limits,
			MinLandlockABI: c.Sandbox.MinLandlockABI, RunAs: c.Sandbox.RunAs,
		},
		Guard: func() *hook.Guard {
			return &hook.Guard{Gate: c.Gate, Log: c.Log, Home: c.Home, EstopFile: c.EstopFile, Redact: c.Redact}
		},
		Getenv: os.Getenv,
		Redact: c.Redact,
	}
	res, err := run.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("external agent %s: %w", name, err)
	}
	return json.Marshal(res)
}

// protected is what the gate keeps read-only in the workspace for an
// action that writes it (git hooks, agent settings): the plan of a write
// there, decided and not recorded, since nothing is written by it.
func protected(ctx context.Context, c *broker.Config) ([]string, error) {
	a := gate.Action{Tool: "file_write", Args: map[string]any{"path": filepath.Join(c.Workspace, ".claw-plan"), "content": ""}}
	d, err := c.Gate.DecideInput(ctx, gate.BuildInput(a, gate.Context{Autonomy: "full", Workspace: c.Workspace, Cwd: c.Workspace, Home: c.Home}))
	if err != nil {
		return nil, fmt.Errorf("planning the workspace paths to keep read-only: %w", err)
	}
	return d.Sandbox.Protect, nil
}
