package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/broker/brokertest"
	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/receipts"
)

// testEstop is the emergency stop of a fresh claw home whose receipt log
// is signed by a new key; fail, when set, makes the key unloadable.
func testEstop(t *testing.T, fail *bool) (Estop, string) {
	t.Helper()
	home := t.TempDir()
	signer := brokertest.NewSigner(t)
	logDir := filepath.Join(home, "receipts")
	s := Estop{Home: home, Warn: func(string, ...any) {}, Log: StateLog{
		Signer: func() (*receipts.Signer, error) {
			if *fail {
				return nil, errors.New("no key today")
			}
			return signer, nil
		},
		Dir:    func() (string, error) { return logDir, nil },
		Config: func() (string, string, error) { return home, filepath.Join(home, "config.toml"), nil },
	}}
	return s, logDir
}

// receiptTypes lists the types of the receipts in the log at dir.
func receiptTypes(t *testing.T, dir string) []string {
	t.Helper()
	var types []string
	err := receipts.Walk(context.Background(), dir, func(r receipts.Record) error {
		if r.Err != nil {
			t.Fatalf("malformed receipt: %v", r.Err)
		}
		types = append(types, string(r.Line.Decoded.Type))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// TestEstopFailsClosed: the stop takes effect even when its receipt cannot
// be written (and says so, exit 1); a clearing that cannot be recorded
// leaves the stop engaged. Each change that is recorded leaves a receipt.
func TestEstopFailsClosed(t *testing.T) {
	ctx := context.Background()
	fail := true
	s, logDir := testEstop(t, &fail)

	_, err := s.Engage(ctx, "cli:test", "looping")
	if ExitCode(err) != ExitError || !strings.Contains(err.Error(), "engaged, but its receipt could not be written") {
		t.Fatalf("engage without a key: %v (exit %d); want exit 1 saying the stop is engaged", err, ExitCode(err))
	}
	if !estop.Engaged(s.File()) {
		t.Fatal("engage without a key: the stop is not engaged")
	}
	if engaged, err := s.Clear(ctx, "cli:test"); !engaged || ExitCode(err) != ExitError || !estop.Engaged(s.File()) {
		t.Fatalf("clear without a key: engaged %v, %v; the stop must stay engaged with exit 1", engaged, err)
	}

	fail = false
	already, err := s.Engage(ctx, "cli:test", "again")
	if err != nil || !already {
		t.Fatalf("engage again: already %v, %v; want already engaged, recorded", already, err)
	}
	if engaged, err := s.Clear(ctx, "cli:test"); !engaged || err != nil || estop.Engaged(s.File()) {
		t.Fatalf("clear: engaged %v, %v, file there %v; want cleared", engaged, err, estop.Engaged(s.File()))
	}
	if engaged, err := s.Clear(ctx, "cli:test"); engaged || err != nil {
		t.Fatalf("clear when not engaged: engaged %v, %v", engaged, err)
	}
	got := strings.Join(receiptTypes(t, logDir), " ")
	if strings.Count(got, "estop") != 2 {
		t.Errorf("receipts %q; want the engaging and the clearing that were recorded, and nothing else of the stop", got)
	}
}

// TestEstopNoHome: engaging in a claw home that is not there makes
// nothing and says how to create it.
func TestEstopNoHome(t *testing.T) {
	fail := false
	s, _ := testEstop(t, &fail)
	s.Home = filepath.Join(s.Home, "missing")
	_, err := s.Engage(context.Background(), "cli:test", "")
	var e *Error
	if !errors.As(err, &e) || e.Code != ExitError || len(e.Hints) == 0 || !strings.Contains(e.Hints[0], "claw init") {
		t.Fatalf("engage without a home: %#v; want exit 1 with the hint to run claw init", err)
	}
	if _, err := os.Stat(s.Home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("engage without a home made %s", s.Home)
	}
}
