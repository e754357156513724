package executor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// prestarted runs f with Prestart on and fails unless every Run in it
// took a prestarted child.
func prestarted(t *testing.T, runs int64, f func()) {
	t.Helper()
	Prestart()
	defer StopPrestart()
	before := prestartedTaken()
	f()
	if n := prestartedTaken() - before; n != runs {
		t.Fatalf("%d of %d runs took a prestarted child", n, runs)
	}
}

func TestPrestartedConfinement(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	t.Setenv("CLAW_TEST_API_KEY", "sk-planted-prestart-0123456789")
	prestarted(t, 2, func() {
		res := run(t, f.spec("bash", "-c", "grep -E '^(Seccomp|NoNewPrivs|CapEff|CapBnd):' /proc/self/status; env; echo > "+filepath.Join(f.outside, "x")+" || echo denied"))
		out := string(res.Stdout)
		for _, want := range []string{"Seccomp:\t2", "NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "denied"} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in:\n%s", want, out)
			}
		}
		if strings.Contains(out, "sk-planted") {
			t.Error("the planted key reached the prestarted child")
		}
		absent(t, filepath.Join(f.outside, "x"))
		if res.Sandbox.LandlockABI == 0 || !res.Sandbox.Seccomp || !res.Sandbox.ReadOnlyFS || !res.Sandbox.FreshProc {
			t.Errorf("applied: %+v", res.Sandbox)
		}

		// a tool, with its JSON arguments on stdin
		b, _ := json.Marshal(map[string]any{"path": filepath.Join(f.ws, "f.txt")})
		res = run(t, Spec{Tool: ToolFileRead, Args: b, Read: []string{f.ws}})
		if res.Tool == nil || res.Tool.Error != "" || !strings.Contains(string(res.Tool.Payload), "workspace file") {
			t.Errorf("file_read in a prestarted child: %+v stderr %q", res.Tool, res.Stderr)
		}
	})
}

func TestPrestartedTimeoutKillsTree(t *testing.T) {
	requireSandbox(t)
	prestarted(t, 1, func() {
		res, err := Run(context.Background(), Spec{Argv: bash("setsid sleep 1003.1 & (sleep 1003.2 &); sleep 1003.3"), Timeout: time.Second})
		if err != nil || !res.TimedOut {
			t.Fatalf("not timed out: %+v %v", res, err)
		}
	})
	if s := survivors("1003."); len(s) > 0 {
		t.Fatalf("survivors: %v", s)
	}
}

// TestStopPrestart leaves no child, home directory or cgroup behind, and
// a network action never takes the prestarted child (it has no network
// namespace of its own to give up).
func TestStopPrestart(t *testing.T) {
	requireSandbox(t)
	Prestart()
	p := waitWarm()
	if p == nil {
		t.Fatal("no prestarted child")
	}
	pid, cg, home := p.cmd.Process.Pid, p.cg, p.home.dir
	if _, err := os.Stat(home); err != nil {
		t.Fatalf("prestarted child's home: %v", err)
	}
	n := warmTaken.Load()
	res := run(t, Spec{Argv: []string{"/bin/true"}, Net: Net{Ports: []uint16{443}}})
	if res.ExitCode != 0 || warmTaken.Load() != n {
		t.Fatalf("network action: exit %d, took prestarted: %v", res.ExitCode, warmTaken.Load() != n)
	}
	StopPrestart()
	if p.alive() {
		t.Errorf("prestarted child %d still alive", pid)
	}
	if _, err := os.Stat(home); err == nil {
		t.Errorf("left behind: %s", home)
	}
	if cg != nil {
		for _, d := range cg.dirs {
			if _, err := os.Stat(d); err == nil {
				t.Errorf("left behind: %s", d)
			}
		}
	}
}

// TestPrestartedLimits: an action with limits other than the defaults the
// prestarted child's cgroup was made with gets its own.
func TestPrestartedLimits(t *testing.T) {
	requireSandbox(t)
	if Check().Cgroup == "" {
		t.Skip("no delegated cgroup here")
	}
	l, err := findHelper()
	must(t, err)
	Prestart()
	defer StopPrestart()
	limits := withDefaults(Spec{Limits: Limits{Processes: 8}}).Limits
	p := takeWarm(l, Check().ns, false, limits)
	if p == nil {
		t.Fatal("no prestarted child")
	}
	defer p.discard()
	if p.cg == nil {
		t.Fatal("prestarted child has no cgroup")
	}
	b, err := os.ReadFile(filepath.Join(p.cg.dirs[0], "pids.max"))
	must(t, err)
	if got := strings.TrimSpace(string(b)); got != "8" {
		t.Fatalf("pids.max = %s, want 8", got)
	}
}

