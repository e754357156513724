package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/atomicfile"
)

// ErrNoSystemd is returned (wrapped) when systemd is not the running init
// system, as in most containers: systemctl cannot do anything there.
var ErrNoSystemd = errors.New("systemd is not running on this system")

// ErrUnitDiffers is returned by [Install] when a different unit file is
// already installed and overwriting was not asked for.
var ErrUnitDiffers = errors.New("a different unit is already installed")

// Running reports whether systemd is the running init system (the test
// systemd itself uses, sd_booted(3)).
func Running() bool {
	fi, err := os.Lstat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// InstallResult says what [Install] did with the unit file.
type InstallResult struct {
	Path      string
	Unchanged bool // the same unit was already there
	Replaced  bool // a different unit was overwritten (force)
}

// Install writes unit to dir/claw.service (mode 0644, atomically). An
// identical file is left alone; a different one is replaced only with
// force, and otherwise the error wraps ErrUnitDiffers.
func Install(dir string, unit []byte, force bool) (InstallResult, error) {
	path := filepath.Join(dir, UnitName)
	res := InstallResult{Path: path}
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, unit):
		res.Unchanged = true
		return res, nil
	case err == nil && !force:
		return res, fmt.Errorf("%w: %s", ErrUnitDiffers, path)
	case err == nil:
		res.Replaced = true
	case !errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := atomicfile.WriteFile(path, unit, 0o644); err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	return res, nil
}

// Uninstall removes dir/claw.service. A missing file is not an error; the
// result says whether there was one.
func Uninstall(dir string) (removed bool, err error) {
	path := filepath.Join(dir, UnitName)
	if err := os.Remove(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("removing %s: %w", path, err)
	}
	return true, nil
}

// Systemctl runs systemctl with args and returns its combined output. It
// refuses with ErrNoSystemd when systemd is not running. A non-zero exit
// is returned as an *exec.ExitError (wrapped) along with the output:
// "systemctl status" exits 3 for a stopped unit, 4 for an unknown one.
func Systemctl(ctx context.Context, args ...string) ([]byte, error) {
	if !Running() {
		return nil, ErrNoSystemd
	}
	bin, err := exec.LookPath("systemctl")
	if err != nil {
		return nil, fmt.Errorf("%w: systemctl not found", ErrNoSystemd)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--no-pager"}, args...)...)
	cmd.Env = append(os.Environ(), "SYSTEMD_COLORS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("systemctl %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}
