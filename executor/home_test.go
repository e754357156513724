package executor

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSweepHomes: a home no one holds (its claw was killed) is removed
// with what is in it; a home in use, a half-made home that is still
// young, and the lock of the one removed are left alone.
func TestSweepHomes(t *testing.T) {
	parent, err := homeParent(t.TempDir(), os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	inUse, err := newHomeIn(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer inUse.remove()
	if strings.HasPrefix(filepath.Base(inUse.dir), homePrefix) {
		t.Fatalf("home kept its half-made name: %s", inUse.dir)
	}
	// A dead claw's home: made and locked, then the lock let go (as the
	// kernel does when the process dies), with a file and a subdirectory
	// the command left.
	dead, err := newHomeIn(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dead.dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead.dir, "sub", "out.txt"), []byte("result"), 0o600); err != nil {
		t.Fatal(err)
	}
	unix.Close(dead.lock)
	young := filepath.Join(parent, homePrefix+"young")
	old := filepath.Join(parent, homePrefix+"old")
	for _, d := range []string{young, old} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * staleNewHome)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}

	got := sweepHomes(parent)
	slices.Sort(got)
	want := []string{dead.dir, old}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("swept %v, want %v", got, want)
	}
	for _, d := range []string{inUse.dir, young} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	inUse.remove()
	inUse.remove() // twice is harmless
	if _, err := os.Stat(inUse.dir); !os.IsNotExist(err) {
		t.Fatalf("removed home still there: %v", err)
	}
}

// TestHomeParentRefusesWhatIsNotOurs: a symlink, a file, a directory
// others may write, or one owned by another user is not used.
func TestHomeParentRefusesWhatIsNotOurs(t *testing.T) {
	uid := os.Geteuid()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, p string)
		uid   int
	}{
		{name: "symlink", uid: uid, plant: func(t *testing.T, p string) {
			if err := os.Symlink(t.TempDir(), p); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file", uid: uid, plant: func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "world-writable", uid: uid, plant: func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "another owner", uid: uid + 1, plant: func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o711); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			p := filepath.Join(tmp, "claw-sandbox."+strconv.Itoa(tc.uid))
			tc.plant(t, p)
			if got, err := homeParent(tmp, tc.uid); err == nil {
				t.Fatalf("homeParent accepted %s (%s)", got, tc.name)
			}
		})
	}
	tmp := t.TempDir()
	p, err := homeParent(tmp, uid)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o711 {
		t.Fatalf("made %s: %v %v", p, fi.Mode(), err)
	}
	if again, err := homeParent(tmp, uid); err != nil || again != p {
		t.Fatalf("second call: %s %v", again, err)
	}
}

// TestRemoveTreeModes: a home is removed whatever modes the action left
// in it (directories of mode 000 and 0500, nested, and a file of mode 000
// in one), and a symlink in it to a directory outside, itself of mode
// 000, is removed without that directory being touched. As root the test
// gives up, on its own thread, the capabilities that read and write past
// a mode (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so that it removes as an
// unprivileged claw does. It fails with os.RemoveAll alone.
func TestRemoveTreeModes(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	outside := filepath.Join(t.TempDir(), "outside")
	for _, d := range []string{filepath.Join(home, "a", "b", "c"), filepath.Join(home, "ro", "x"), outside} {
		must(t, os.MkdirAll(d, 0o700))
	}
	must(t, os.WriteFile(filepath.Join(home, "a", "b", "c", "f"), []byte("x"), 0o000))
	must(t, os.WriteFile(filepath.Join(home, "ro", "x", "f"), []byte("x"), 0o644))
	must(t, os.Symlink(outside, filepath.Join(home, "a", "link")))
	for _, d := range []string{filepath.Join(home, "a", "b", "c"), filepath.Join(home, "a", "b"), filepath.Join(home, "a"), outside} {
		must(t, os.Chmod(d, 0o000))
	}
	must(t, os.Chmod(filepath.Join(home, "ro"), 0o500))
	t.Cleanup(func() { os.Chmod(outside, 0o700) })

	err := withoutDACOverride(t, func() error { return removeTree(home) })
	if err != nil {
		t.Errorf("removeTree: %v", err)
	}
	if _, err := os.Lstat(home); !os.IsNotExist(err) {
		t.Errorf("the home is still there: %v", err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0 {
		t.Errorf("the directory outside was changed: %v %v", fi.Mode(), err)
	}
}

// withoutDACOverride runs f on a thread without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH in its effective set (capabilities are per thread),
// then gives them back.
func withoutDACOverride(t *testing.T, f func() error) error {
	t.Helper()
	if os.Geteuid() != 0 {
		return f()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var saved [2]unix.CapUserData
	must(t, unix.Capget(&hdr, &saved[0]))
	dropped := saved
	dropped[0].Effective &^= 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH
	must(t, unix.Capset(&hdr, &dropped[0]))
	defer func() { must(t, unix.Capset(&hdr, &saved[0])) }()
	return f()
}

// TestHomeRemovedWhateverModes: the private home (also TMPDIR) is gone
// after the action, although the action left directories of mode 000 in
// it, started on demand or prestarted. As root the removal reads past the
// modes anyway; run unprivileged it fails without removeTree.
func TestHomeRemovedWhateverModes(t *testing.T) {
	requireSandbox(t)
	inEveryMode(t, func(t *testing.T) {
		res := run(t, Spec{Argv: bash(`mkdir -p "$HOME/a/b" "$TMPDIR/t" && touch "$HOME/a/b/f" && chmod 000 "$HOME/a/b" "$HOME/a" "$TMPDIR/t" && echo "$HOME"`)})
		home := strings.TrimSpace(string(res.Stdout))
		if res.ExitCode != 0 || !filepath.IsAbs(home) {
			t.Fatalf("the action failed: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
		}
		waitHomes() // with Prestart on, removed after Run returns
		if _, err := os.Lstat(home); !os.IsNotExist(err) {
			t.Errorf("the home %s is still there: %v", home, err)
		}
	})
}
