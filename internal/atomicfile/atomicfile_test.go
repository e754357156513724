package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// leftovers lists the files in dir other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		keep := false
		for _, w := range want {
			keep = keep || e.Name() == w
		}
		if !keep {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name string
		old  []byte // nil: no file before
		perm fs.FileMode
	}{
		{name: "new file 0600", perm: 0o600},
		{name: "new file 0644", perm: 0o644},
		{name: "replaces a file", old: []byte("old content that is longer"), perm: 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if tt.old != nil {
				if err := os.WriteFile(path, tt.old, 0o666); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, []byte("new"), tt.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Fatalf("content %q, %v; want %q", got, err, "new")
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.perm {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tt.perm)
			}
			if l := leftovers(t, dir, "f"); len(l) != 0 {
				t.Errorf("temporary files left: %q", l)
			}
		})
	}
}

func TestWriteFileCheckRejects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := errors.New("not a valid config")
	var seen string
	err := WriteFileCheck(path, []byte("new"), 0o600, func(tmp string) error {
		b, err := os.ReadFile(tmp)
		if err != nil {
			return err
		}
		seen = string(b)
		return bad
	})
	var ce *CheckError
	if !errors.As(err, &ce) || !errors.Is(err, bad) {
		t.Fatalf("err = %v, want a CheckError wrapping %v", err, bad)
	}
	if seen != "new" {
		t.Errorf("check saw %q, want the new content", seen)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("file is %q after a failed check, want the old content", got)
	}
	if l := leftovers(t, dir, "config.toml"); len(l) != 0 {
		t.Errorf("temporary files left: %q", l)
	}
}

func TestWriteFileCheckAccepts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFileCheck(path, []byte("new"), 0o600, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "new" {
		t.Errorf("file is %q, want %q", got, "new")
	}
}

func TestWriteFileFailsWithoutTrace(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory: the rename fails, and nothing is left.
	target := filepath.Join(dir, "sub")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("new"), 0o600); err == nil {
		t.Fatal("replacing a non-empty directory succeeded")
	}
	if l := leftovers(t, dir, "sub"); len(l) != 0 {
		t.Errorf("temporary files left: %q", l)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}
