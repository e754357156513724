package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/service"
)

func newServiceCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "service",
		Short: "Run claw serve as a hardened systemd service",
		Long: `Install, remove, start, stop and inspect claw.service, a systemd unit that
runs 'claw serve' as an unprivileged user with no capabilities, a read-only
system, a private /tmp and devices, and a system call filter, while leaving
claw's executor able to confine every action (see docs/service.md).

systemctl needs systemd as the running init system; in a container use
'claw service install --no-systemctl --unit-dir DIR' to only write the unit.`,
	}
	c.AddCommand(newServiceInstallCommand(g), newServiceUninstallCommand(g))
	for _, verb := range []struct{ name, short string }{
		{"start", "Start claw.service"},
		{"stop", "Stop claw.service"},
		{"status", "Show the state of claw.service"},
	} {
		c.AddCommand(newServiceSystemctlCommand(g, verb.name, verb.short))
	}
	return c
}

func newServiceInstallCommand(g *globals) *cobra.Command {
	var (
		opts        service.Options
		unitDir     string
		force       bool
		noSystemctl bool
		now         bool
	)
	c := &cobra.Command{
		Use:   "install",
		Short: "Write claw.service, create the service's home, enable it",
		Long: `Write claw.service to --unit-dir (default /etc/systemd/system), create the
service's claw home (--state-dir, default /var/lib/claw, the unit's
StateDirectory) with a config whose workspace is inside it and whose
[sandbox] run_as is empty (the service user runs the actions), then run
'systemctl daemon-reload' and 'systemctl enable' (--now also starts it).

An existing claw.service that differs is kept unless --force is given; the
same unit is left as it is. An existing config is never overwritten.

The service runs as a transient user (DynamicUser=yes) unless --user names
an existing system user; never as root.

EXIT STATUS
  0 installed, 1 error (also: systemd is not running, use --no-systemctl),
  2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServiceInstall(c.Context(), g, opts, unitDir, force, noSystemctl, now)
		},
	}
	f := c.Flags()
	f.StringVar(&unitDir, "unit-dir", service.DefaultUnitDir, "directory to write claw.service into")
	f.StringVar(&opts.Binary, "binary", "", "claw executable the unit runs (default this one)")
	f.StringVar(&opts.User, "user", "", "existing system user to run as (default a DynamicUser)")
	f.StringVar(&opts.Group, "group", "", "group to run as (default the user's)")
	f.StringVar(&opts.Home, "state-dir", service.DefaultHome, "the service's claw home (CLAW_HOME)")
	f.StringVar(&opts.Workspace, "workspace", "", "the agent's workspace (default STATE-DIR/workspace)")
	f.StringSliceVar(&opts.ReadWritePaths, "read-write", nil, "further `PATH`s the service may write (repeatable)")
	f.DurationVar(&opts.Watchdog, "watchdog", service.DefaultWatchdog, "WatchdogSec of the unit")
	f.BoolVar(&opts.MemoryDenyWriteExecute, "deny-write-execute", false, "add MemoryDenyWriteExecute=yes (breaks JIT runtimes the agent runs)")
	f.BoolVar(&force, "force", false, "replace a different existing claw.service")
	f.BoolVar(&noSystemctl, "no-systemctl", false, "only write the unit and the home; do not call systemctl")
	f.BoolVar(&now, "now", false, "also start the service")
	return c
}

func runServiceInstall(ctx context.Context, g *globals, opts service.Options, unitDir string, force, noSystemctl, now bool) error {
	if !noSystemctl && !service.Running() {
		return noSystemdError()
	}
	var ue *service.UserError
	switch err := opts.Locate(); {
	case errors.Is(err, service.ErrNoBinary):
		return withCode(exitError, err, "give it with --binary")
	case errors.As(err, &ue):
		return withCode(exitError, err,
			fmt.Sprintf("create it: useradd --system --no-create-home --shell /usr/sbin/nologin %s", opts.User),
			"or leave --user out to run as a DynamicUser")
	case err != nil:
		return usageErrorf("%v", err)
	}
	unit, err := service.Render(opts)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if setting := service.HiddenFrom(opts.Binary); setting != "" {
		warnf(g.stderr, "the unit runs %s, but its %s hides that path from the service: it will not start", opts.Binary, setting)
		infof(g.stderr, "hint: install claw outside /home, /root, /tmp and /var/tmp (for example 'install -m 0755 bin/claw bin/claw-sandbox /usr/local/bin/') and give it with --binary")
	}
	opts = opts.Resolved()
	if err := setupServiceHome(ctx, g, opts); err != nil {
		return err
	}
	res, err := service.Install(unitDir, unit, force)
	switch {
	case errors.Is(err, service.ErrUnitDiffers):
		return withCode(exitError, err, "compare it with 'claw service install --unit-dir DIR --no-systemctl' into another directory, then use --force to replace it")
	case err != nil:
		return withCode(exitError, err)
	case res.Unchanged:
		infof(g.stderr, "%s is up to date", res.Path)
	case res.Replaced:
		infof(g.stderr, "replaced %s", res.Path)
	default:
		infof(g.stderr, "wrote %s", res.Path)
	}
	if noSystemctl {
		infof(g.stderr, "systemctl not called (--no-systemctl)")
		return nil
	}
	if err := systemctl(ctx, g, "daemon-reload"); err != nil {
		return err
	}
	args := []string{"enable", service.UnitName}
	if now {
		args = []string{"enable", "--now", service.UnitName}
	}
	if err := systemctl(ctx, g, args...); err != nil {
		return err
	}
	if now {
		infof(g.stderr, "claw.service enabled and started")
	} else {
		infof(g.stderr, "claw.service enabled; start it with 'claw service start'")
	}
	return nil
}

// setupServiceHome creates the service's claw home the way claw init does,
// with the service's config written first (workspace inside the home,
// run_as empty), and hands it to a dedicated user. With DynamicUser, or a
// home that is the unit's StateDirectory, systemd hands it over at start.
func setupServiceHome(ctx context.Context, g *globals, opts service.Options) error {
	if _, err := runtime.EnsureDir(opts.Home); err != nil {
		return withCode(exitError, err)
	}
	cfgPath := filepath.Join(opts.Home, "config.toml")
	cfg, err := service.Config(opts.Workspace)
	if err != nil {
		return withCode(exitError, err)
	}
	created, err := runtime.WriteNew(cfgPath, cfg)
	if err != nil {
		return withCode(exitError, err)
	}
	if created {
		infof(g.stderr, "wrote %s", cfgPath)
	} else {
		infof(g.stderr, "%s exists; kept it (the service needs [sandbox] run_as = \"\" and a workspace it can write)", cfgPath)
	}
	sub := &globals{home: opts.Home, config: cfgPath, stdin: g.stdin, stdout: io.Discard, stderr: io.Discard}
	if err := runInit(ctx, sub, "", false, "", false); err != nil {
		return err
	}
	if opts.User == "" {
		return nil
	}
	if err := service.HandTo(opts.User, opts.Group, opts.Home, opts.Workspace); err != nil {
		return withCode(exitError, err)
	}
	return nil
}

func newServiceUninstallCommand(g *globals) *cobra.Command {
	var (
		unitDir     string
		noSystemctl bool
	)
	c := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and disable claw.service and remove the unit",
		Long: `Stop and disable claw.service, remove the unit file from --unit-dir and
reload systemd. The service's home (receipts, keys, config) is kept.

EXIT STATUS
  0 removed (or was not installed), 1 error (also: systemd is not running,
  use --no-systemctl), 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if !noSystemctl {
				if !service.Running() {
					return noSystemdError()
				}
				path := filepath.Join(unitDir, service.UnitName)
				if _, err := os.Stat(path); err == nil {
					if err := systemctl(ctx, g, "disable", "--now", service.UnitName); err != nil {
						return err
					}
				}
			}
			removed, err := service.Uninstall(unitDir)
			if err != nil {
				return withCode(exitError, err)
			}
			if !removed {
				infof(g.stderr, "%s was not installed", filepath.Join(unitDir, service.UnitName))
			} else {
				infof(g.stderr, "removed %s; the service's home is kept", filepath.Join(unitDir, service.UnitName))
			}
			if noSystemctl {
				return nil
			}
			return systemctl(ctx, g, "daemon-reload")
		},
	}
	c.Flags().StringVar(&unitDir, "unit-dir", service.DefaultUnitDir, "directory claw.service was written to")
	c.Flags().BoolVar(&noSystemctl, "no-systemctl", false, "only remove the unit file; do not call systemctl")
	return c
}

