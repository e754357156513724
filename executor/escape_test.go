package executor

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fixture is the world an escape case runs in: a workspace the sandbox may
// write, and outside it a fake home with a planted key, a secret file, a
// program, and listeners the sandbox must not reach.
type fixture struct {
	ws, outside, home, key, secret, outBin string
	tcpPort                                int
	unixPath, abstract                     string
	accepted                               chan string
}

const secretContent = "TOP-SECRET-CONTENT\n"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ws: t.TempDir(), outside: t.TempDir(), accepted: make(chan string, 16)}
	f.home = filepath.Join(f.outside, "home")
	f.key = filepath.Join(f.home, ".ssh", "id_ed25519")
	f.secret = filepath.Join(f.outside, "secret.txt")
	must(t, os.MkdirAll(filepath.Dir(f.key), 0o700))
	must(t, os.WriteFile(f.key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n"), 0o600))
	must(t, os.WriteFile(f.secret, []byte(secretContent), 0o600))
	must(t, os.WriteFile(filepath.Join(f.ws, "f.txt"), []byte("workspace file\n"), 0o644))
	f.outBin = filepath.Join(f.outside, "true")
	data, err := os.ReadFile("/bin/true")
	must(t, err)
	must(t, os.WriteFile(f.outBin, data, 0o755))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	f.tcpPort = ln.Addr().(*net.TCPAddr).Port
	go accept(ln, f.accepted, "tcp")
	if ln6, err := net.Listen("tcp6", "[::1]:"+strconv.Itoa(f.tcpPort)); err == nil {
		t.Cleanup(func() { ln6.Close() })
		go accept(ln6, f.accepted, "tcp6")
	}
	f.unixPath = filepath.Join(f.outside, "agent.sock")
	ul, err := net.Listen("unix", f.unixPath)
	must(t, err)
	t.Cleanup(func() { ul.Close() })
	go accept(ul, f.accepted, "unix")
	f.abstract = fmt.Sprintf("claw-test-%d-%s", os.Getpid(), filepath.Base(f.ws))
	al, err := net.Listen("unix", "@"+f.abstract)
	must(t, err)
	t.Cleanup(func() { al.Close() })
	go accept(al, f.accepted, "abstract")
	return f
}

func accept(ln net.Listener, ch chan string, name string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
		ch <- name
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) spec(argv ...string) Spec {
	return Spec{Argv: argv, Read: []string{testBin}, Write: []string{f.ws}}
}

func probeArgv(args ...string) []string {
	return append([]string{filepath.Join(testBin, "probe")}, args...)
}

func fileIs(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("side effect: %s: %v", path, err)
		return
	}
	if string(got) != want {
		t.Errorf("side effect: %s now holds %q, want %q", path, got, want)
	}
}

func absent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("side effect: %s exists", path)
	}
}

// TestEscape is the escape suite: every case must be denied by the
// sandbox and leave no side effect, in a child started on demand and in
// one started ahead of its action (Prestart).
func TestEscape(t *testing.T) {
	requireSandbox(t)
	t.Run("on demand", escapeSuite)
	t.Run("prestarted", func(t *testing.T) {
		Prestart()
		defer StopPrestart()
		before := warmTaken.Load()
		escapeSuite(t)
		if n := warmTaken.Load() - before; n == 0 {
			t.Fatal("no case ran in a prestarted child")
		}
	})
}

