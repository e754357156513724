package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
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
	var o runtime.ServiceInstall
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
			o.Init = func(ctx context.Context, home, config string) error {
				sub := &globals{home: home, config: config, stdin: g.stdin, stdout: io.Discard, stderr: io.Discard}
				return runInit(ctx, sub, "", false, "", false)
			}
			o.Out = g.stderr
			o.Infof = func(f string, a ...any) { infof(g.stderr, f, a...) }
			o.Warnf = func(f string, a ...any) { warnf(g.stderr, f, a...) }
			return runtime.InstallService(c.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.UnitDir, "unit-dir", runtime.ServiceUnitDir, "directory to write claw.service into")
	f.StringVar(&o.Options.Binary, "binary", "", "claw executable the unit runs (default this one)")
	f.StringVar(&o.Options.User, "user", "", "existing system user to run as (default a DynamicUser)")
	f.StringVar(&o.Options.Group, "group", "", "group to run as (default the user's)")
	f.StringVar(&o.Options.Home, "state-dir", runtime.ServiceHome, "the service's claw home (CLAW_HOME)")
	f.StringVar(&o.Options.Workspace, "workspace", "", "the agent's workspace (default STATE-DIR/workspace)")
	f.StringSliceVar(&o.Options.ReadWritePaths, "read-write", nil, "further `PATH`s the service may write (repeatable)")
	f.DurationVar(&o.Options.Watchdog, "watchdog", runtime.ServiceWatchdog, "WatchdogSec of the unit")
	f.BoolVar(&o.Options.MemoryDenyWriteExecute, "deny-write-execute", false, "add MemoryDenyWriteExecute=yes (breaks JIT runtimes the agent runs)")
	f.BoolVar(&o.Force, "force", false, "replace a different existing claw.service")
	f.BoolVar(&o.NoSystemctl, "no-systemctl", false, "only write the unit and the home; do not call systemctl")
	f.BoolVar(&o.Now, "now", false, "also start the service")
	return c
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
			return runtime.UninstallService(c.Context(), unitDir, noSystemctl, g.stderr, func(f string, a ...any) { infof(g.stderr, f, a...) })
		},
	}
	c.Flags().StringVar(&unitDir, "unit-dir", runtime.ServiceUnitDir, "directory claw.service was written to")
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
			return runtime.ServiceVerb(c.Context(), verb, g.stdout, g.stderr)
		},
	}
}
