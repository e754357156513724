// Package estop is claw's emergency stop: the file ESTOP in the claw
// home. While anything is at that path no action runs, and brokers with
// actions in flight cancel them (see the broker's Config.EstopFile).
//
// The file is made with O_EXCL and mode 0600 and holds, for people to
// read, when, by whom and why it was engaged:
//
//	engaged 2026-11-22T02:31:00Z
//	by cli:alice
//	reason agent looping on deploys
//
// Its content never matters to whether the stop is engaged: any file
// there, readable or not, and any error but "does not exist" when
// looking, mean engaged (fail closed). The CLI (`claw estop`), the daemon
// (POST /estop) and the broker share this package; the estop receipts
// are the broker's (broker.Log's EngageEstop and ClearEstop).
package estop

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/textesc"
)

// FileName is the name of the emergency stop file in the claw home.
const FileName = "ESTOP"

// ErrDetails means the stop is engaged, but the details could not be
// written into its file.
var ErrDetails = errors.New("the emergency stop is engaged, but its details could not be written")

// State is what the ESTOP file says.
type State struct {
	Engaged bool   `json:"engaged"`
	Since   string `json:"since,omitempty"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// Engaged reports whether the stop at file is engaged: anything there,
// or a look that fails for another reason than its absence. An empty
// file name is no stop.
func Engaged(file string) bool {
	if file == "" {
		return false
	}
	_, err := os.Lstat(file)
	return !errors.Is(err, os.ErrNotExist)
}

// Read reads the stop at file. Any file there means engaged, whatever its
// content; the details are read from at most 4 KiB of it, as written:
// escape them before showing them.
func Read(file string) State {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return State{}
	}
	st := State{Engaged: true}
	if err != nil {
		return st // there, but unreadable: still engaged
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 4096))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "engaged":
			st.Since = v
		case "by":
			st.By = v
		case "reason":
			st.Reason = v
		}
	}
	return st
}

// Engage creates the stop at file, saying by whom and why (one line each;
// the caller cleans reason). already is true when a stop was engaged
// before; its details are kept. An error wrapping [ErrDetails] leaves the
// stop engaged; any other means it is not.
func Engage(file, by, reason string, now time.Time) (already bool, err error) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("engaging the emergency stop: %w", err)
	}
	content := fmt.Sprintf("engaged %s\nby %s\nreason %s\n", now.UTC().Format(time.RFC3339), printable(by), printable(reason))
	_, werr := f.WriteString(content)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("%w into %s: %v", ErrDetails, file, werr)
	}
	return false, nil
}

// Clear lifts the stop at file. A stop that is not engaged is no error.
func Clear(file string) error {
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("clearing the emergency stop: %w", err)
	}
	return nil
}

// printable replaces control characters with spaces, so a value stays on
// its line.
// MaxReason bounds a stop's reason, in bytes, where it is kept: the stop
// file and the receipt.
const MaxReason = 512

// CleanReason is a stop's reason as it is kept: one line (runs of white
// space become one space), every other character that does not print
// escaped, the secrets redact finds removed, and at most MaxReason bytes
// (then "…"), never cut inside a character. The CLI, the daemon and
// Discord clean a reason through it.
func CleanReason(s string, redact func(string) string) string {
	s = textesc.String(strings.Join(strings.Fields(s), " "))
	return textesc.Cut(redact(s), MaxReason+len("…"), "…")
}

func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
