package executor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMain builds the cgo-free helper once (the production path) and lets
// the test binary also act as the child (the self-exec fallback).
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case ChildEntry:
			os.Exit(ChildMain(os.Args[2:]))
		case ToolEntry:
			os.Exit(ToolMain(os.Args[2:]))
		}
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

func TestSmoke(t *testing.T) {
	ws := t.TempDir()
	res, err := Run(context.Background(), Spec{Argv: []string{"bash", "-c", "echo hi; id; pwd; ls /; cat /proc/self/status | grep -E 'NoNew|Cap|Seccomp'; echo x > f; ls -la"}, Write: []string{ws}})
	t.Logf("%+v\n%s\n%s", res, res.Stdout, res.Stderr)
	t.Logf("err=%v support=%+v", err, Check())
}
