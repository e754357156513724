package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/clawsec/claw/internal/service"
)

// The defaults of claw service install: where the unit goes, the
// service's claw home, and the unit's watchdog.
const (
	ServiceUnitDir  = service.DefaultUnitDir
	ServiceHome     = service.DefaultHome
	ServiceWatchdog = service.DefaultWatchdog
)

// ServiceInstall is what claw service install does: write the unit of
// Options to UnitDir (replacing a different one only with Force), create
// the service's claw home, and enable the unit (and start it, with Now)
// unless NoSystemctl.
type ServiceInstall struct {
	Options                 service.Options
	UnitDir                 string
	Force, NoSystemctl, Now bool
	// Init creates the claw home with its config file the way claw init
	// does, quietly.
	Init func(ctx context.Context, home, config string) error
	// Out gets what systemctl says; Infof and Warnf the progress.
	Out          io.Writer
	Infof, Warnf func(format string, args ...any)
}

// InstallService installs claw.service as o says.
func InstallService(ctx context.Context, o ServiceInstall) error {
	opts := o.Options
	if !o.NoSystemctl && !service.Running() {
		return noSystemdError()
	}
	var ue *service.UserError
	switch err := opts.Locate(); {
	case errors.Is(err, service.ErrNoBinary):
		return WithCode(ExitError, err, "give it with --binary")
	case errors.As(err, &ue):
		return WithCode(ExitError, err,
			fmt.Sprintf("create it: useradd --system --no-create-home --shell /usr/sbin/nologin %s", opts.User),
			"or leave --user out to run as a DynamicUser")
	case err != nil:
		return Usagef("%v", err)
	}
	unit, err := service.Render(opts)
	if err != nil {
		return WithCode(ExitUsage, err)
	}
	if setting := service.HiddenFrom(opts.Binary); setting != "" {
		o.Warnf("the unit runs %s, but its %s hides that path from the service: it will not start", opts.Binary, setting)
		o.Infof("hint: install claw outside /home, /root, /tmp and /var/tmp (for example 'install -m 0755 bin/claw bin/claw-sandbox /usr/local/bin/') and give it with --binary")
	}
	opts = opts.Resolved()
	if err := setupServiceHome(ctx, o, opts); err != nil {
		return err
	}
	res, err := service.Install(o.UnitDir, unit, o.Force)
	switch {
	case errors.Is(err, service.ErrUnitDiffers):
		return WithCode(ExitError, err, "compare it with 'claw service install --unit-dir DIR --no-systemctl' into another directory, then use --force to replace it")
	case err != nil:
		return WithCode(ExitError, err)
	case res.Unchanged:
		o.Infof("%s is up to date", res.Path)
	case res.Replaced:
		o.Infof("replaced %s", res.Path)
	default:
		o.Infof("wrote %s", res.Path)
	}
	if o.NoSystemctl {
		o.Infof("systemctl not called (--no-systemctl)")
		return nil
	}
	if err := systemctl(ctx, o.Out, "daemon-reload"); err != nil {
		return err
	}
	args := []string{"enable", service.UnitName}
	if o.Now {
		args = []string{"enable", "--now", service.UnitName}
	}
	if err := systemctl(ctx, o.Out, args...); err != nil {
		return err
	}
	if o.Now {
		o.Infof("claw.service enabled and started")
	} else {
		o.Infof("claw.service enabled; start it with 'claw service start'")
	}
	return nil
}

// setupServiceHome creates the service's claw home the way claw init does,
// with the service's config written first (workspace inside the home,
// run_as empty), and hands it to a dedicated user. With DynamicUser, or a
// home that is the unit's StateDirectory, systemd hands it over at start.
func setupServiceHome(ctx context.Context, o ServiceInstall, opts service.Options) error {
	if _, err := EnsureDir(opts.Home); err != nil {
		return WithCode(ExitError, err)
	}
	cfgPath := filepath.Join(opts.Home, "config.toml")
	cfg, err := service.Config(opts.Workspace)
	if err != nil {
		return WithCode(ExitError, err)
	}
	created, err := WriteNew(cfgPath, cfg)
	if err != nil {
		return WithCode(ExitError, err)
	}
	if created {
		o.Infof("wrote %s", cfgPath)
	} else {
		o.Infof("%s exists; kept it (the service needs [sandbox] run_as = \"\" and a workspace it can write)", cfgPath)
	}
	if err := o.Init(ctx, opts.Home, cfgPath); err != nil {
		return err
	}
	if opts.User == "" {
		return nil
	}
	if err := service.HandTo(opts.User, opts.Group, opts.Home, opts.Workspace); err != nil {
		return WithCode(ExitError, err)
	}
	return nil
}

// UninstallService stops and disables claw.service (unless noSystemctl),
// removes its unit from unitDir, says so with infof and reloads systemd
// (unless noSystemctl). What systemctl says goes to out.
func UninstallService(ctx context.Context, unitDir string, noSystemctl bool, out io.Writer, infof func(format string, args ...any)) error {
	path := filepath.Join(unitDir, service.UnitName)
	if !noSystemctl {
		if !service.Running() {
			return noSystemdError()
		}
		if _, err := os.Stat(path); err == nil {
			if err := systemctl(ctx, out, "disable", "--now", service.UnitName); err != nil {
				return err
			}
		}
	}
	removed, err := service.Uninstall(unitDir)
	if err != nil {
		return WithCode(ExitError, err)
	}
	if !removed {
		infof("%s was not installed", path)
	} else {
		infof("removed %s; the service's home is kept", path)
	}
	if noSystemctl {
		return nil
	}
	return systemctl(ctx, out, "daemon-reload")
}

// ServiceVerb runs systemctl verb on claw.service. The output of status
// goes to stdout, and an inactive, failed or unknown unit ends claw with
// status 1 silently (systemctl said so); that of the other verbs goes to
// stderr.
func ServiceVerb(ctx context.Context, verb string, stdout, stderr io.Writer) error {
	if !service.Running() {
		return noSystemdError()
	}
	out, err := service.Systemctl(ctx, verb, service.UnitName)
	if verb == "status" {
		stdout.Write(out)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return SilentExit(ExitError)
		}
		if err != nil {
			return WithCode(ExitError, err)
		}
		return nil
	}
	stderr.Write(out)
	if err != nil {
		return WithCode(ExitError, err, "see 'journalctl -u claw.service'")
	}
	return nil
}

// systemctl runs one systemctl command, its output to out.
func systemctl(ctx context.Context, out io.Writer, args ...string) error {
	b, err := service.Systemctl(ctx, args...)
	out.Write(b)
	if errors.Is(err, service.ErrNoSystemd) {
		return noSystemdError()
	}
	if err != nil {
		return WithCode(ExitError, err)
	}
	return nil
}

func noSystemdError() error {
	return WithCode(ExitError, service.ErrNoSystemd,
		"systemd is not PID 1 here (a container?): run 'claw serve' directly under your supervisor",
		"or write the unit only: claw service install --no-systemctl --unit-dir DIR")
}
