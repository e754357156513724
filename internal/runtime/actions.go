package runtime

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/grant"
	"github.com/clawsec/claw/receipts"
)

// Actions are the settings of a command that runs actions, from its
// flags; "" and 0 mean the config's.
type Actions struct {
	Autonomy  string
	Workspace string
	Timeout   time.Duration
}

// Setup is what the command line resolved for opening a broker: where the
// config and the key are, who can be asked, and where to warn. Env,
// Signer and ReceiptDir are called in that order, each only when the
// steps before them succeeded, so a bad flag is reported before a key's
// passphrase is asked for.
type Setup struct {
	Actions Actions
	// Env loads the claw home and the config.
	Env func() (*Env, error)
	// Signer loads the receipt signing key.
	Signer func() (*receipts.Signer, error)
	// ReceiptDir is the receipt log's directory when the config names none.
	ReceiptDir func() (string, error)
	// Approver asks a person about an action, and Passphrase for the
	// passphrase; nil means nobody can be asked.
	Approver   broker.Approver
	Passphrase broker.PassphraseAsker
	// Warn is told what would keep actions from using the workspace, and
	// how to fix it.
	Warn func(problem, fix string)
	// LogTo receives the log of a long-running command, which names the
	// Version of claw.
	LogTo   io.Writer
	Version string
}

// OpenBroker loads the config, compiles the gate, opens the receipt log
// and returns a broker for the actions of one command. close writes the
// final checkpoint. Each configure function may adjust the broker's Config
// (approver, channel, in-process tools) before the broker is made.
func OpenBroker(ctx context.Context, s Setup, configure ...func(*broker.Config, *Env)) (b *broker.Broker, close func(), err error) {
	gate.Prefetch()
	e, err := s.Env()
	if err != nil {
		return nil, nil, err
	}
	o := s.Actions
	if err := CheckAutonomy(o.Autonomy); err != nil {
		return nil, nil, err
	}
	eng, err := NewEngine(ctx, e, Policy(e.Config))
	if err != nil {
		return nil, nil, err
	}
	signer, err := s.Signer()
	if err != nil {
		return nil, nil, err
	}
	dir := e.Config.Receipts.Dir
	if dir == "" {
		if dir, err = s.ReceiptDir(); err != nil {
			return nil, nil, err
		}
	}
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1, CheckpointEvery: e.Config.Receipts.Checkpoint})
	if err != nil {
		return nil, nil, WithCode(ExitError, fmt.Errorf("opening the receipt log: %w", err), "nothing ran")
	}
	cfg, err := brokerConfig(e, eng, o, s.Warn)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	cfg.Log = log
	if s.Approver != nil {
		cfg.Approver = s.Approver
	}
	if s.Passphrase != nil {
		cfg.Passphrase = s.Passphrase
	}
	for _, f := range configure {
		f(&cfg, e)
	}
	return broker.New(cfg), func() { log.Close() }, nil
}

// brokerConfig is the broker's Config for e without its log: the
// canonical workspace, the sandbox, grants, plugins and the passphrase
// gate.
func brokerConfig(e *Env, eng *gate.Engine, o Actions, warn func(problem, fix string)) (broker.Config, error) {
	c := e.Config
	ws := c.WorkspaceDir
	if o.Workspace != "" {
		ws = o.Workspace
	}
	ws, err := CanonicalDir(ws)
	if err != nil {
		return broker.Config{}, err
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return broker.Config{}, WithCode(ExitError, fmt.Errorf("workspace %s is not a directory", ws), "create it, or run 'claw init'")
	}
	if problem, fix := WorkspaceProblem(ws, c.Sandbox.RunAs); problem != "" {
		warn(problem, fix)
	}
	forbidden, err := newForbiddenPaths(eng)
	if err != nil {
		return broker.Config{}, WithCode(ExitError, err)
	}
	if entry := forbidden.Covering(ws); entry != "" {
		warn(fmt.Sprintf("the workspace %s lies in the forbidden path %s: file tools are denied in it", ws, entry),
			fmt.Sprintf("set workspace_dir to a directory outside %s (as root, %s)", entry, RootWorkspace))
	}
	path, pathRead := sandboxPath(c.Sandbox.Path, os.Getenv("PATH"), ws, e.UserDir, forbidden)
	autonomy := c.Security.Autonomy
	if o.Autonomy != "" {
		autonomy = o.Autonomy
	}
	timeout := c.Sandbox.Timeout.Duration
	if o.Timeout > 0 {
		timeout = o.Timeout
	}
	ports := make([]uint16, 0, len(c.Sandbox.HTTPPorts))
	for _, p := range c.Sandbox.HTTPPorts {
		ports = append(ports, uint16(p))
	}
	mem, _ := config.ParseSize(c.Sandbox.MemoryMax)
	sec := c.Security
	return broker.Config{
		Gate:          eng,
		Autonomy:      autonomy,
		Workspace:     ws,
		Home:          e.UserDir,
		Channel:       "cli",
		EstopFile:     filepath.Join(e.Home, "ESTOP"),
		Grants:        grant.Open(filepath.Join(e.Home, grant.FileName)),
		GrantExpiry:   GrantExpiry(c),
		Plugins:       PluginResolver(PluginStore(e.Home)),
		DelegateHosts: DelegateHosts(e.Config),
		Sandbox: broker.Sandbox{
			MinLandlockABI: c.Sandbox.MinLandlockABI,
			RunAs:          c.Sandbox.RunAs,
			Timeout:        timeout,
			HTTPPorts:      ports,
			Limits:         executor.Limits{MemoryBytes: uint64(mem), Processes: uint64(c.Sandbox.PidsMax)},
			Path:           path,
			PathRead:       pathRead,
		},
		ApprovalTimeout: sec.ApprovalTimeout.Duration,
		PassphraseHash:  sec.PassphraseHash,
		MaxFailures:     sec.PassphraseMaxFailures,
		Lockout:         sec.PassphraseLockout.Duration,
		StateFile:       filepath.Join(e.Home, "passphrase.state"),
	}, nil
}

// CheckAutonomy refuses an --autonomy flag that is not a level: a usage
// error. "" (the config's) is one.
func CheckAutonomy(a string) error {
	if a != "" && !slices.Contains(config.Autonomies, a) {
		return Usagef("--autonomy %q is not one of readonly, supervised, full", a)
	}
	return nil
}

// DelegateHosts gives the gate the hosts of each configured external
// agent ([delegate.external.NAME] hosts).
func DelegateHosts(c *config.Config) broker.DelegateHosts {
	return func(agent string) []string { return c.Delegate.External[agent].Hosts }
}

// GrantExpiry is the configured expiry of grants.
func GrantExpiry(c *config.Config) grant.Expiry {
	return grant.Expiry{Default: c.Security.GrantExpiry.Duration, Max: c.Security.GrantMaxExpiry.Duration}
}
