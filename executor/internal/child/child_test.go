package child

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestCheckThreadsRefusesUnconfined: the check a tool run in the child
// depends on fails in a process that is not confined (this test's).
func TestCheckThreadsRefusesUnconfined(t *testing.T) {
	if err := checkThreads(); err == nil {
		t.Fatal("checkThreads passed in an unconfined process")
	}
}

// TestUnjoinableCgroupFailsSetup: a job cgroup the child cannot join (not
// a cgroup directory, or gone) fails setup at its first step, before the
// child has changed anything, and no other step runs.
func TestUnjoinableCgroupFailsSetup(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "claw-1-1")
	for _, dir := range []string{t.TempDir(), gone} {
		c := &Config{Mode: ModeExec, Argv: []string{"/bin/true"}, Cgroups: []string{dir}, Dir: "/nonexistent", UID: -1, GID: -1}
		_, err := setup(c)
		var se *stepError
		if !errors.As(err, &se) || se.stage != "cgroup" || se.code != CodeSetup {
			t.Errorf("joining %s: %v, want a failed cgroup step", dir, err)
		}
		if c.Path != "" {
			t.Errorf("joining %s failed, yet setup went on to look the command up (%s)", dir, c.Path)
		}
	}
}

// TestWarmJSONDecodes: what WarmJSON decodes is accepted whole, so the
// warm-up goes through the decoders the worker's request and tool
// arguments take, not just their first error.
func TestWarmJSONDecodes(t *testing.T) {
	if _, err := ParseRequest(warmRequest); err != nil {
		t.Errorf("warm request: %v", err)
	}
	for _, a := range []any{&FileReadArgs{}, &FileWriteArgs{}, &EditFileArgs{}, &FileListArgs{}} {
		if err := StrictJSON(warmArgs, a); err != nil {
			t.Errorf("warm arguments for %T: %v", a, err)
		}
	}
}