func newServiceSystemctlCommand(g *globals, verb, short string) *cobra.Command {
	long := fmt.Sprintf(`Run 'systemctl %s claw.service'.`, verb)
	if verb == "status" {
		long += `

EXIT STATUS
  0 running, 1 not running or error (also: systemd is not running).`
	} else {
		long += `

EXIT STATUS
  0 ok, 1 error (also: systemd is not running).`
	}
	return &cobra.Command{
		Use:   verb,
		Short: short,
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if !service.Running() {
				return noSystemdError()
			}
			out, err := service.Systemctl(c.Context(), verb, service.UnitName)
			if verb == "status" {
				g.stdout.Write(out)
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return silentExit(exitError) // inactive, failed or unknown: systemctl said so
				}
				if err != nil {
					return withCode(exitError, err)
				}
				return nil
			}
			g.stderr.Write(out)
			if err != nil {
				return withCode(exitError, err, "see 'journalctl -u claw.service'")
			}
			return nil
		},
	}
}

// systemctl runs one systemctl command, its output on stderr.
func systemctl(ctx context.Context, g *globals, args ...string) error {
	out, err := service.Systemctl(ctx, args...)
	g.stderr.Write(out)
	if errors.Is(err, service.ErrNoSystemd) {
		return noSystemdError()
	}
	if err != nil {
		return withCode(exitError, err)
	}
	return nil
}

func noSystemdError() error {
	return withCode(exitError, service.ErrNoSystemd,
		"systemd is not PID 1 here (a container?): run 'claw serve' directly under your supervisor",
		"or write the unit only: claw service install --no-systemctl --unit-dir DIR")
}
