package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// TestRelaySparesTheParent: cloning a child into a new user namespace
// straight from this process makes the kernel copy its page tables, and
// this process then faults on its next write to every page it had; a
// prestarted child goes through the helper's relay, and the same writes
// fault (almost) never. Counted in page faults, not timed.
func TestRelaySparesTheParent(t *testing.T) {
	requireSandbox(t)
	sup := Check()
	l, err := findHelper()
	if err != nil || l.self || !sup.ns.user {
		t.Fatalf("helper %+v (%v), user namespace %v: the relay is not in use", l, err, sup.ns.user)
	}
	const pages = 8192
	size := pages * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	unix.Madvise(mem, unix.MADV_NOHUGEPAGE) // one fault per page, not per huge page
	touch := func() int64 {
		var before, after unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &before)
		for i := 0; i < size; i += os.Getpagesize() {
			mem[i]++
		}
		unix.Getrusage(unix.RUSAGE_SELF, &after)
		return after.Minflt - before.Minflt
	}
	touch() // every page present and writable
	start := func(prestarted bool) *proc {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		how := startOnDemand
		if prestarted {
			how = startPrestarted
		}
		p, err := startProc(l, sup.ns, false, nil, how)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.cmd.Args[1] == child.EntryRelay; got != prestarted {
			t.Fatalf("prestarted %v: started through the relay: %v (%q)", prestarted, got, p.cmd.Args)
		}
		return p
	}
	direct := start(false)
	faultsDirect := touch()
	direct.discard()
	relayed := start(true)
	faultsRelayed := touch()
	relayed.discard()
	t.Logf("faults on %d pages after the clone: direct %d, through the relay %d", pages, faultsDirect, faultsRelayed)
	if faultsDirect < pages/2 {
		t.Fatalf("a direct clone cost only %d faults on %d pages: this test no longer sees what it checks", faultsDirect, pages)
	}
	if faultsRelayed > pages/10 {
		t.Fatalf("through the relay: %d faults on %d pages", faultsRelayed, pages)
	}
}

// TestRelayDeathKillsTheChild: killing the relay (what the executor does
// to end a prestarted child) takes the child it cloned with it.
func TestRelayDeathKillsTheChild(t *testing.T) {
	requireSandbox(t)
	Prestart()
	defer StopPrestart()
	p := waitWarm()
	if p == nil || p.cmd.Args[1] != child.EntryRelay {
		t.Fatal("no prestarted child through the relay")
	}
	relay := p.cmd.Process.Pid
	var kid int
	for deadline := time.Now().Add(10 * time.Second); kid == 0; {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(relay) + "/task/" + strconv.Itoa(relay) + "/children")
		if f := strings.Fields(string(b)); len(f) == 1 {
			kid, _ = strconv.Atoi(f[0])
		}
		if time.Now().After(deadline) {
			t.Fatal("the relay cloned no child")
		}
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(relay, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); ; {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(kid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break // gone, or dead and waiting to be reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d outlived its relay", kid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRelayRefuses: the relay clones nothing without the go-ahead, and
// refuses arguments it does not know.
func TestRelayRefuses(t *testing.T) {
	helper := filepath.Join(testBin, HelperName)
	for _, tc := range []struct {
		name string
		args []string
		goOK bool
		want string
	}{
		{name: "no namespaces argument", args: nil, goOK: true, want: "bad arguments"},
		{name: "unknown namespace bit", args: []string{strconv.Itoa(child.NSUTS << 1), child.EntrySandbox}, goOK: true, want: "bad arguments"},
		{name: "not the sandbox after it", args: []string{"1", child.EntryTool}, goOK: true, want: "bad arguments"},
		{name: "no go-ahead", args: []string{"0", child.EntrySandbox}, goOK: false, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfgR, cfgW, _ := os.Pipe()
			stR, stW, _ := os.Pipe()
			goR, goW, _ := os.Pipe()
			defer cfgW.Close()
			defer stR.Close()
			cmd := exec.Command(helper, append([]string{child.EntryRelay}, tc.args...)...)
			cmd.ExtraFiles = []*os.File{cfgR, stW, goR}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cfgR.Close()
			stW.Close()
			goR.Close()
			goW.Close() // no go-ahead
			err := cmd.Wait()
			if cmd.ProcessState.ExitCode() != child.CodeSetup {
				t.Fatalf("exit %v, want %d", err, child.CodeSetup)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q, want %q", stderr.String(), tc.want)
			}
			b := make([]byte, 1)
			if n, _ := stR.Read(b); n != 0 {
				t.Fatal("the relay reported a start it should not have tried")
			}
		})
	}
}

// TestEnterChild: only the two child entry points are taken; anything
// else is left to the program.
func TestEnterChild(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "no arguments", args: nil},
		{name: "program only", args: []string{"claw"}},
		{name: "a command", args: []string{"claw", "version"}},
		{name: "the relay (only the helper has it)", args: []string{"claw", child.EntryRelay, "0", ChildEntry}},
		{name: "entry as a later argument", args: []string{"claw", "run", ChildEntry}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, ok := EnterChild(tc.args); ok {
				t.Fatalf("EnterChild(%q) = %d, true", tc.args, code)
			}
		})
	}
}