func escapeSuite(t *testing.T) {
	f := newFixture(t)
	secretMode := func(t *testing.T) {
		fi, err := os.Stat(f.secret)
		must(t, err)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("side effect: %s mode %v", f.secret, fi.Mode())
		}
		var st unix.Stat_t
		must(t, unix.Stat(f.secret, &st))
		if st.Uid != uint32(os.Getuid()) || st.Mtim.Sec == 1 {
			t.Errorf("side effect: %s owner %d mtime %d", f.secret, st.Uid, st.Mtim.Sec)
		}
		fileIs(t, f.secret, secretContent)
	}
	noConn := func(t *testing.T) {
		select {
		case c := <-f.accepted:
			t.Errorf("side effect: the host %s listener accepted a connection", c)
		default:
		}
	}
	tcp := "127.0.0.1:" + strconv.Itoa(f.tcpPort)
	cases := []struct {
		name    string
		argv    []string
		write   []string // extra write grants
		wantErr string   // errno name expected, "" for any denial
		after   func(t *testing.T)
	}{
		{name: "write outside", argv: probeArgv("write", filepath.Join(f.outside, "x")), after: func(t *testing.T) { absent(t, filepath.Join(f.outside, "x")) }},
		{name: "write etc", argv: probeArgv("write", "/etc/claw-escape"), after: func(t *testing.T) { absent(t, "/etc/claw-escape") }},
		{name: "append secret", argv: probeArgv("append", f.secret), after: secretMode},
		{name: "truncate secret", argv: probeArgv("truncate", f.secret), after: secretMode},
		{name: "remove secret", argv: probeArgv("remove", f.secret), after: secretMode},
		{name: "rename out of workspace", argv: probeArgv("rename", filepath.Join(f.ws, "f.txt"), filepath.Join(f.outside, "moved")), after: func(t *testing.T) {
			absent(t, filepath.Join(f.outside, "moved"))
			fileIs(t, filepath.Join(f.ws, "f.txt"), "workspace file\n")
		}},
		{name: "rename into workspace", argv: probeArgv("rename", f.secret, filepath.Join(f.ws, "stolen")), after: func(t *testing.T) {
			absent(t, filepath.Join(f.ws, "stolen"))
			secretMode(t)
		}},
		{name: "hard link into workspace", argv: probeArgv("link", f.key, filepath.Join(f.ws, "hl")), after: func(t *testing.T) { absent(t, filepath.Join(f.ws, "hl")) }},
		{name: "symlink to key", argv: probeArgv("symlink-read", f.key, filepath.Join(f.ws, "sl"))},
		{name: "read ssh key", argv: probeArgv("read", f.key)},
		{name: "read secret", argv: probeArgv("read", f.secret)},
		{name: "read shadow", argv: probeArgv("read", "/etc/shadow")},
		{name: "proc self root", argv: probeArgv("read", "/proc/self/root"+f.key)},
		{name: "proc self cwd escape", argv: probeArgv("read", "/proc/self/cwd/../../"+strings.TrimPrefix(f.secret, "/"))},
		{name: "exec outside program", argv: probeArgv("exec", f.outBin)},
		{name: "mknod block device", argv: probeArgv("mknod-block", filepath.Join(f.ws, "blk")), after: func(t *testing.T) { absent(t, filepath.Join(f.ws, "blk")) }},
		{name: "mknod char device", argv: probeArgv("mknod-char", filepath.Join(f.ws, "chr")), after: func(t *testing.T) { absent(t, filepath.Join(f.ws, "chr")) }},
		{name: "proc sys write", argv: probeArgv("write", "/proc/sys/kernel/hostname")},
		{name: "sys write", argv: probeArgv("write", "/sys/kernel/mm/transparent_hugepage/enabled")},
		{name: "chmod outside", argv: probeArgv("chmod", f.secret), after: secretMode},
		{name: "chown outside", argv: probeArgv("chown", f.secret), after: secretMode},
		{name: "utimes outside", argv: probeArgv("utimes", f.secret), after: secretMode},
		{name: "tcp connect", argv: probeArgv("tcp", tcp), after: noConn},
		{name: "tcp6 connect", argv: probeArgv("tcp6", "[::1]:"+strconv.Itoa(f.tcpPort)), after: noConn},
		{name: "mptcp connect", argv: probeArgv("mptcp", tcp), after: noConn},
		{name: "udp send", argv: probeArgv("udp", "127.0.0.1:53")},
		{name: "raw socket", argv: probeArgv("raw")},
		{name: "netlink socket", argv: probeArgv("netlink")},
		{name: "socket with high bits", argv: probeArgv("socket-highbit")},
		{name: "listen", argv: probeArgv("listen")},
		{name: "host unix socket", argv: probeArgv("unix", f.unixPath), after: noConn},
		{name: "abstract unix socket", argv: probeArgv("abstract", f.abstract), after: noConn},
		{name: "ptrace host process", argv: probeArgv("ptrace", strconv.Itoa(os.Getpid())), wantErr: "EPERM"},
		{name: "kill host process", argv: probeArgv("kill", strconv.Itoa(os.Getpid()))},
		{name: "mount", argv: probeArgv("mount", f.ws), wantErr: "EPERM"},
		{name: "unshare user", argv: probeArgv("unshare-user"), wantErr: "EPERM"},
		{name: "unshare net", argv: probeArgv("unshare-net"), wantErr: "EPERM"},
		{name: "clone newuser", argv: probeArgv("clone-newuser"), wantErr: "EPERM"},
		{name: "clone3", argv: probeArgv("clone3"), wantErr: "ENOSYS"},
		{name: "chroot", argv: probeArgv("chroot"), wantErr: "EPERM"},
		{name: "keyctl", argv: probeArgv("keyctl"), wantErr: "EPERM"},
		{name: "bpf", argv: probeArgv("bpf"), wantErr: "EPERM"},
		{name: "io_uring", argv: probeArgv("io_uring"), wantErr: "EPERM"},
		{name: "perf_event_open", argv: probeArgv("perf"), wantErr: "EPERM"},
		{name: "userfaultfd", argv: probeArgv("userfaultfd"), wantErr: "EPERM"},
		{name: "open_by_handle_at", argv: probeArgv("open_by_handle_at"), wantErr: "EPERM"},
		{name: "tiocsti", argv: probeArgv("tiocsti", "/dev/ptmx"), write: []string{"/dev/ptmx"}, wantErr: "EPERM"},
		{name: "tiocsti high bits", argv: probeArgv("tiocsti-highbit", "/dev/ptmx"), write: []string{"/dev/ptmx"}, wantErr: "EPERM"},
		{name: "parent environ", argv: []string{"bash", "-c", "cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ"}},
		{name: "init memory", argv: []string{"bash", "-c", "head -c 1 /proc/1/mem; cat /proc/1/environ | grep ."}},
		{name: "parent fds", argv: []string{"bash", "-c", "ls /proc/" + strconv.Itoa(os.Getpid()) + "/fd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := f.spec(c.argv...)
			s.Write = append(s.Write, c.write...)
			res := run(t, s)
			out := string(bytes.TrimSpace(res.Stdout))
			if c.argv[0] == "bash" {
				if res.ExitCode == 0 {
					t.Fatalf("allowed: exit 0, stdout %q", out)
				}
			} else {
				if !strings.HasPrefix(out, "denied") {
					t.Fatalf("escape: %q (stderr %q)", out, res.Stderr)
				}
				if c.wantErr != "" && out != "denied "+c.wantErr {
					t.Errorf("got %q, want denied %s", out, c.wantErr)
				}
			}
			if c.after != nil {
				c.after(t)
			}
		})
	}
}

// TestEscapeControls shows the fixtures are real: the same probes succeed
// outside the sandbox.
func TestEscapeControls(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	for _, args := range [][]string{
		{"read", f.key},
		{"tcp", "127.0.0.1:" + strconv.Itoa(f.tcpPort)},
		{"unix", f.unixPath},
		{"abstract", f.abstract},
	} {
		out, err := execOut(probeArgv(args...)...)
		if err != nil || out != "allowed" {
			t.Errorf("control %v: %q %v", args, out, err)
		}
	}
}
