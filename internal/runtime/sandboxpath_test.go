package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clawsec/claw/internal/config"
)

// TestSandboxPath: the sandbox's PATH keeps the caller's toolchains in
// order, drops what is relative, missing or forbidden, puts what actions
// can write after the system directories, and grants read for each
// toolchain, its root only when the root holds nothing forbidden.
func TestSandboxPath(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	home, ws := dir("home"), dir("home/ws")
	goBin := dir("opt/go/bin")
	cargoBin := dir("home/.cargo/bin")
	homeBin := dir("home/bin")
	venvBin := dir("home/ws/.venv/bin")
	sshBin := dir("home/.ssh/bin")
	tools := dir("opt/tools")
	link := filepath.Join(root, "golink")
	if err := os.Symlink(goBin, link); err != nil {
		t.Fatal(err)
	}
	forbidden, err := compileForbidden([]string{home + "/.ssh", home + "/.cargo/credentials.toml", "**/docker.sock"})
	if err != nil {
		t.Fatal(err)
	}
	envPath := filepath.Join(venvBin) + ":" + link + ":bin::" + sshBin + ":" + filepath.Join(root, "missing") + ":" +
		cargoBin + ":" + goBin + ":" + homeBin + ":" + tools
	dirs, read := sandboxPath(nil, envPath, ws, home, forbidden)

	// the caller's order, each once, canonical; the system directories
	// after them; the workspace's venv last
	want := []string{goBin, cargoBin, homeBin, tools}
	if got := dirs[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("PATH starts %q, want %q", got, want)
	}
	if !slices.Contains(dirs, "/usr/bin") {
		t.Errorf("PATH %q lacks /usr/bin", dirs)
	}
	if dirs[len(dirs)-1] != venvBin {
		t.Errorf("PATH %q: the workspace's %s is not last", dirs, venvBin)
	}
	if slices.Contains(dirs, sshBin) || slices.ContainsFunc(dirs, func(d string) bool { return !filepath.IsAbs(d) }) {
		t.Errorf("PATH %q has a forbidden or relative directory", dirs)
	}
	// go's root is readable (GOROOT); .cargo holds credentials and home
	// is the user's home: only their bin; nothing in the workspace or
	// the system directories
	wantRead := []string{filepath.Dir(goBin), cargoBin, homeBin, tools}
	if !slices.Equal(read, wantRead) {
		t.Errorf("read grants %q, want %q", read, wantRead)
	}

	// [sandbox] path replaces the caller's PATH
	dirs, read = sandboxPath([]string{tools}, envPath, ws, home, forbidden)
	if dirs[0] != tools || slices.Contains(dirs, goBin) || !slices.Equal(read, []string{tools}) {
		t.Errorf("with [sandbox] path: PATH %q, read %q", dirs, read)
	}
}

// BenchmarkSandboxPath measures what claw exec and the agent add per run
// to build the sandbox PATH (compiling the forbidden paths, resolving each
// PATH entry), beside the anchor they already pay: compiling the gate.
func BenchmarkSandboxPath(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	cfg := config.Default(filepath.Join(home, ".claw"))
	if err := cfg.Expand(os.Getenv); err != nil {
		b.Fatal(err)
	}
	e := &Env{Home: filepath.Join(home, ".claw"), Config: cfg, UserDir: home}
	ctx := context.Background()
	b.Run("gate compile (anchor)", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewEngine(ctx, e, Policy(cfg)); err != nil {
				b.Fatal(err)
			}
		}
	})
	eng, err := NewEngine(ctx, e, Policy(cfg))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("forbidden paths and PATH", func(b *testing.B) {
		for b.Loop() {
			f, err := newForbiddenPaths(eng)
			if err != nil {
				b.Fatal(err)
			}
			sandboxPath(nil, os.Getenv("PATH"), filepath.Join(home, "ws"), home, f)
		}
	})
}
