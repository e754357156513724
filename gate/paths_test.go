package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	ws := filepath.Join(root, "ws")
	home := filepath.Join(root, "home")
	secret := filepath.Join(root, "secret")
	for _, d := range []string{ws, home, secret, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustLink := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(secret, filepath.Join(ws, "out"))      // absolute link out of the workspace
	mustLink("../secret", filepath.Join(ws, "rel")) // relative link out
	mustLink("sub", filepath.Join(ws, "in"))        // link that stays inside
	mustLink(filepath.Join(ws, "loop"), filepath.Join(ws, "loop"))
	mustLink(filepath.Join(secret, "x"), filepath.Join(ws, "dangling"))

	r := &PathResolver{Home: home, Cwd: ws}
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{name: "relative", in: "a/b", want: ws + "/a/b"},
		{name: "dot", in: ".", want: ws},
		{name: "dotdot leaves", in: "../x", want: root + "/x"},
		{name: "absolute", in: "/etc/passwd", want: "/etc/passwd"},
		{name: "tilde", in: "~/.ssh/id_rsa", want: home + "/.ssh/id_rsa"},
		{name: "tilde alone", in: "~", want: home},
		{name: "tilde root", in: "~root/.ssh", want: "/root/.ssh"},
		{name: "tilde other user", in: "~bob/x", wantErr: "unsupported ~user"},
		{name: "HOME var", in: "$HOME/.aws", want: home + "/.aws"},
		{name: "HOME braces", in: "${HOME}/.aws", want: home + "/.aws"},
		{name: "unknown var", in: "$SECRET_DIR/x", wantErr: "cannot be resolved statically"},
		{name: "symlink out absolute", in: "out/key", want: secret + "/key"},
		{name: "symlink out relative", in: "rel/key", want: secret + "/key"},
		{name: "symlink inside", in: "in/f", want: ws + "/sub/f"},
		{name: "symlink then dotdot is kernel-style", in: "out/../etc", want: root + "/etc"},
		{name: "dangling symlink resolves target", in: "dangling", want: secret + "/x"},
		{name: "symlink loop", in: "loop/x", wantErr: "too many symlinks"},
		{name: "nul byte", in: "a\x00b", wantErr: "NUL"},
		{name: "empty", in: "", wantErr: "empty path"},
		{name: "too long", in: strings.Repeat("a/", 3000), wantErr: "longer than"},
		{name: "proc self root", in: "/proc/self/root/etc/shadow", want: "/etc/shadow"},
		{name: "proc pid root", in: "/proc/1/root/etc/shadow", want: "/etc/shadow"},
		{name: "proc thread-self root", in: "/proc/thread-self/root/root", want: "/root"},
		{name: "proc self cwd", in: "/proc/self/cwd/x", want: ws + "/x"},
		{name: "proc other cwd", in: "/proc/1/cwd/x", wantErr: "another process"},
		{name: "proc self environ", in: "/proc/self/environ", want: "/proc/self/environ"},
		{name: "proc pid environ", in: "/proc/1/environ", want: "/proc/1/environ"},
		{name: "dev fd stdout", in: "/dev/fd/1", want: "/dev/stdout"},
		{name: "dev fd other", in: "/dev/fd/5", wantErr: "inherited file descriptor"},
		{name: "proc self fd 2", in: "/proc/self/fd/2", want: "/dev/stderr"},
		{name: "proc self fd 9", in: "/proc/self/fd/9", wantErr: "inherited file descriptor"},
		{name: "proc other fd", in: "/proc/1/fd/0", wantErr: "another process"},
		{name: "proc self exe", in: "/proc/self/exe", wantErr: "process image"},
		{name: "root dotdot", in: "/../../etc", want: "/etc"},
		{name: "double slashes", in: "//etc//passwd", want: "/etc/passwd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Canonical(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Canonical(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"a/b", "~/x", "$HOME/x", "/proc/self/root/etc", "/dev/fd/3", "../../..", "a\x00", "/proc/1/cwd", "~root"} {
		f.Add(s)
	}
	r := &PathResolver{Home: "/home/u", Cwd: "/home/u/ws"}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := r.Canonical(p)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, "/") {
			t.Fatalf("Canonical(%q) = %q: not absolute", p, got)
		}
		if strings.Contains(got, "/../") || strings.HasSuffix(got, "/..") || strings.Contains(got, "//") {
			t.Fatalf("Canonical(%q) = %q: not clean", p, got)
		}
		if strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("Canonical(%q) kept a NUL", p)
		}
	})
}
