package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// selfExec makes the executor re-execute this test binary through
// ChildEntry for the rest of the test, as claw re-executes itself when no
// helper is installed next to it: like claw, this binary links cgo and
// libseccomp, so its runtime starts threads of its own before the child's
// per-thread confinement steps run.
func selfExec(t *testing.T) {
	t.Helper()
	SetHelper("")
	t.Cleanup(func() { SetHelper(filepath.Join(testBin, HelperName)) })
	if l, err := findHelper(); err != nil || !l.self {
		t.Fatalf("the child would not be this program: %+v, %v", l, err)
	}
}

// TestEscapeSelfExec is the escape suite in the self re-exec fallback,
// on demand and prestarted: every case there fails the same way here if
// the child, as a cgo program, confined only some of its threads, leaked
// a descriptor or carried the parent's environment into the command.
func TestEscapeSelfExec(t *testing.T) {
	requireSandbox(t)
	selfExec(t)
	inEveryMode(t, escapeSuite)
}

// TestSelfExecToolThreads: in the self re-exec fallback a file tool runs
// as a second program (this cgo binary again, through ToolEntry) started
// by the sandbox's init. While it is blocked opening a FIFO, every one of
// its threads, read from /proc outside the sandbox, has the seccomp
// filter, no_new_privs and no capability. It fails if the tool ran in init
// itself (no such process is found: init's other threads are not
// confined in a cgo program), if init started it from a thread that had
// not confined itself, or if a thread the tool's runtime started later
// escaped what it inherited.
func TestSelfExecToolThreads(t *testing.T) {
	requireSandbox(t)
	selfExec(t)
	ws := t.TempDir()
	fifo := filepath.Join(ws, "fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	args, _ := json.Marshal(map[string]any{"path": fifo})
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(context.Background(), Spec{Tool: ToolFileRead, Args: args, Read: []string{ws}, Timeout: 20 * time.Second})
		done <- outcome{res, err}
	}()
	var n int
	pid, err := toolProcess(done)
	if err == nil {
		err = blockedOnFIFO(pid, done)
	}
	if err == nil {
		n, err = threadsConfined(pid)
	}
	if err == nil && n < 2 {
		err = fmt.Errorf("the tool's process has %d thread: nothing to compare", n)
	}
	// let the tool go on (it then refuses the FIFO) and end
	if werr := openWriter(fifo); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the tool's process had %d threads, all confined", n)
	o := <-done
	if o.err != nil || o.res.Tool == nil || !strings.Contains(o.res.Tool.Error, "not a regular file") || o.res.Sandbox.ToolInProcess {
		t.Errorf("the tool did not run to its end as a second program: %v, %+v, in process %v", o.err, o.res.Tool, o.res.Sandbox.ToolInProcess)
	}
}

// outcome is what Run returned.
type outcome struct {
	res Result
	err error
}

// toolProcess finds the host PID of the file_read tool started for this
// test: this program run through ToolEntry, a grandchild of the test
// process (the sandbox's init is between them).
func toolProcess(done <-chan outcome) (int, error) {
	want := strings.Join([]string{os.Args[0], ToolEntry, string(ToolFileRead)}, "\x00") + "\x00"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case o := <-done:
			return 0, fmt.Errorf("the action ended before its tool was seen: %+v", o)
		default:
		}
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, c := range cmdlines {
			if b, err := os.ReadFile(c); err != nil || string(b) != want {
				continue
			}
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(c)))
			if parent(parent(pid)) == os.Getpid() {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process %q in the sandbox", want)
}

// blockedOnFIFO waits until a thread of pid sleeps in the kernel waiting
// for the FIFO's other end: the tool is then inside its open, with every
// thread it will have before reading.
func blockedOnFIFO(pid int, done <-chan outcome) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case o := <-done:
			return fmt.Errorf("the action ended before its tool opened the FIFO: %+v", o)
		default:
		}
		chans, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/wchan")
		for _, c := range chans {
			if b, err := os.ReadFile(c); err == nil && string(b) == "wait_for_partner" {
				return nil
			}
		}
	}
	return fmt.Errorf("the tool %d never blocked opening the FIFO", pid)
}

// openWriter opens and closes the FIFO's writing end once its reader is
// waiting, which lets the reader's open return. A non-blocking open fails
// with ENXIO until a reader is there, so it is retried.
func openWriter(fifo string) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		w, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			return unix.Close(w)
		}
		if err != unix.ENXIO {
			return fmt.Errorf("open the FIFO for writing: %w", err)
		}
	}
	return fmt.Errorf("the FIFO %s never had a reader", fifo)
}

func parent(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}

// threadsConfined checks every thread of pid and returns how many it has.
func threadsConfined(pid int) (int, error) {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/status")
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("threads of %d: %v", pid, err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			return 0, err
		}
		lines := strings.Split(string(b), "\n")
		for _, want := range []string{"Seccomp:\t2", "NoNewPrivs:\t1", "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000"} {
			if !slices.Contains(lines, want) {
				return 0, fmt.Errorf("%s: no %q:\n%s", task, want, b)
			}
		}
	}
	return len(tasks), nil
}
