package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/ttydrive"
)

var update = flag.Bool("update", false, "update testscript files and golden files")

func TestMain(m *testing.M) {
	// The sandbox probe (the [sandbox] condition, run in this process)
	// re-executes this binary under its own name: dispatch the hidden
	// entries here too, or the probe would run the tests again. It also
	// lets the tests that run actions in this process re-execute it.
	if code, ok := runtime.Reenter(os.Args[1:]); ok {
		os.Exit(code)
	}
	// claw init's workspace for root when ~ is out of run_as's reach:
	// inside the script's own directory, not the machine's /srv.
	if d := os.Getenv("CLAW_TEST_ROOT_WORKSPACE"); d != "" {
		runtime.RootWorkspace = d
	}
	testscript.Main(m, map[string]func(){
		"claw":     func() { os.Exit(run(os.Args[1:])) },
		"ttydrive": func() { os.Exit(ttydrive.Main(os.Args[1:])) },
	})
}

// TestScript runs the end-to-end scripts in testdata/script against the real
// claw binary (this test binary re-executed as "claw").
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("CLAW_HOME", filepath.Join(e.WorkDir, ".claw"))
			if root, err := filepath.Abs(filepath.Join("..", "..")); err == nil {
				e.Setenv("CLAW_REPO", root) // the checkout: scripts/demo.sh
			}
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("CLAW_TEST_ROOT_WORKSPACE", filepath.Join(e.WorkDir, "srv", "claw", "workspace"))
			// Sandboxed tools re-execute claw after the child has
			// switched to the unprivileged run_as user (the tests run as
			// root): the directory testscript put claw in must be
			// traversable by that user.
			_ = os.Chmod(filepath.Dir(e.WorkDir), 0o755)
			_ = os.Chmod(e.WorkDir, 0o755)
			for _, dir := range filepath.SplitList(e.Getenv("PATH")) {
				if fi, err := os.Stat(filepath.Join(dir, "claw")); err == nil && fi.Mode().IsRegular() {
					openToRunAs(dir)
					break
				}
			}
			e.Values["discord"] = &discordFake{}
			if v := os.Getenv("CLAW_REQUIRE_SANDBOX"); v != "" {
				e.Setenv("CLAW_REQUIRE_SANDBOX", v)
			}
			return os.MkdirAll(filepath.Join(e.WorkDir, "home"), 0o755)
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":       cmdStatus,
			"bridgeclient": cmdBridgeClient,
			"discord":      cmdDiscord,
			"httpserve":    cmdHTTPServe,
		},
	})
}

// scriptCondition answers [root] and [sandbox] (Landlock and seccomp usable;
// with CLAW_REQUIRE_SANDBOX set it is always true so scripts fail rather
// than skip).
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	case "sandbox":
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			return true, nil
		}
		return runtime.SandboxUsable(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// cmdHTTPServe starts an HTTP server on 127.0.0.1 for the rest of the
// script and puts its port in the variable NAME:
//
//	httpserve PORT
//
// It answers every request with "served PATH" and a newline.
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpserve NAME")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "served %s\n", r.URL.Path)
	}))
	ts.Defer(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ts.Setenv(args[0], port)
}

// cmdStatus runs a program and asserts its exact exit status:
//
//	status 3 claw gate test shell 'rm -rf /'
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! status")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// openToRunAs makes dir and its parent (testscript's private temp dir)
// searchable by everyone, so the unprivileged run_as user of a sandboxed
// action can re-execute the claw they hold.
func openToRunAs(dir string) {
	_ = os.Chmod(dir, 0o755)
	_ = os.Chmod(filepath.Dir(dir), 0o755)
}
