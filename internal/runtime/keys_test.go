package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawsec/claw/receipts"
)

// TestKeyErrorSteps: each way key handling fails names its step, which is
// what claw keys turns into an exit status and a hint.
func TestKeyErrorSteps(t *testing.T) {
	step := func(t *testing.T, err error) KeyStep {
		t.Helper()
		var ke *KeyError
		if !errors.As(err, &ke) {
			t.Fatalf("error %v (%T) is not a *KeyError", err, err)
		}
		return ke.Step
	}
	noPass := func() ([]byte, error) { return nil, errors.New("no passphrase here") }
	dir := filepath.Join(t.TempDir(), "keys")
	logDir := filepath.Join(t.TempDir(), "receipts")

	if _, err := LoadReceiptSigner(dir, noPass); step(t, err) != KeyMissing {
		t.Errorf("no key: step %v, want KeyMissing", step(t, err))
	}
	if _, err := ShowReceiptKey(dir); step(t, err) != KeyMissing {
		t.Errorf("no public key: step %v, want KeyMissing", step(t, err))
	}
	if _, err := RotateReceiptKey(context.Background(), dir, logDir, "", noPass); step(t, err) != KeyRead {
		t.Errorf("rotate without a key: step %v, want KeyRead", step(t, err))
	}
	if _, err := GenerateReceiptKey(dir, "rsa", nil); step(t, err) != KeyKind {
		t.Errorf("bad kind: step %v, want KeyKind", step(t, err))
	}
	ki, err := GenerateReceiptKey(dir, receipts.Ed25519, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateReceiptKey(dir, receipts.Ed25519, nil); step(t, err) != KeyExists {
		t.Errorf("second key: step %v, want KeyExists", step(t, err))
	}
	if _, err := RotateReceiptKey(context.Background(), dir, logDir, "rsa", noPass); step(t, err) != KeyKind {
		t.Errorf("rotate to a bad kind: step %v, want KeyKind", step(t, err))
	}
	if err := os.WriteFile(ki.Private, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadReceiptSigner(dir, noPass); step(t, err) != KeyParse {
		t.Errorf("garbage key: step %v, want KeyParse", step(t, err))
	}
}

// TestRotateReceiptKey: the new key signs, the old one is kept under its
// key id, and the rotation is in the log.
func TestRotateReceiptKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	logDir := filepath.Join(t.TempDir(), "receipts")
	old, err := GenerateReceiptKey(dir, receipts.Ed25519, nil)
	if err != nil {
		t.Fatal(err)
	}
	rot, err := RotateReceiptKey(context.Background(), dir, logDir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rot.OldKID != old.KID || rot.NewKID == old.KID || rot.Seq == 0 {
		t.Errorf("rotation %+v after key %s", rot, old.KID)
	}
	if _, err := os.Stat(filepath.Join(dir, "receipt-"+old.KID+".key")); err != nil || rot.Retired != filepath.Join(dir, "receipt-"+old.KID+".key") {
		t.Errorf("old key not kept as %s: %v", rot.Retired, err)
	}
	s, err := LoadReceiptSigner(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyID() != rot.NewKID {
		t.Errorf("signer %s, want the new key %s", s.KeyID(), rot.NewKID)
	}
	keys, files, err := TrustedReceiptKeys(dir)
	if err != nil || len(keys) != 2 || len(files) != 2 {
		t.Errorf("trusted keys %d in %v (%v), want the old and the new", len(keys), files, err)
	}
}

// TestNewReceiptKeyAsksLast: a bad kind (exit 2) and a key already there
// (exit 1) are refused before anyone is asked for a passphrase.
func TestNewReceiptKeyAsksLast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	keyDir := func() (string, error) { return dir, nil }
	asked := 0
	pass := func() ([]byte, error) { asked++; return []byte("pass phrase"), nil }
	if _, err := NewReceiptKey(keyDir, "rsa", pass); ExitCode(err) != ExitUsage || asked != 0 {
		t.Fatalf("kind rsa: %v (exit %d), asked %d times", err, ExitCode(err), asked)
	}
	ki, err := NewReceiptKey(keyDir, "ed25519", pass)
	if err != nil || !ki.Encrypted || asked != 1 {
		t.Fatalf("new key: %+v, %v, asked %d times", ki, err, asked)
	}
	if _, err := NewReceiptKey(keyDir, "ed25519", pass); ExitCode(err) != ExitError || asked != 1 {
		t.Fatalf("second key: %v (exit %d), asked %d times", err, ExitCode(err), asked)
	}
	if _, err := ReceiptSigner("", keyDir, func() ([]byte, error) { return []byte("wrong"), nil }); ExitCode(err) != ExitError {
		t.Fatalf("wrong passphrase: %v (exit %d)", err, ExitCode(err))
	}
	if _, err := ReceiptSigner("gcpkms://k", keyDir, pass); ExitCode(err) != ExitUsage {
		t.Fatalf("kms: %v (exit %d)", err, ExitCode(err))
	}
}

// TestReceiptDirs: --home wins over $CLAW_HOME, which wins over ~/.claw;
// with none of them, the error says how to name the home.
func TestReceiptDirs(t *testing.T) {
	t.Setenv("CLAW_HOME", "/env/home")
	t.Setenv("HOME", "/user")
	for _, c := range []struct {
		flag, keys, logs string
	}{
		{"/flag/home", "/flag/home/keys", "/flag/home/receipts"},
		{"", "/env/home/keys", "/env/home/receipts"},
	} {
		if k, err := ReceiptKeyDir(c.flag); err != nil || k != c.keys {
			t.Errorf("ReceiptKeyDir(%q) = %q, %v, want %q", c.flag, k, err, c.keys)
		}
		if l, err := ReceiptLogDir(c.flag); err != nil || l != c.logs {
			t.Errorf("ReceiptLogDir(%q) = %q, %v, want %q", c.flag, l, err, c.logs)
		}
	}
	t.Setenv("CLAW_HOME", "")
	if h, err := ReceiptHome(""); err != nil || h != "/user/.claw" {
		t.Errorf("ReceiptHome with $HOME only = %q, %v, want /user/.claw", h, err)
	}
	t.Setenv("HOME", "")
	_, err := ReceiptKeyDir("")
	var e *Error
	if !errors.As(err, &e) || e.Code != ExitError || len(e.Hints) != 1 || e.Hints[0] != "set CLAW_HOME or pass --home" {
		t.Errorf("no home at all: %#v, want exit 1 with the CLAW_HOME hint", err)
	}
}
