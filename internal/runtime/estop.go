package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/receipts"
)

// StateLog is where the command line writes state-change receipts
// (estop, grants): the receipt log of the claw home, or the directory
// the config names.
type StateLog struct {
	Signer func() (*receipts.Signer, error)      // the receipt signing key
	Dir    func() (string, error)                // the claw home's receipt directory
	Config func() (home, path string, err error) // the config, which may move the directory
}

// Write opens the receipt log, lets fn append to it, and closes it.
func (s StateLog) Write(fn func(*broker.Log) error) error {
	signer, err := s.Signer()
	if err != nil {
		return err
	}
	dir, err := s.Dir()
	if err != nil {
		return err
	}
	// The stop must work with a broken config too: the config only moves
	// the receipt directory, and only when it loads cleanly.
	if home, path, err := s.Config(); err == nil {
		if cfg, _, err := config.LoadOrDefault(path, home); err == nil && cfg.Receipts.Dir != "" {
			dir = cfg.Receipts.Dir
		}
	}
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		return err
	}
	if err := fn(log); err != nil {
		log.Close()
		return err
	}
	return log.Close()
}

// EstopBy names who engages or clears the stop from the command line.
func EstopBy() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

// ReadEstop reads the ESTOP file (see estop.Read), its details escaped
// for a terminal.
func ReadEstop(file string) estop.State {
	st := estop.Read(file)
	st.Since, st.By, st.Reason = textesc.Clip(st.Since, -1), textesc.Clip(st.By, -1), textesc.Clip(st.Reason, -1)
	return st
}

// Estop engages and clears the emergency stop of the claw home Home,
// recording each change in Log.
type Estop struct {
	Home string
	Log  StateLog
	Warn func(format string, args ...any)
}

// File is the ESTOP file of the claw home.
func (s Estop) File() string { return filepath.Join(s.Home, estop.FileName) }

// Engage engages the stop in by's name and records it; already says it
// was engaged before. The stop takes effect first, even when the receipt
// cannot be written.
func (s Estop) Engage(ctx context.Context, by, reason string) (already bool, err error) {
	if fi, err := os.Stat(s.Home); err != nil || !fi.IsDir() {
		return false, WithCode(ExitError, fmt.Errorf("no claw home at %s", s.Home), "create it with 'claw init'")
	}
	reason = estop.CleanReason(reason, broker.Redact)
	file := s.File()
	already, err = estop.Engage(file, by, reason, time.Now())
	switch {
	case errors.Is(err, estop.ErrDetails): // the file exists: the stop is engaged anyway
		s.Warn("%v", err)
	case err != nil:
		return false, WithCode(ExitError, err)
	}
	err = s.Log.Write(func(log *broker.Log) error {
		_, err := log.EngageEstop(ctx, file, by, reason)
		return err
	})
	if err != nil {
		return false, WithCode(ExitError, fmt.Errorf("the emergency stop is engaged, but its receipt could not be written: %w", err))
	}
	return already, nil
}

// Clear records the clearing in by's name, then lifts the stop; engaged
// says whether it was engaged. No receipt, no clearing.
func (s Estop) Clear(ctx context.Context, by string) (engaged bool, err error) {
	file := s.File()
	if !estop.Engaged(file) {
		return false, nil
	}
	recorded := false
	err = s.Log.Write(func(log *broker.Log) error {
		_, err := log.ClearEstop(ctx, file, by)
		recorded = !errors.Is(err, broker.ErrNoReceipt)
		return err
	})
	switch {
	case err != nil && !recorded:
		return true, WithCode(ExitError, fmt.Errorf("the clearing could not be recorded, so the emergency stop stays engaged: %w", err))
	case err != nil:
		return true, WithCode(ExitError, err)
	}
	return true, nil
}

// CheckEstop fails while the emergency stop is engaged: no action runs.
func CheckEstop(s DoctorState) DoctorResult {
	if !s.HomeExists {
		return DoctorNotInitialised(s)
	}
	st := ReadEstop(filepath.Join(s.Home, estop.FileName))
	if !st.Engaged {
		return DoctorPassed("not engaged")
	}
	d := "engaged since " + OrUnknown(st.Since) + " by " + OrUnknown(st.By)
	if st.Reason != "" {
		d += ": " + st.Reason
	}
	return DoctorFailed(d+"; no action runs", "clear it with 'claw estop --clear'")
}

// OrUnknown is s, or "(unknown)" for "".
func OrUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
