package executor

import (
	"os"
	"path/filepath"
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
