package executor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestMain builds the cgo-free helper once (the production path) and lets
// the test binary also act as the child (the self-exec fallback).
func TestMain(m *testing.M) {
	if code, ok := EnterChild(os.Args); ok {
		os.Exit(code)
	}
	AllowSelfExec()
	dir, err := os.MkdirTemp("", "claw-executor-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755)
	code := func() int {
		defer os.RemoveAll(dir)
		helper := filepath.Join(dir, HelperName)
		if err := buildHelper(helper); err != nil {
			fmt.Fprintln(os.Stderr, "building the sandbox helper:", err)
			return 1
		}
		SetHelper(helper)
		testBin = dir
		if err := buildProbe(filepath.Join(dir, "probe")); err != nil {
			fmt.Fprintln(os.Stderr, "building the probe:", err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// testBin is a directory of test programs, readable in every sandbox the
// tests make.
var testBin string

func buildHelper(out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/claw-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	return nil
}

func buildProbe(out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./testdata/probe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	return nil
}

// requireSandbox skips when the kernel lacks support, unless
// CLAW_REQUIRE_SANDBOX is set (CI), where it fails.
func requireSandbox(t *testing.T) {
	t.Helper()
	if err := Check().Require(0); err != nil {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			t.Fatalf("CLAW_REQUIRE_SANDBOX is set: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
}

// run runs a spec and fails the test on an unexpected error.
func run(t *testing.T, s Spec) Result {
	t.Helper()
	if s.Timeout == 0 {
		s.Timeout = 20 * time.Second
	}
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, res.Stderr)
	}
	return res
}

func execOut(argv ...string) (string, error) {
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	return string(bytes.TrimSpace(out)), err
}
