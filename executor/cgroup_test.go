package executor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestJobOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{name: "claw-123-4", pid: 123, ok: true},
		{name: "claw-1-18446744073709551615", pid: 1, ok: true},
		{name: "claw-123", ok: false},
		{name: "claw-0-1", ok: false},
		{name: "claw--5-1", ok: false},
		{name: "claw-12x-1", ok: false},
		{name: "claw-12-x", ok: false},
		{name: "clawd-12-1", ok: false},
		{name: "user.slice", ok: false},
	} {
		pid, ok := jobOwner(tc.name)
		if pid != tc.pid || ok != tc.ok {
			t.Errorf("jobOwner(%q) = %d, %v; want %d, %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}

// TestSweepStaleCgroups plants the empty job group a SIGKILLed claw
// would leave, a group of a dead PID that still holds a process, and a
// group of this (running) process: the sweep removes only the first, and
// kills nothing.
func TestSweepStaleCgroups(t *testing.T) {
	k := jobCgroups()
	if k.version == "" {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" && os.Geteuid() == 0 {
			t.Fatal("CLAW_REQUIRE_SANDBOX is set and root has no job cgroups")
		}
		t.Skip("no cgroup claw may create job groups in")
	}
	// A PID that has just exited stands for the dead claw.
	gone := exec.Command("/bin/true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := gone.Process.Pid
	stale := filepath.Join(k.bases[0], fmt.Sprintf("claw-%d-1", deadPID))
	busy := filepath.Join(k.bases[0], fmt.Sprintf("claw-%d-2", deadPID))
	live := filepath.Join(k.bases[0], fmt.Sprintf("claw-%d-%d", os.Getpid(), 1<<40))
	for _, d := range []string{stale, busy, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sleeper := exec.Command("/bin/sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sleeper.Wait() }()
	busyGroup := &jobCgroup{version: k.version, dirs: []string{busy}}
	t.Cleanup(func() {
		sleeper.Process.Kill()
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
		}
		busyGroup.removeWhenEmpty()
		os.Remove(stale)
		os.Remove(live)
	})
	if err := busyGroup.add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}

	got := sweepStaleCgroups(k)
	// another claw running at the same time (the other test packages) may
	// have swept the stale group first: it is gone either way
	_, statErr := os.Stat(stale)
	sweptElsewhere := !slices.Contains(got, stale) && os.IsNotExist(statErr)
	if !slices.Contains(got, stale) && !sweptElsewhere || slices.Contains(got, busy) || slices.Contains(got, live) {
		t.Fatalf("the sweep removed %v, want %s and neither %s nor %s", got, stale, busy, live)
	}
	for _, d := range []string{busy, live} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s is gone: %v", d, err)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", stale, err)
	}
	select {
	case err := <-waited:
		t.Fatalf("the process in a group of a dead PID ended (%v); the sweep must not kill", err)
	default:
	}
}

// TestDescribeCgroups: claw doctor claims, for each cgroup version, only
// the limits claw writes there: pids.max and memory.max with v2, pids.max
// alone with v1 (claw makes no v1 memory group).
func TestDescribeCgroups(t *testing.T) {
	for _, tc := range []struct {
		version string
		memory  bool
	}{{"v2", true}, {"v1", false}} {
		s := Support{Cgroup: tc.version}
		s.describe()
		var line string
		for _, e := range s.Enforced {
			if strings.HasPrefix(e, "cgroup "+tc.version+":") {
				line = e
			}
		}
		claims := strings.Contains(line, "memory.max") || strings.Contains(line, "memory limit")
		if !strings.Contains(line, "pids.max") || claims != tc.memory {
			t.Errorf("cgroup %s: %q, want pids.max and a memory limit %v", tc.version, line, tc.memory)
		}
	}
}