// TestToolInProcess: with the cgo-free helper a file tool runs in the
// sandbox's init process, confined on every thread; with the self-exec
// fallback (cgo) it runs as a second program, as before.
func TestToolInProcess(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	read := func(path string) Result {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"path": path})
		return run(t, Spec{Tool: ToolFileRead, Args: b, Read: []string{f.ws}})
	}
	res := read(filepath.Join(f.ws, "f.txt"))
	if !res.Sandbox.ToolInProcess || res.Tool == nil || res.Tool.Error != "" || !strings.Contains(string(res.Tool.Payload), "workspace file") {
		t.Fatalf("helper: in process %v, tool %+v, stderr %q", res.Sandbox.ToolInProcess, res.Tool, res.Stderr)
	}
	for _, p := range []string{f.secret, f.key, "/etc/shadow"} {
		if res := read(p); res.Tool == nil || res.Tool.Error == "" || strings.Contains(string(res.Tool.Payload), "TOP-SECRET") {
			t.Errorf("read %s in process: %+v", p, res.Tool)
		}
	}
	// the tool is the namespace's init: its environment is the helper's,
	// which is empty
	t.Setenv("CLAW_TEST_API_KEY", "sk-planted-inprocess-0123456789")
	if res := read("/proc/1/environ"); res.Tool == nil || strings.Contains(string(res.Tool.Payload), "sk-planted") {
		t.Errorf("read /proc/1/environ in process: %+v", res.Tool)
	}
	SetHelper("")
	defer SetHelper(filepath.Join(testBin, HelperName))
	res = read(filepath.Join(f.ws, "f.txt"))
	if res.Sandbox.ToolInProcess || res.Tool == nil || res.Tool.Error != "" {
		t.Fatalf("self-exec: in process %v, tool %+v, stderr %q", res.Sandbox.ToolInProcess, res.Tool, res.Stderr)
	}
}

// TestPrestartRecovers: a prestarted child that does not fit (here, the
// helper changed since it started) is discarded, and the following
// action gets a prestarted child again.
func TestPrestartRecovers(t *testing.T) {
	requireSandbox(t)
	helper := filepath.Join(testBin, HelperName)
	SetHelper("") // the self-exec fallback
	Prestart()
	defer StopPrestart()
	if p := waitWarm(); p == nil || !p.l.self {
		t.Fatal("no prestarted child of the self-exec fallback")
	}
	SetHelper(helper)
	before := prestartedTaken()
	run(t, Spec{Argv: []string{"/bin/true"}})
	if n := prestartedTaken() - before; n != 0 {
		t.Fatalf("a child of another helper was taken")
	}
	run(t, Spec{Argv: []string{"/bin/true"}})
	if n := prestartedTaken() - before; n != 1 {
		t.Fatalf("after a discarded child, the next action took %d prestarted children", n)
	}
}

// prestartedTaken counts the actions that ran in a child started ahead:
// a prestarted child or an armed worker.
func prestartedTaken() int64 { return warmTaken.Load() + armedTaken.Load() }

// waitWarm waits until the prestarted child is ready and leaves it in
// place.
func waitWarm() *proc {
	warm.Lock()
	ch := warm.next
	warm.Unlock()
	if ch == nil {
		return nil
	}
	p := <-ch
	ch <- p
	return p
}

// TestEndsOnExitReport: an action is over when the child reported the
// command's exit and the output ended, without waiting for the child's
// own exit; the output is complete and the status right.
func TestEndsOnExitReport(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	// Whether a run ends on the report or on init's exit is a race (both
	// are right); over ten runs the report should win at least once.
	before := earlyReturns.Load()
	b, _ := json.Marshal(map[string]any{"path": filepath.Join(f.ws, "f.txt")})
	for range 5 {
		res := run(t, Spec{Argv: bash("head -c 300000 /dev/zero | tr '\\0' x; echo done >&2; exit 7")})
		if res.ExitCode != 7 || res.StdoutBytes != 300000 || strings.TrimSpace(string(res.Stderr)) != "done" {
			t.Fatalf("exit %d, %d bytes of stdout, stderr %q", res.ExitCode, res.StdoutBytes, res.Stderr)
		}
		res = run(t, Spec{Tool: ToolFileRead, Args: b, Read: []string{f.ws}})
		if res.Tool == nil || res.Tool.Error != "" {
			t.Fatalf("tool: %+v", res.Tool)
		}
	}
	if earlyReturns.Load() == before {
		t.Fatal("no run ended on the exit report")
	}
	// a background process keeps the output open: the action ends when
	// init exits and the kernel kills it
	start := time.Now()
	res := run(t, Spec{Argv: bash("sleep 1004.1 & echo started"), Timeout: 10 * time.Second})
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "started" || time.Since(start) > 5*time.Second {
		t.Fatalf("background: exit %d stdout %q after %v", res.ExitCode, res.Stdout, time.Since(start))
	}
	// one that let go of the output is still there when the command
	// exits: the action is not over before init's exit killed it
	early := earlyReturns.Load()
	res = run(t, Spec{Argv: bash("setsid sleep 1004.2 </dev/null >/dev/null 2>&1 & echo started")})
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "started" {
		t.Fatalf("detached: exit %d stdout %q", res.ExitCode, res.Stdout)
	}
	if earlyReturns.Load() != early {
		t.Fatal("ended on the exit report while another process was left in the namespace")
	}
	if s := survivors("1004."); len(s) > 0 {
		t.Fatalf("survivors: %v", s)
	}
}

// TestPrestartedMountsChange: a prestarted child's mount namespace is a
// copy made when it started; after a mount on the host it is not used,
// and the action sees the new mount.
func TestPrestartedMountsChange(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir := t.TempDir()
	Prestart()
	defer StopPrestart()
	if waitWarm() == nil {
		t.Fatal("no prestarted child")
	}
	must(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
	defer unix.Unmount(dir, unix.MNT_DETACH)
	must(t, os.WriteFile(filepath.Join(dir, "on-tmpfs"), []byte("new mount\n"), 0o644))
	before := warmTaken.Load()
	res := run(t, Spec{Argv: []string{"cat", filepath.Join(dir, "on-tmpfs")}, Read: []string{dir}})
	if warmTaken.Load() != before {
		t.Error("a child prestarted before the mount was used")
	}
	if strings.TrimSpace(string(res.Stdout)) != "new mount" {
		t.Errorf("the action did not see the new mount: exit %d stdout %q stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}
