package executor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRlimits: the rlimits of Spec.Limits (and the core size, always 0)
// hold in the sandbox.
func TestRlimits(t *testing.T) {
	requireSandbox(t)
	// Raise this process's own soft core limit first: a child that
	// inherited claw's limits instead of setting its own would report it.
	var core unix.Rlimit
	must(t, unix.Getrlimit(unix.RLIMIT_CORE, &core))
	if core.Max == 0 {
		t.Log("the hard core limit is already 0 here: the core case cannot tell an inherited limit from a set one")
	}
	must(t, unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: core.Max, Max: core.Max}))
	t.Cleanup(func() { unix.Setrlimit(unix.RLIMIT_CORE, &core) })
	inEveryMode(t, func(t *testing.T) {
		// A busy loop is killed once it has used its CPU second (SIGKILL
		// when the soft and hard limits are equal, SIGXCPU first
		// otherwise). Without RLIMIT_CPU it would spin until the wall
		// timeout and the result would say timed out.
		t.Run("cpu", func(t *testing.T) {
			res, el, err := runBounded(Spec{Argv: bash("while :; do :; done"), Timeout: 15 * time.Second, Limits: Limits{CPUSeconds: 1}}, 25*time.Second)
			if err != nil || res.TimedOut || res.Signal != "SIGKILL" && res.Signal != "SIGXCPU" {
				t.Fatalf("after %v: err %v, timed out %v, signal %q exit %d", el, err, res.TimedOut, res.Signal, res.ExitCode)
			}
		})
		// The prober opens /dev/null until it fails: with 0, 1 and 2 open,
		// it gets 13 more under a limit of 16, then EMFILE. Without
		// RLIMIT_NOFILE it would open up to its own cap of 4096.
		t.Run("open files", func(t *testing.T) {
			const limit = 16
			res := run(t, Spec{Argv: sysprobeArgv(t, "nofile", "4096"), Read: []string{testBin}, Limits: Limits{OpenFiles: limit}})
			var n int
			var why string
			if _, err := fmt.Sscan(string(res.Stdout), &n, &why); err != nil || why != "EMFILE" || n == 0 || n+3 > limit {
				t.Fatalf("opened %q (stderr %q), want EMFILE within %d descriptors", res.Stdout, res.Stderr, limit)
			}
		})
		// No core dumps: soft and hard core limits are 0, so the command
		// cannot raise its own either.
		t.Run("core", func(t *testing.T) {
			res := run(t, Spec{Argv: bash("ulimit -S -c; ulimit -H -c")})
			if got := string(res.Stdout); got != "0\n0\n" {
				t.Fatalf("core limits (soft, hard) %q (stderr %q), want 0 and 0", got, res.Stderr)
			}
		})
	})
}

// TestSetuidGainsNothing: a setuid-root program run in the sandbox as an
// unprivileged user keeps that user's effective uid. Outside the sandbox
// the same file, run by the same user, runs as root (the control). Two
// things stop it inside: the workspace (like every mount) is nosuid,
// checked here, and no_new_privs is set (TestPositiveControls); the euid
// check fails only if both went.
func TestSetuidGainsNothing(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can make a setuid-root program and run the sandbox as another user")
	}
	const nobody = 65534
	ws := t.TempDir()
	must(t, os.Chmod(ws, 0o777))
	must(t, os.Chmod(filepath.Dir(ws), 0o755))
	id, err := exec.LookPath("id")
	must(t, err)
	data, err := os.ReadFile(id)
	must(t, err)
	prog := filepath.Join(ws, "suid-id")
	must(t, os.WriteFile(prog, data, 0o755))
	must(t, os.Chown(prog, 0, 0))
	must(t, os.Chmod(prog, 0o755|os.ModeSetuid))

	cmd := exec.Command(prog, "-u")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.Output()
	if err != nil || string(out) != "0\n" {
		t.Fatalf("control: the setuid copy run as %d outside the sandbox printed euid %q (%v), want 0", nobody, out, err)
	}

	script := fmt.Sprintf("%s -u; %s -ru; awk -v d=%s '$5 == d {print $6}' /proc/self/mountinfo", prog, prog, ws)
	inEveryMode(t, func(t *testing.T) {
		res := run(t, Spec{Argv: bash(script), Write: []string{ws}, RunAs: fmt.Sprint(nobody)})
		lines := strings.Fields(string(res.Stdout))
		if len(lines) != 3 || lines[0] != fmt.Sprint(nobody) || lines[1] != fmt.Sprint(nobody) {
			t.Fatalf("euid, uid and the workspace's mount options: %q (stderr %q)", res.Stdout, res.Stderr)
		}
		if !strings.Contains(","+lines[2]+",", ",nosuid,") {
			t.Errorf("the workspace is mounted %s, not nosuid", lines[2])
		}
	})
}

// TestInheritedRlimitsLowered: under hard limits below the ones claw sets
// (a ulimit, systemd's LimitNPROC=, a container's), actions still run,
// with the inherited limits: claw lowers limits and never tries to raise
// one (which would fail without privilege in the init user namespace).
func TestInheritedRlimitsLowered(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("lowering this process's hard limits could not be undone without root (testdata/script/sandbox_rlimit.txtar covers an unprivileged user)")
	}
	for _, l := range []struct {
		res  int
		hard uint64
	}{{unix.RLIMIT_NPROC, 300}, {unix.RLIMIT_NOFILE, 512}} {
		var old unix.Rlimit
		must(t, unix.Getrlimit(l.res, &old))
		must(t, unix.Setrlimit(l.res, &unix.Rlimit{Cur: min(old.Cur, l.hard), Max: l.hard}))
		t.Cleanup(func() { unix.Setrlimit(l.res, &old) })
	}
	res, err := Run(context.Background(), Spec{Argv: bash("ulimit -Hu; ulimit -Hn"), Timeout: 20 * time.Second,
		Limits: Limits{Processes: 512, OpenFiles: 1024}})
	if err != nil {
		t.Fatalf("Run: %v (setup %q)", err, res.SetupError)
	}
	if got := string(res.Stdout); got != "300\n512\n" {
		t.Fatalf("hard limits (processes, open files) %q (stderr %q), want the inherited 300 and 512", got, res.Stderr)
	}
}
