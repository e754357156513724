package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// echoDir writes the seed's echo-plugin into a temporary directory.
func echoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(echoManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo-plugin"), []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestStorePins(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "plugins")}
	if _, err := s.Install(echoDir(t)); err != nil {
		t.Fatal(err)
	}
	c := s.Resolve("echo-plugin", "echo", nil)
	if c.Status != StatusOK || c.Argv[0] != filepath.Join(s.Dir, "echo-plugin", "echo-plugin") {
		t.Fatalf("resolved %+v", c)
	}
	if again := s.Resolve("echo-plugin", "echo", nil); c.Digest == "" || again.Digest != c.Digest {
		t.Fatalf("digests %q and %q of the same files", c.Digest, again.Digest)
	}
	if c := s.Resolve("echo-plugin", "nope", nil); c.Status != StatusUnknownTool {
		t.Fatalf("unknown tool resolved %+v", c)
	}
	if c := s.Resolve("nope", "echo", nil); c.Status != StatusNotInstalled {
		t.Fatalf("unknown plugin resolved %+v", c)
	}
	inst := filepath.Join(s.Dir, "echo-plugin")
	for _, tc := range []struct {
		name    string
		change  func() error
		changed string
	}{
		{"content", func() error {
			return os.WriteFile(filepath.Join(inst, "echo-plugin"), []byte("#!/bin/sh\ncat /etc/passwd\n"), 0o755)
		}, "echo-plugin"},
		{"mode", func() error { return os.Chmod(filepath.Join(inst, "echo-plugin"), 0o644) }, "echo-plugin"},
		{"added", func() error { return os.WriteFile(filepath.Join(inst, "lib.sh"), nil, 0o644) }, "lib.sh"},
		{"removed", func() error { return os.Remove(filepath.Join(inst, ManifestFile)) }, ManifestFile},
		{"manifest", func() error {
			return os.WriteFile(filepath.Join(inst, ManifestFile), []byte(strings.Replace(echoManifest, "0.1.0", "0.2.0", 1)), 0o644)
		}, ManifestFile},
	} {
		if _, err := s.Install(echoDir(t)); err != nil {
			t.Fatal(err)
		}
		if err := tc.change(); err != nil {
			t.Fatal(err)
		}
		v := s.Verify("echo-plugin")
		if v.Status != StatusChanged || strings.Join(v.Changed, ",") != tc.changed {
			t.Errorf("%s: verify says %s %v, want changed %s", tc.name, v.Status, v.Changed, tc.changed)
		}
		if c := s.Resolve("echo-plugin", "echo", nil); c.Status != StatusChanged || len(c.Argv) != 0 {
			t.Errorf("%s: a changed plugin resolved to %+v", tc.name, c)
		}
	}
	if _, err := s.Install(echoDir(t)); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].Status != StatusOK {
		t.Fatalf("list after reinstall: %+v %v", list, err)
	}
	if err := s.Remove("echo-plugin"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("echo-plugin"); err == nil {
		t.Fatal("removed a plugin twice")
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Fatalf("list after remove: %+v", list)
	}
}

// TestResolveValidatesArgs: arguments are checked against the tool's
// schema, numbers as JSON has them whatever Go type they arrive in.
func TestResolveValidatesArgs(t *testing.T) {
	src := echoDir(t)
	schema := `schema = { type = "object", properties = { n = { type = "integer", maximum = 3 } }, required = ["n"], additionalProperties = false }`
	m := strings.Replace(echoManifest, `schema = { type = "object" }`, schema, 1)
	if err := os.WriteFile(filepath.Join(src, ManifestFile), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Store{Dir: filepath.Join(t.TempDir(), "plugins")}
	if _, err := s.Install(src); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"n": 2.0}, StatusOK},
		{map[string]any{"n": int64(3)}, StatusOK},
		{map[string]any{"n": 4.0}, StatusInvalidArgs},
		{map[string]any{"n": "2"}, StatusInvalidArgs},
		{map[string]any{"n": 1.0, "x": true}, StatusInvalidArgs},
		{nil, StatusInvalidArgs},
	} {
		if c := s.Resolve("echo-plugin", "echo", tc.args); c.Status != tc.want {
			t.Errorf("args %v: %s (%s), want %s", tc.args, c.Status, c.Detail, tc.want)
		}
	}
}

func TestInstallRefuses(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "plugins")}
	link := echoDir(t)
	if err := os.Symlink("/etc/shadow", filepath.Join(link, "shadow")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Install(link); err == nil || !strings.Contains(err.Error(), "only regular files") {
		t.Fatalf("installed a symlink: %v", err)
	}
	noexec := echoDir(t)
	if err := os.Chmod(filepath.Join(noexec, "echo-plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Install(noexec); err == nil || !strings.Contains(err.Error(), "not an executable") {
		t.Fatalf("installed a plugin whose command is not executable: %v", err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Fatalf("a refused install left %+v", list)
	}
}

// BenchmarkResolve is the pin check every plugin call pays: hashing the
// installed files and decoding the manifest again. "seed" is the
// echo-plugin (two small files); "1MiB" adds a 1 MiB file.
//
//	go test -run '^$' -bench Resolve ./internal/plugin
func BenchmarkResolve(b *testing.B) {
	for _, extra := range []int{0, 1 << 20} {
		name := "seed"
		if extra > 0 {
			name = "1MiB"
		}
		b.Run(name, func(b *testing.B) {
			src := b.TempDir()
			os.WriteFile(filepath.Join(src, ManifestFile), []byte(echoManifest), 0o644)
			os.WriteFile(filepath.Join(src, "echo-plugin"), []byte("#!/bin/sh\nexec cat\n"), 0o755)
			if extra > 0 {
				os.WriteFile(filepath.Join(src, "data.bin"), make([]byte, extra), 0o644)
			}
			s := Store{Dir: filepath.Join(b.TempDir(), "plugins")}
			if _, err := s.Install(src); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c := s.Resolve("echo-plugin", "echo", nil); c.Status != StatusOK {
					b.Fatal(c.Detail)
				}
			}
		})
	}
}
