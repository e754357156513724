package executor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// TestSweepStaleCgroups plants the job group a SIGKILLed claw would
// leave, with a process still in it, next to a group of this (running)
// process: the sweep kills the process and removes the dead owner's
// group, and leaves the live one alone.
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
	live := filepath.Join(k.bases[0], fmt.Sprintf("claw-%d-%d", os.Getpid(), 1<<40))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
	}
	sleeper := exec.Command("/bin/sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- sleeper.Wait() }()
	t.Cleanup(func() { sleeper.Process.Kill() })
	if err := (&jobCgroup{version: k.version, dirs: []string{stale}}).add(sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}

	got := sweepStaleCgroups(k)
	found := false
	for _, d := range got {
		if d == live {
			t.Errorf("the sweep took the group of a running process: %s", d)
		}
		found = found || d == stale
	}
	if !found {
		t.Fatalf("the sweep did not find %s (found %v)", stale, got)
	}
	select {
	case err := <-waited:
		if err == nil {
			t.Fatal("the leftover process exited on its own; it was meant to be killed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the leftover process is still running 5 s after the sweep")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(stale); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists 5 s after the sweep", stale)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("the live group is gone: %v", err)
	}
}
