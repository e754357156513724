package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/internal/plugin"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/receipts"
)

// actionOptions are the flags of commands that run actions through the
// broker (claw exec, claw tool run).
type actionOptions struct {
	autonomy  string
	workspace string
	timeout   time.Duration
	yes       bool // never: approvals come from a human, see approveOnTTY
	keys      keyOptions
}

func (o *actionOptions) addFlags(fs interface {
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.StringVar(&o.autonomy, "autonomy", "", "autonomy level: readonly, supervised or full (default from config)")
	fs.StringVar(&o.workspace, "workspace", "", "workspace directory (default from config)")
	fs.DurationVar(&o.timeout, "timeout", 0, "wall timeout of the action (default from config)")
}

// openBroker loads the config, compiles the gate, opens the receipt log and
// returns a broker for one-shot CLI actions. close writes the final
// checkpoint. Each configure function may adjust the broker's Config
// (approver, channel, in-process tools) before the broker is made; the
// default approver asks on the terminal when standard input is one.
func openBroker(ctx context.Context, g *globals, o *actionOptions, configure ...func(*broker.Config, *env)) (b *broker.Broker, close func(), err error) {
	gate.Prefetch()
	e, err := loadEnv(g)
	if err != nil {
		return nil, nil, err
	}
	if o.autonomy != "" && o.autonomy != config.AutonomyReadonly && o.autonomy != config.AutonomySupervised && o.autonomy != config.AutonomyFull {
		return nil, nil, usageErrorf("--autonomy %q is not one of readonly, supervised, full", o.autonomy)
	}
	eng, err := newEngine(ctx, e, policyFromConfig(e.cfg))
	if err != nil {
		return nil, nil, err
	}
	signer, err := loadReceiptSigner(g, &o.keys)
	if err != nil {
		return nil, nil, err
	}
	dir := e.cfg.Receipts.Dir
	if dir == "" {
		if dir, err = receiptDir(g); err != nil {
			return nil, nil, err
		}
	}
	log, err := receipts.Open(dir, signer, receipts.Options{CheckpointInterval: -1, CheckpointEvery: e.cfg.Receipts.Checkpoint})
	if err != nil {
		return nil, nil, withCode(exitError, fmt.Errorf("opening the receipt log: %w", err), "nothing ran")
	}
	ws := e.cfg.WorkspaceDir
	if o.workspace != "" {
		ws = o.workspace
	}
	if ws, err = canonicalDir(ws); err != nil {
		log.Close()
		return nil, nil, err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		log.Close()
		return nil, nil, withCode(exitError, fmt.Errorf("workspace %s is not a directory", ws), "create it, or run 'claw init'")
	}
	checkWorkspaceOwner(g, ws, e.cfg.Sandbox.RunAs)
	forbidden, err := newForbiddenPaths(eng)
	if err != nil {
		log.Close()
		return nil, nil, withCode(exitError, err)
	}
	if entry := forbidden.Covering(ws); entry != "" {
		warnf(g.stderr, "the workspace %s lies in the forbidden path %s: file tools are denied in it", ws, entry)
		infof(g.stderr, "hint: set workspace_dir to a directory outside %s (as root, %s)", entry, runtime.RootWorkspace)
	}
	path, pathRead := sandboxPath(e.cfg.Sandbox.Path, os.Getenv("PATH"), ws, e.userDir, forbidden)
	autonomy := e.cfg.Security.Autonomy
	if o.autonomy != "" {
		autonomy = o.autonomy
	}
	timeout := e.cfg.Sandbox.Timeout.Duration
	if o.timeout > 0 {
		timeout = o.timeout
	}
	ports := make([]uint16, 0, len(e.cfg.Sandbox.HTTPPorts))
	for _, p := range e.cfg.Sandbox.HTTPPorts {
		ports = append(ports, uint16(p))
	}
	mem, _ := config.ParseSize(e.cfg.Sandbox.MemoryMax)
	cfg := broker.Config{
		Gate:        eng,
		Log:         log,
		Autonomy:    autonomy,
		Workspace:   ws,
		Home:        e.userDir,
		Channel:     "cli",
		EstopFile:   filepath.Join(e.home, "ESTOP"),
		Grants:      grant.Open(filepath.Join(e.home, grant.FileName)),
		GrantExpiry: grantExpiry(e),
		Plugins:     pluginResolver(plugin.Store{Dir: filepath.Join(e.home, "plugins")}),
		Sandbox: broker.Sandbox{
			MinLandlockABI: e.cfg.Sandbox.MinLandlockABI,
			RunAs:          e.cfg.Sandbox.RunAs,
			Timeout:        timeout,
			HTTPPorts:      ports,
			Limits:         executor.Limits{MemoryBytes: uint64(mem), Processes: uint64(e.cfg.Sandbox.PidsMax)},
			Path:           path,
			PathRead:       pathRead,
		},
	}
	if a := newTTYApprover(g); a != nil {
		cfg.Approver = a
	}
	guardConfig(g, e, &cfg) // approval timeout, passphrase gate and its terminal prompt
	for _, f := range configure {
		f(&cfg, e)
	}
	return broker.New(cfg), func() { log.Close() }, nil
}

// ttyApprover asks on the controlling terminal. It is only used when
// standard input is a terminal: piped input can never approve.
type ttyApprover struct {
	in  *bufio.Reader
	fd  int
	out io.Writer
}

func newTTYApprover(g *globals) broker.Approver {
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &ttyApprover{in: bufio.NewReader(io.LimitReader(f, 1<<16)), fd: int(f.Fd()), out: g.stderr}
}

func (t *ttyApprover) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	writeRequest(t.out, "Tool request", r)
	// only an answer typed after the question counts
	n := t.in.Buffered()
	t.in.Discard(n)
	discardNotice(t.out, n+flushTerminalInput(t.fd))
	writeProposal(t.out, r.Proposal)
	fmt.Fprint(t.out, "Approve? [y/N] ")
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := t.in.ReadString('\n')
		ch <- line{s, err}
	}()
	select {
	case <-ctx.Done(): // the broker bounds the wait (security.approval_timeout)
		fmt.Fprintln(t.out)
		return broker.Answer{Result: "timeout", By: "cli:tty"}, nil
	case l := <-ch:
		return parseApproval(l.s, r.Proposal, "cli:tty"), nil
	}
}

