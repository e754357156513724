package gate

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		{name: "dotdot out of a missing dir meets a symlink", in: "new/../out/key", want: secret + "/key"},
		{name: "dotdot back into proc self", in: "/proc/self/fd/../root/etc/shadow", want: "/etc/shadow"},
		{name: "dotdot back into proc pid", in: "/proc/1/fd/../cwd/x", wantErr: "another process"},
		{name: "missing dir then proc", in: "/missing/../proc/self/root/etc", want: "/etc"},
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

// fuzzTree is the file system FuzzCanonical resolves paths in: every
// directory and file, and every symlink with its target.
var fuzzTree = struct {
	dirs, files map[string]bool
	links       map[string]string
}{
	dirs: setOf("/", "/home", "/home/u", "/home/u/ws", "/home/u/ws/sub", "/home/u/ws/sub/deep",
		"/etc", "/secret", "/usr", "/usr/bin", "/proc", "/dev", "/root", "/tmp"),
	files: setOf("/etc/passwd", "/home/u/ws/f", "/home/u/ws/sub/g", "/secret/key", "/dev/null"),
	links: map[string]string{
		"/bin":                  "usr/bin",
		"/dev/fd":               "/proc/self/fd",
		"/dev/stdin":            "/proc/self/fd/0",
		"/dev/stdout":           "/proc/self/fd/1",
		"/dev/stderr":           "/proc/self/fd/2",
		"/home/u/ws/out":        "/secret",
		"/home/u/ws/rel":        "../../../secret",
		"/home/u/ws/in":         "sub",
		"/home/u/ws/up":         "sub/deep/../..",
		"/home/u/ws/chain":      "in/deep",
		"/home/u/ws/loop":       "loop",
		"/home/u/ws/ping":       "pong",
		"/home/u/ws/pong":       "ping",
		"/home/u/ws/dangling":   "/secret/missing/x",
		"/home/u/ws/root":       "/proc/self/root/etc",
		"/home/u/ws/here":       "/proc/self/cwd",
		"/home/u/ws/them":       "/proc/1/cwd",
		"/home/u/ws/fd5":        "/dev/fd/5",
		"/home/u/ws/sub/parent": "..",
		"/tmp/proc":             "/proc",
	},
}

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

type fuzzInfo struct{ mode fs.FileMode }

func (fi fuzzInfo) Name() string       { return "" }
func (fi fuzzInfo) Size() int64        { return 0 }
func (fi fuzzInfo) Mode() fs.FileMode  { return fi.mode }
func (fi fuzzInfo) ModTime() time.Time { return time.Time{} }
func (fi fuzzInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi fuzzInfo) Sys() any           { return nil }

func fuzzLstat(p string) (fs.FileInfo, error) {
	switch {
	case fuzzTree.dirs[p]:
		return fuzzInfo{fs.ModeDir | 0o755}, nil
	case fuzzTree.files[p]:
		return fuzzInfo{0o644}, nil
	}
	if _, ok := fuzzTree.links[p]; ok {
		return fuzzInfo{fs.ModeSymlink | 0o777}, nil
	}
	return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
}

func fuzzReadlink(p string) (string, error) {
	if t, ok := fuzzTree.links[p]; ok {
		return t, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: p, Err: fs.ErrInvalid}
}

// FuzzCanonical resolves arbitrary paths in a fake tree with symlinks.
// What comes back is absolute, clean, free of NUL, passes through no
// symlink (the kernel would have followed it), holds none of the /proc and
// /dev/fd aliases Canonical rewrites or refuses, and is its own canonical
// form; a refusal returns "".
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"a/b", "~/x", "$HOME/x", "${PWD}/f", "/proc/self/root/etc", "/dev/fd/3", "../../..", "a\x00", "/proc/1/cwd", "~root",
		"out/key", "rel/../x", "up/f", "chain/x", "loop/x", "ping", "dangling", "root/passwd", "here/f", "them", "fd5",
		"sub/parent/out/key", "/tmp/proc/self/root/etc/passwd", "/bin/../etc", "/dev/stdout", "/proc/self/fd/1",
		"new/../out/key", "/proc/self/fd/../root/etc/passwd", "/proc/1/x/../cwd", "/missing/../proc/self/root/secret",
		"/home/u/ws/f/../out", "/a$/b", "/a/$", "x/${}/y",
	} {
		f.Add(s)
	}
	r := &PathResolver{Home: "/home/u", Cwd: "/home/u/ws", Lstat: fuzzLstat, Readlink: fuzzReadlink}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := r.Canonical(p)
		again, err2 := r.Canonical(p)
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("Canonical(%q) is not deterministic: %q, %v then %q, %v", p, got, err, again, err2)
		}
		if err != nil {
			if got != "" {
				t.Fatalf("Canonical(%q) = %q with error %v", p, got, err)
			}
			return
		}
		if p == "" || strings.IndexByte(p, 0) >= 0 || len(p) > maxPathBytes {
			t.Fatalf("Canonical(%q) accepted a path it must refuse: %q", p, got)
		}
		if !strings.HasPrefix(got, "/") || filepath.Clean(got) != got {
			t.Fatalf("Canonical(%q) = %q: not absolute and clean", p, got)
		}
		if strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("Canonical(%q) kept a NUL", p)
		}
		switch got {
		case "/dev/stdin", "/dev/stdout", "/dev/stderr":
			// the names procForms gives descriptors 0-2, links in
			// the tree as on a real system
		default:
			for prefix := got; prefix != "/"; prefix = filepath.Dir(prefix) {
				if _, ok := fuzzTree.links[prefix]; ok {
					t.Fatalf("Canonical(%q) = %q: goes through the symlink %s", p, got, prefix)
				}
			}
		}
		if parts := strings.Split(got, "/"); len(parts) > 3 && parts[1] == "proc" && isProcWho(parts[2]) {
			switch parts[3] {
			case "root", "cwd", "exe", "map_files":
				t.Fatalf("Canonical(%q) = %q: kept a /proc alias", p, got)
			}
		}
		if strings.HasPrefix(got, "/dev/fd/") {
			t.Fatalf("Canonical(%q) = %q: kept a descriptor alias", p, got)
		}
		if len(got) > maxPathBytes {
			return // too long to be given to Canonical again
		}
		if twice, err := r.Canonical(got); err != nil || twice != got {
			t.Fatalf("Canonical(%q) = %q, but Canonical(%q) = %q, %v", p, got, got, twice, err)
		}
	})
}
