package main

import (
	"context"
	"io"

	"github.com/clawsec/claw/internal/runtime"
)

// askGateDaemon tries the claw serve of this user, config and policies
// for one dry run (runtime.AskGateTest).
func askGateDaemon(ctx context.Context, g *globals, e *env, o *gateTestOptions, args []string) (runtime.DaemonAnswer, bool) {
	return runtime.AskGateTest(ctx, e.rt(), runtime.GateTestRequest{Args: args, Action: o.actionJSON, Autonomy: o.autonomy,
		Explain: o.explain, Output: o.output, Workspace: o.workspace, Cwd: o.cwd}, g.stderr)
}

// printAnswer prints the daemon's answer as the command's own.
func printAnswer(g *globals, a runtime.DaemonAnswer) error {
	io.WriteString(g.stdout, a.Stdout)
	io.WriteString(g.stderr, a.Stderr)
	if a.Exit != exitOK {
		return silentExit(a.Exit)
	}
	return nil
}

// gateTestDecide decides a dry run of claw serve's gate test service as
// claw gate test does in process.
func gateTestDecide(ctx context.Context, re *runtime.Env, eng *runtime.Engine, r runtime.GateTestRequest, stdout, stderr io.Writer) error {
	o := &gateTestOptions{autonomy: r.Autonomy, workspace: r.Workspace, cwd: r.Cwd, explain: r.Explain,
		output: r.Output, actionJSON: r.Action}
	action, err := runtime.DryRunAction(o.actionJSON, r.Args)
	if err != nil {
		return err
	}
	e := &env{home: re.Home, cfg: re.Config, userDir: re.UserDir, dryRunTimeout: re.DryRunTimeout}
	gctx, err := gateContext(e, o)
	if err != nil {
		return err
	}
	g := &globals{stdout: stdout, stderr: stderr}
	applyGrants(g, e, eng)
	return decideAndPrint(ctx, g, eng, e, o, action, gctx)
}