// outcomeExit maps a broker outcome to claw's exit codes. Output of a
// command that ran is written first.
func outcomeExit(g *globals, out *broker.Outcome, err error, asJSON bool) error {
	if out == nil {
		return err
	}
	reasons := func() string {
		var s []string
		for _, r := range out.Decision.Reasons {
			s = append(s, r.ID+": "+sanitize(r.Msg))
		}
		return strings.Join(s, "\n")
	}
	switch out.Status {
	case broker.StatusDenied:
		return withCode(exitDenied, fmt.Errorf("denied by policy\n%s", reasons()), "see why with 'claw gate test --explain'")
	case broker.StatusEstop:
		return withCode(exitDenied, errors.New("the emergency stop is engaged"), "clear it with 'claw estop --clear'")
	case broker.StatusNeedsApproval:
		return withCode(exitNeedsHuman, fmt.Errorf("%v\n%s", out.Err, reasons()), "run it from a terminal to approve it, or adjust the autonomy level")
	case broker.StatusRejected:
		if out.Err != nil {
			// a wrong passphrase says so, and when the gate locks
			return withCode(exitDenied, fmt.Errorf("rejected: %v", out.Err))
		}
		return withCode(exitDenied, errors.New("rejected"))
	case broker.StatusApprovalTO:
		return withCode(exitDenied, errors.New("approval timed out"))
	case broker.StatusUnavailable:
		return withCode(exitSandbox, out.Err, "run 'claw doctor' to see what this kernel supports")
	case broker.StatusError:
		return withCode(exitError, out.Err, "nothing ran")
	}
	res := out.Result
	if res == nil {
		return withCode(exitError, errors.New("no result"))
	}
	return reportRun(g, *res, out.Err, asJSON)
}
