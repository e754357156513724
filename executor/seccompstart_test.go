//go:build linux

package executor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withCompiler makes every seccomp program compile with compile, from an
// empty cache, for the rest of the test.
func withCompiler(t *testing.T, compile func(net bool) ([]byte, error)) {
	t.Helper()
	bpfMu.Lock()
	saved, savedCompile := bpfCache, compileSeccomp
	bpfCache, compileSeccomp = map[bpfKey][]byte{}, compile
	bpfMu.Unlock()
	t.Cleanup(func() {
		bpfMu.Lock()
		bpfCache, compileSeccomp = saved, savedCompile
		bpfMu.Unlock()
	})
}

// helperChildren are the processes this one started that run the
// sandbox helper.
func helperChildren(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		comm, rest, ok := strings.Cut(string(b), ") ")
		if !ok || !strings.HasSuffix(comm, "("+HelperName) {
			continue
		}
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestSeccompCompiledOnceStarted: an action started on demand compiles
// its seccomp program (the first time a process needs it) once its child
// has started, so the two overlap; a program that cannot be compiled then
// discards that child: the action fails closed (ErrUnavailable), nothing
// ran and no child is left. Degraded, it runs without seccomp and says so.
func TestSeccompCompiledOnceStarted(t *testing.T) {
	requireSandbox(t)
	var started []int
	withCompiler(t, func(bool) ([]byte, error) {
		started = helperChildren(t)
		return nil, errors.New("planted compile failure")
	})
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	res, err := Run(context.Background(), Spec{Argv: []string{"touch", marker}, Write: []string{ws}})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "planted compile failure") {
		t.Fatalf("err = %v, want ErrUnavailable naming the compile failure", err)
	}
	if len(started) == 0 {
		t.Fatal("the seccomp program was compiled before the child was started")
	}
	absent(t, marker)
	for _, pid := range started {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			t.Errorf("child %d is still there after the action failed", pid)
		}
	}
	if res.ExitCode != 0 || len(res.Stdout) > 0 {
		t.Errorf("a failed action reports a run: %+v", res)
	}

	degraded := func(name string) {
		t.Helper()
		res, err := Run(context.Background(), Spec{Argv: []string{"touch", marker}, Write: []string{ws}, Degraded: true})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s, degraded: %v, %+v", name, err, res)
		}
		said := strings.Count(strings.Join(res.Sandbox.Warnings, "\n"), "DEGRADED: sandbox unavailable: seccomp filters are not available")
		if res.Sandbox.Seccomp || !res.Sandbox.Degraded || said != 1 {
			t.Errorf("%s: degraded run without seccomp reports %+v", name, res.Sandbox)
		}
	}
	degraded("on demand")
	Prestart() // an armed plan needs the program before a worker is taken
	defer StopPrestart()
	degraded("prestarting")
}

// TestKernelRefusedSeccompRunsNothing: a program the kernel refuses (as
// a kernel without seccomp filters would refuse any) stops the child at
// its seccomp step: exit 126, a SetupError naming the step, nothing ran.
func TestKernelRefusedSeccompRunsNothing(t *testing.T) {
	requireSandbox(t)
	withCompiler(t, func(bool) ([]byte, error) {
		return []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}, nil // no such instruction
	})
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	res, err := Run(context.Background(), Spec{Argv: []string{"touch", marker}, Write: []string{ws}})
	var se *SetupError
	if !errors.As(err, &se) || se.Stage != "seccomp" || res.ExitCode != 126 {
		t.Fatalf("err %v exit %d, want a SetupError at seccomp and 126", err, res.ExitCode)
	}
	absent(t, marker)
}

// TestHelperEnvironment: the helper runs with helperEnv and nothing else
// (one P for its runtime), and the command gets none of it.
func TestHelperEnvironment(t *testing.T) {
	requireSandbox(t)
	var environs []string
	withCompiler(t, func(net bool) ([]byte, error) {
		for _, pid := range helperChildren(t) {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
			if err != nil {
				t.Error(err)
			}
			environs = append(environs, string(b))
		}
		return buildSeccomp(net)
	})
	res := run(t, Spec{Argv: []string{"env"}})
	if len(environs) == 0 {
		t.Fatal("no helper seen")
	}
	for _, e := range environs {
		if e != "GOMAXPROCS=1\x00" {
			t.Errorf("helper environment %q, want GOMAXPROCS=1 alone", e)
		}
	}
	if strings.Contains(string(res.Stdout), "GOMAXPROCS") {
		t.Errorf("the command got the helper's environment:\n%s", res.Stdout)
	}
}
