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
	"time"

	"golang.org/x/sys/unix"
)

// fixture is the world an escape case runs in: a workspace the sandbox may
// write, and outside it a fake home with a planted key, a secret file, a
// program, and listeners the sandbox must not reach.
type fixture struct {
	ws, outside, home, key, secret, outBin string
	tcpPort                                int
	unixPath, abstract                     string
	dgramPath                              string // a host unix datagram socket, like /dev/log
	xattr                                  string // why the secret has no user.* attribute, or ""
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
	f.dgramPath = filepath.Join(f.outside, "log.sock")
	dl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: f.dgramPath, Net: "unixgram"})
	must(t, err)
	t.Cleanup(func() { dl.Close() })
	go func() {
		var b [64]byte
		for {
			if _, err := dl.Read(b[:]); err != nil {
				return
			}
			f.accepted <- "dgram"
		}
	}()
	if err := unix.Setxattr(f.secret, "user.claw", []byte("host-xattr"), 0); err != nil {
		f.xattr = "the secret's filesystem takes no user.* attribute: " + err.Error()
	}
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
// sandbox and leave no side effect, in a child started on demand, in one
// started ahead of its action (Prestart), and in an armed worker.
func TestEscape(t *testing.T) {
	requireSandbox(t)
	inEveryMode(t, escapeSuite)
}

// inEveryMode runs f in children started on demand; then with Prestart
// on, where at least one of its runs must take a prestarted child; then
// with every action that has a plan run in a worker armed for it.
func inEveryMode(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	t.Run("on demand", f)
	t.Run("prestarted", func(t *testing.T) {
		Prestart()
		defer StopPrestart()
		before := warmTaken.Load()
		f(t)
		if n := warmTaken.Load() - before; n == 0 {
			t.Fatal("no case ran in a prestarted child")
		}
	})
	t.Run("armed", func(t *testing.T) { inArmedWorkers(t, f) })
}

// inArmedWorkers runs f with every action that has a plan run in a worker
// armed for it, and fails when one did not.
func inArmedWorkers(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	Prestart()
	armEvery = true
	defer func() {
		armEvery = false
		StopPrestart()
	}()
	taken, missed := armedTaken.Load(), armedMissed.Load()
	f(t)
	if n := armedMissed.Load() - missed; n != 0 {
		t.Errorf("%d actions with a plan found no armed worker", n)
	}
	if armedTaken.Load() == taken {
		t.Fatal("no case ran in an armed worker")
	}
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
	// noConnWithin is noConn after giving a host listener time to see
	// what reached it
	noConnWithin := func(t *testing.T) {
		select {
		case c := <-f.accepted:
			t.Errorf("side effect: the host %s listener accepted a connection", c)
		case <-time.After(200 * time.Millisecond):
		}
	}
	fastOpen := fastOpenClient(t)
	tcp := "127.0.0.1:" + strconv.Itoa(f.tcpPort)
	host := "/proc/" + strconv.Itoa(os.Getpid())
	sys := func(args ...string) []string { return sysprobeArgv(t, args...) }
	cases := []struct {
		name    string
		argv    []string
		write   []string // extra write grants
		wantErr string   // errno name expected, "" for any denial
		wantSig string   // the probe must be killed by this signal instead
		skip    string   // why the case cannot run here
		net     bool     // with a network grant (of another port): always a child of its own, never the prestarted one
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
		// The sandbox's init (the child, which stayed PID 1) made itself
		// non-dumpable before it started the command, so the command may
		// not open its memory or environment (EACCES at open). Were init
		// dumpable, both opens would succeed: environ would read as
		// "allowed" and mem fail only at the read (EIO), not EACCES.
		{name: "init environ", argv: probeArgv("read", "/proc/1/environ"), wantErr: "EACCES"},
		{name: "init memory", argv: probeArgv("read", "/proc/1/mem"), wantErr: "EACCES"},
		// claw's own PID does not exist in the sandbox's PID namespace
		// (its fresh /proc). Without the namespace these would open, or
		// fail otherwise (EACCES, or EISDIR for the fd directory).
		{name: "parent environ", argv: probeArgv("read", host+"/environ"), wantErr: "ENOENT"},
		{name: "parent memory", argv: probeArgv("read", host+"/mem"), wantErr: "ENOENT"},
		{name: "parent fds", argv: probeArgv("read", host+"/fd"), wantErr: "ENOENT"},
		// seccomp's EPERM list (seccomp_linux.go). Without the filter:
		// process_vm_* on the probe's own memory succeed (as outside the
		// sandbox, TestEscapeControls); TIOCLINUX on a pty gets EACCES
		// from Landlock's device ioctl rights (ENOTTY outside);
		// kexec_load, init_module and finit_module get ENOSYS from a
		// kernel built without them but EPERM (no capability) from
		// others, as reboot always does: TestSeccompFilterDecisions checks
		// the filter's own answer to those.
		{name: "process_vm_readv", argv: sys("vm_readv"), wantErr: "EPERM"},
		{name: "process_vm_writev", argv: sys("vm_writev"), wantErr: "EPERM"},
		{name: "kexec_load", argv: sys("kexec_load"), wantErr: "EPERM"},
		{name: "init_module", argv: sys("init_module"), wantErr: "EPERM"},
		{name: "finit_module", argv: sys("finit_module"), wantErr: "EPERM"},
		{name: "reboot", argv: sys("reboot"), wantErr: "EPERM"},
		{name: "tioclinux", argv: sys("tioclinux", "/dev/ptmx"), write: []string{"/dev/ptmx"}, wantErr: "EPERM"},
		{name: "tioclinux high bits", argv: sys("tioclinux-highbit", "/dev/ptmx"), write: []string{"/dev/ptmx"}, wantErr: "EPERM"},
		// A system call of another ABI kills the process (the filter's
		// bad-arch action); outside the sandbox the same call returns.
		{name: "x32 syscall", argv: sys("x32"), wantSig: "SIGSYS"},
		{name: "i386 int 0x80", argv: sys("int80"), wantSig: "SIGSYS", skip: int80Unusable(t)},
		// What gets past Landlock's grants without a path or port it
		// checks (seccomp_linux.go, addEdgeRules). Each was allowed
		// before its rule, and the host listener accepted the Fast Open
		// connections (the granted port is another one).
		{name: "listen without bind", argv: probeArgv("listen-autobind"), net: true, wantErr: "EPERM"},
		{name: "fast open sendto", argv: probeArgv("fastopen", "sendto", tcp), net: true, wantErr: "ENOTSUP", skip: fastOpen, after: noConnWithin},
		{name: "fast open sendmsg", argv: probeArgv("fastopen", "sendmsg", tcp), net: true, wantErr: "ENOTSUP", skip: fastOpen, after: noConnWithin},
		{name: "fast open sendmmsg", argv: probeArgv("fastopen", "sendmmsg", tcp), net: true, wantErr: "ENOTSUP", skip: fastOpen, after: noConnWithin},
		// connect(2) itself is checked by Landlock (EACCES without
		// the rule): the option is refused so that clients fall back
		{name: "fast open connect option", argv: probeArgv("fastopen", "sockopt", tcp), net: true, wantErr: "ENOTSUP", skip: fastOpen, after: noConnWithin},
		// a read lease on a file of the sandbox's own uid (root's, for a
		// sandboxed root) stalls its writers outside for lease-break-time
		{name: "read lease", argv: probeArgv("lease", filepath.Join(f.ws, "f.txt")), wantErr: "EPERM"},
		{name: "read lease with network", argv: probeArgv("lease", filepath.Join(f.ws, "f.txt")), net: true, wantErr: "EPERM"},
		// extended attributes of a file outside every grant: the
		// secret's user.claw (readable, then, with open refused)
		{name: "getxattr outside", argv: probeArgv("xattr", "getxattr", f.secret, "user.claw"), wantErr: "ENOTSUP", skip: f.xattr},
		{name: "lgetxattr outside", argv: probeArgv("xattr", "lgetxattr", f.secret, "user.claw"), wantErr: "ENOTSUP", skip: f.xattr},
		{name: "listxattr outside", argv: probeArgv("xattr", "listxattr", f.secret), wantErr: "ENOTSUP", skip: f.xattr},
		{name: "llistxattr outside", argv: probeArgv("xattr", "llistxattr", f.secret), wantErr: "ENOTSUP", skip: f.xattr},
		{name: "getxattrat outside", argv: probeArgv("xattr", "getxattrat", f.secret, "user.claw"), wantErr: "ENOTSUP", skip: f.xattr},
		{name: "listxattrat outside", argv: probeArgv("xattr", "listxattrat", f.secret), wantErr: "ENOTSUP", skip: f.xattr},
		// the kernel refuses an O_PATH descriptor (which Landlock never
		// checked) to fgetxattr: the descriptor calls stay allowed
		{name: "fgetxattr through O_PATH", argv: probeArgv("xattr", "fgetxattr-opath", f.secret, "user.claw"), wantErr: "EBADF", skip: f.xattr},
		// an inotify watch on a directory outside every grant
		{name: "inotify outside", argv: probeArgv("inotify", f.outside), wantErr: "ENOSYS"},
		{name: "inotify outside with network", argv: probeArgv("inotify", f.outside), net: true, wantErr: "ENOSYS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			s := f.spec(c.argv...)
			s.Write = append(s.Write, c.write...)
			if c.net {
				s.Net = Net{Ports: []uint16{9}}
			}
			res := run(t, s)
			out := string(bytes.TrimSpace(res.Stdout))
			if c.wantSig != "" {
				if res.Signal != c.wantSig || out != "" {
					t.Fatalf("not killed by %s: signal %q exit %d stdout %q", c.wantSig, res.Signal, res.ExitCode, out)
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
	t.Run("set-id files", noSetIDFiles)
	t.Run("system secrets", systemSecrets)
	t.Run("planted secret", func(t *testing.T) { plantedSecret(t, f) })
	t.Run("leaked fd", func(t *testing.T) { leakedFD(t, f) })
	t.Run("host ipc", func(t *testing.T) { hostIPC(t, f) })
	t.Run("host unix sockets", func(t *testing.T) { hostUnixSockets(t, f) })
	t.Run("hostname", func(t *testing.T) { hostname(t, f) })
	t.Run("residue", func(t *testing.T) { residue(t, f) })
}

// fastOpenClient makes sure the kernel lets clients use TCP Fast Open
// (net.ipv4.tcp_fastopen has its client bit), for the Fast Open cases:
// as root it sets the bit for the test and restores the value after;
// otherwise it says why the cases cannot run, or fails when the sandbox
// is required.
func fastOpenClient(t *testing.T) string {
	t.Helper()
	const sysctl = "/proc/sys/net/ipv4/tcp_fastopen"
	b, err := os.ReadFile(sysctl)
	if err != nil {
		return "no " + sysctl + ": " + err.Error()
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", sysctl, err)
	}
	if v&1 != 0 {
		return ""
	}
	if err := os.WriteFile(sysctl, []byte(strconv.Itoa(v|1)), 0); err == nil {
		t.Cleanup(func() { os.WriteFile(sysctl, b, 0) })
		return ""
	}
	why := fmt.Sprintf("%s is %d (no client bit) and cannot be set here", sysctl, v)
	if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
		t.Fatalf("CLAW_REQUIRE_SANDBOX is set: %s", why)
	}
	return why
}

// hostUnixSockets: a socketpair reaches no host pathname socket (the
// datagram one stands for /dev/log, journald or systemd's notify socket;
// the stream one for docker's or an ssh agent's), with or without a
// network grant, whatever the pair's type and however the address is
// given. A datagram pair (SOCK_RAW is one in AF_UNIX) is refused: its
// sendto delivered to the host socket before. A stream pair's sendto
// with an address and connect are refused by the kernel (EISCONN; a
// seqpacket pair's connect to a stream socket with EPROTOTYPE), and a
// seqpacket pair's sendto drops the address (the byte goes to the peer):
// those are checked, not fixed, here.
func hostUnixSockets(t *testing.T, f *fixture) {
	cases := []struct{ typ, mode, path, want string }{
		{"dgram", "sendto", f.dgramPath, "denied EPROTONOSUPPORT"},
		{"dgram", "sendmsg", f.dgramPath, "denied EPROTONOSUPPORT"},
		{"dgram", "connect", f.dgramPath, "denied EPROTONOSUPPORT"},
		{"raw", "sendto", f.dgramPath, "denied EPROTONOSUPPORT"},
		{"stream", "sendto", f.unixPath, "denied EISCONN"},
		{"stream", "sendmsg", f.unixPath, "denied EISCONN"},
		{"stream", "connect", f.unixPath, "denied EISCONN"},
		{"seqpacket", "sendto", f.dgramPath, "allowed"},
		{"seqpacket", "connect", f.unixPath, "denied EPROTOTYPE"},
	}
	for _, netOn := range []bool{false, true} {
		for _, c := range cases {
			s := f.spec(probeArgv("unix-pair", c.typ, c.mode, c.path)...)
			if netOn {
				s.Net = Net{Ports: []uint16{9}}
			}
			res := run(t, s)
			if out := strings.TrimSpace(string(res.Stdout)); out != c.want {
				t.Errorf("network %v, %s pair, %s %s: %q (stderr %q), want %q", netOn, c.typ, c.mode, c.path, out, res.Stderr, c.want)
			}
		}
	}
	select {
	case c := <-f.accepted:
		t.Errorf("side effect: the host %s socket was reached", c)
	case <-time.After(200 * time.Millisecond):
	}
}

// hostname: the sandbox has a UTS namespace of its own, named "claw";
// without it uname shows the host's name. And a cgroup namespace rooted
// at the action's own cgroup: the sandbox's /proc/self/cgroup shows / in
// every hierarchy, neither claw's cgroup paths nor the job cgroup's name
// (claw-PID-N, with claw's PID), also in a child started on demand, which
// enters its job cgroup after its clone (a v1 group it joins itself). It
// failed without the namespace (claw's memory cgroup here), and with one
// made at the clone (the job cgroup's name).
func hostname(t *testing.T, f *fixture) {
	host, err := os.Hostname()
	must(t, err)
	for _, netOn := range []bool{false, true} {
		s := f.spec(bash("uname -n; cat /proc/self/cgroup")...)
		if netOn {
			s.Net = Net{Ports: []uint16{9}}
		}
		res := run(t, s)
		name, cgroups, _ := strings.Cut(string(res.Stdout), "\n")
		if name != "claw" || name == host {
			t.Errorf("network %v: the sandbox's hostname is %q (the host's %q), want claw", netOn, name, host)
		}
		lines := strings.Split(strings.TrimSpace(cgroups), "\n")
		for _, l := range lines {
			if !strings.HasSuffix(l, ":/") {
				t.Errorf("network %v: the sandbox sees the cgroup path %q:\n%s", netOn, l, cgroups)
			}
		}
		if len(lines) == 0 || lines[0] == "" {
			t.Errorf("network %v: no cgroups read: %q (stderr %q)", netOn, res.Stdout, res.Stderr)
		}
	}
}

// residue is what the README says stays visible outside the grants,
// checked so that the README changes with it: a path's metadata through
// stat (existence, type, size, mode, owner, times), while its content is
// refused. It fails when stat is hidden too; the README must then say so.
func residue(t *testing.T, f *fixture) {
	res := run(t, f.spec(bash(fmt.Sprintf("%s stat %s; %s read %s", probeArgv()[0], f.secret, probeArgv()[0], f.secret))...))
	if got := strings.Fields(string(res.Stdout)); strings.Join(got, " ") != "allowed denied EACCES" {
		t.Errorf("stat then read of a file outside the grants: %q, want allowed, then denied EACCES", res.Stdout)
	}
}

// hostIPC: System V IPC objects of claw's user (made here mode 0600, as a
// service running as root would) are out of reach: the sandbox cannot
// find them by key, so it can neither write the shared memory, nor remove
// the semaphore set, nor send to the message queue. IPC keys are not
// paths, so Landlock does not see them, and the sandbox's uid is their
// owner's: only a new IPC namespace hides them. It failed without one
// (the probe wrote the segment and removed the set).
func hostIPC(t *testing.T, f *fixture) {
	key := 0x434c0000 | os.Getpid()&0xffff
	shm, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	must(t, err)
	defer unix.SysvShmCtl(shm, unix.IPC_RMID, nil)
	mem, err := unix.SysvShmAttach(shm, 0, 0)
	must(t, err)
	defer unix.SysvShmDetach(mem)
	copy(mem, "host")
	sem, _, e := unix.Syscall(unix.SYS_SEMGET, uintptr(key), 1, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if e != 0 {
		t.Fatal("semget:", e)
	}
	defer unix.Syscall6(unix.SYS_SEMCTL, sem, 0, unix.IPC_RMID, 0, 0, 0)
	msq, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), unix.IPC_CREAT|unix.IPC_EXCL|0o600, 0)
	if e != 0 {
		t.Fatal("msgget:", e)
	}
	defer unix.Syscall(unix.SYS_MSGCTL, msq, unix.IPC_RMID, 0)
	for _, what := range []string{"sysv-shm", "sysv-sem", "sysv-msg"} {
		res := run(t, f.spec(probeArgv(what, strconv.Itoa(key))...))
		if out := strings.TrimSpace(string(res.Stdout)); out != "denied ENOENT" {
			t.Errorf("%s: %q (stderr %q), want denied ENOENT", what, out, res.Stderr)
		}
	}
	if string(mem[:5]) != "host\x00" {
		t.Errorf("side effect: the shared memory now holds %q", mem[:22])
	}
	if _, _, e := unix.Syscall(unix.SYS_SEMGET, uintptr(key), 0, 0); e != 0 {
		t.Errorf("side effect: the semaphore set is gone: %v", e)
	}
}

// plantedSecret: a secret in claw's own environment is nowhere the
// command can look: not in its environment, nor in the environ of any
// process it can see. The variable's name does not look like a secret
// (Spec.Env would pass it through), so only the environment allowlist
// keeps it out: the case fails if the child's environment were built
// from claw's, or if a visible process carried claw's environment with
// its environ readable.
func plantedSecret(t *testing.T, f *fixture) {
	t.Setenv("CLAW_TEST_PLANTED", "sk-planted-escape-0123456789")
	res := run(t, f.spec(bash(`for e in /proc/[0-9]*/environ /proc/self/environ; do cat "$e" >"$HOME/e" && tr '\0' '\n' <"$HOME/e" && echo "read $e"; done; env`)...))
	out := string(res.Stdout) + string(res.Stderr)
	for _, s := range []string{"sk-planted", "CLAW_TEST_PLANTED"} {
		if strings.Contains(out, s) {
			t.Errorf("the sandbox sees %q:\n%s", s, out)
		}
	}
	// the reads worked: the shell's environment, cat's own (through
	// /proc/self) and env's
	if !strings.Contains(out, "read /proc/self/environ") || strings.Count(out, "TERM=dumb") < 3 {
		t.Errorf("the environments were not read:\n%s", out)
	}
}

// leakedFD: a descriptor claw opened without close-on-exec (as a careless
// library might) is not open in the command, which lists the same
// descriptors as before it was opened and cannot read it by number. It
// fails without the child's close_range(CLOSE_RANGE_CLOEXEC).
func leakedFD(t *testing.T, f *fixture) {
	fds := func() string { return string(run(t, f.spec("ls", "/proc/self/fd")).Stdout) }
	before := fds()
	fd, err := syscallOpenNoCloexec(f.secret)
	must(t, err)
	defer closeFD(fd)
	// twice: a prestarted child taken by the first run may have been
	// started before the open; the second run's was started after it
	for range 2 {
		if after := fds(); after != before {
			t.Errorf("descriptors before fd %d was leaked: %q, after: %q", fd, before, after)
		}
	}
	res := run(t, f.spec(probeArgv("fd", strconv.Itoa(fd))...))
	if got := strings.TrimSpace(string(res.Stdout)); got != "denied EBADF" {
		t.Errorf("reading the leaked fd %d: %q", fd, got)
	}
}

// systemSecrets: the minimal /etc every sandbox reads holds nothing only
// root may read, since the sandbox's uid 0 reads what root may: no grant
// covers the TLS private key directories, the shadow files, sudoers or
// the SSH host keys; every file the /etc grants hold on this host is
// readable by everyone; and where this host has TLS private key
// directories, the sandbox can neither list them nor read a file in them.
// It failed when all of /etc/ssl and /etc/pki were granted (Debian's
// /etc/ssl/private holds the snakeoil key).
func systemSecrets(t *testing.T) {
	secrets := []string{"/etc/ssl/private", "/etc/pki/tls/private", "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh"}
	for _, g := range systemReadPaths() {
		for _, s := range secrets {
			if g == "/" || g == s || strings.HasPrefix(s, g+"/") {
				t.Errorf("the read grant %s covers %s", g, s)
			}
		}
		if !strings.HasPrefix(g, "/etc/") {
			continue
		}
		root, err := filepath.EvalSymlinks(g)
		if err != nil {
			continue // a grant on nothing
		}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				t.Errorf("walking the read grant %s: %v", g, err)
				return nil
			}
			fi, err := d.Info()
			switch {
			case err != nil || d.Type()&os.ModeSymlink != 0:
			case fi.IsDir() && fi.Mode().Perm()&0o005 != 0o005, !fi.IsDir() && fi.Mode().Perm()&0o004 == 0:
				t.Errorf("the read grant %s holds %s (%v), which not everyone may read", g, p, fi.Mode())
			}
			return nil
		})
	}
	for _, dir := range []string{"/etc/ssl/private", "/etc/pki/tls/private"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		argvs := [][]string{probeArgv("list", dir)}
		if names, err := os.ReadDir(dir); err == nil { // as root
			for _, n := range names {
				argvs = append(argvs, probeArgv("read", filepath.Join(dir, n.Name())))
			}
		}
		for _, argv := range argvs {
			res := run(t, Spec{Argv: argv, Read: []string{testBin}})
			if out := string(bytes.TrimSpace(res.Stdout)); out != "denied EACCES" {
				t.Errorf("%s %s: %q, want denied EACCES", argv[1], argv[2], out)
			}
		}
	}
}

// setIDCalls are the system calls that make a file with a mode or give a
// file one (sysprobe setid).
var setIDCalls = []string{"chmod", "fchmod", "fchmodat", "fchmodat2", "open", "openat", "creat", "tmpfile", "mknod", "mknodat", "openat2"}

// setuidSource is a setuid program (setuid-root when the tests run as root)
// in a directory of its own that every user may search, on the
// filesystem of the test's temporary directories.
func setuidSource(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Chmod(dir, 0o755))
	must(t, os.Chmod(filepath.Dir(dir), 0o755))
	data, err := os.ReadFile("/bin/true")
	must(t, err)
	p := filepath.Join(dir, "suid-true")
	must(t, os.WriteFile(p, data, 0o755))
	must(t, os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid))
	return p
}

// searchableDir is a new directory every user may write in.
func searchableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Chmod(dir, 0o777))
	must(t, os.Chmod(filepath.Dir(dir), 0o755))
	return dir
}

// hostSetuid is a setuid program of the host on the same filesystem as
// dir, or "".
func hostSetuid(dir string) string {
	var d unix.Stat_t
	if unix.Stat(dir, &d) != nil {
		return ""
	}
	for _, p := range []string{"/usr/bin/passwd", "/usr/bin/su", "/bin/su", "/usr/bin/mount", "/usr/bin/newgrp"} {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_ISUID != 0 && st.Dev == d.Dev {
			return p
		}
	}
	return ""
}

// noSetIDFiles: no file with the setuid or setgid bit can be left in a
// write grant, neither by a system call that makes a file with a mode or
// changes one (each tried with both bits), nor by the tools that set them
// (chmod, install -m, cp -p of a setuid program), nor by a hard link to a
// setuid program the sandbox can read on the same filesystem (claw's, and
// the host's own when one is there); nor a file with a file capability
// (no CAP_SETFCAP). The command runs as uid 0 when the
// tests run as root, whose files belong to root on the host too (the user
// namespace maps uids one to one) and who, as their owner, needs no
// capability to set the bits; and then as an unprivileged run_as user.
// Outside the sandbox each call leaves the bit, and root's hard link is
// made (TestEscapeControls). The hard links were refused before the
// set-id rules were (Landlock grants no cross-directory link from a path
// outside the write grants, and a write grant is a mount of its own, so a
// link into it from anywhere else is EXDEV); the rest was not.
func noSetIDFiles(t *testing.T) {
	src := setuidSource(t)
	host := hostSetuid(filepath.Dir(src))
	probe := sysprobeArgv(t)[0]
	users := []string{""}
	if os.Geteuid() == 0 {
		users = append(users, "65534")
	}
	for _, u := range users {
		name := "uid " + strconv.Itoa(os.Geteuid())
		if u != "" {
			name = "run as " + u
		}
		t.Run(name, func(t *testing.T) {
			ws := searchableDir(t)
			var script strings.Builder
			for _, c := range setIDCalls {
				for _, m := range []string{"4755", "2755", "6755"} {
					fmt.Fprintf(&script, "echo %s %s $(%s setid %s %s %s-%s)\n", c, m, probe, c, m, c, m)
				}
			}
			fmt.Fprintf(&script, "touch capped; echo setcap - $(%s setcap capped)\n", probe)
			fmt.Fprintf(&script, `touch f; chmod 4755 f; chmod g+s f
mkdir d; chmod g+s d
install -m 4755 /bin/true installed
cp -p %[1]s copied
cp -a %[1]s archived
ln %[1]s hl
ln -L /proc/self/fd/3 hl-fd 3<%[1]s
`, src)
			if host != "" {
				fmt.Fprintf(&script, "ln %s hl-host\n", host)
			}
			res := run(t, Spec{Argv: bash(script.String()), Read: []string{testBin, filepath.Dir(src)}, Write: []string{ws}, RunAs: u})
			lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
			if len(lines) != 3*len(setIDCalls)+1 {
				t.Fatalf("%d lines from the set-id calls, want %d: %q (stderr %q)", len(lines), 3*len(setIDCalls)+1, res.Stdout, res.Stderr)
			}
			for _, l := range lines {
				call, got, _ := strings.Cut(l, " ")
				_, got, _ = strings.Cut(got, " ")
				want := "denied EPERM"
				if call == "openat2" {
					want = "denied ENOSYS" // libc falls back to openat
				}
				if got != want && got != "unsupported" {
					t.Errorf("%s: %q, want %q", l[:len(l)-len(got)-1], got, want)
				}
			}
			filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if fi, err := d.Info(); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
					t.Errorf("side effect: %s is %v", p, fi.Mode())
				}
				if _, err := unix.Lgetxattr(p, "security.capability", nil); err == nil {
					t.Errorf("side effect: %s has a file capability", p)
				}
				return nil
			})
			for _, l := range []string{"hl", "hl-fd", "hl-host"} {
				absent(t, filepath.Join(ws, l))
			}
			// the tools ran: what they made is there, without the bits
			for _, p := range []string{"f", "d", "installed", "copied"} {
				if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
					t.Errorf("%v (stderr %q)", err, res.Stderr)
				}
			}
		})
	}
}

// int80Unusable says why an i386 system call through int 0x80 cannot be
// tried here: it must return outside the sandbox for its death inside to
// mean anything. Some kernels and hypervisors have no 32-bit entry (the
// instruction faults with SIGSEGV before any system call); the filter's
// decision for the i386 ABI is then checked by TestSeccompFilterDecisions.
func int80Unusable(t *testing.T) string {
	t.Helper()
	out, err := execOut(sysprobeArgv(t, "int80")...)
	if err != nil || out != "allowed" {
		return fmt.Sprintf("int 0x80 does not return outside the sandbox here (%q, %v)", out, err)
	}
	return ""
}

// TestEscapeControls shows the fixtures are real: the same probes succeed
// outside the sandbox.
func TestEscapeControls(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	controls := [][]string{
		{"read", f.key},
		{"tcp", "127.0.0.1:" + strconv.Itoa(f.tcpPort)},
		{"unix", f.unixPath},
		{"abstract", f.abstract},
		{"unix-pair", "dgram", "sendto", f.dgramPath},
		{"unix-pair", "raw", "sendmsg", f.dgramPath},
		{"listen-autobind"},
		{"lease", filepath.Join(f.ws, "f.txt")},
		{"inotify", f.outside},
		{"stat", f.secret},
	}
	if f.xattr == "" {
		for _, c := range []string{"getxattr", "lgetxattr", "listxattr", "llistxattr", "getxattrat", "listxattrat"} {
			controls = append(controls, []string{"xattr", c, f.secret, "user.claw"})
		}
	}
	if fastOpenClient(t) == "" {
		for _, m := range []string{"sendto", "sendmsg", "sendmmsg", "sockopt"} {
			controls = append(controls, []string{"fastopen", m, "127.0.0.1:" + strconv.Itoa(f.tcpPort)})
		}
	}
	for _, args := range controls {
		out, err := execOut(probeArgv(args...)...)
		if err != nil || out != "allowed" {
			t.Errorf("control %v: %q %v", args, out, err)
		}
	}
	// The kernel's own answers to calls only the filter refuses: these
	// return (want "" means with anything but EPERM).
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"vm_readv"}, "allowed"},
		{[]string{"vm_writev"}, "allowed"},
		{[]string{"tioclinux", "/dev/ptmx"}, ""},
		{[]string{"tioclinux-highbit", "/dev/ptmx"}, ""},
		{[]string{"x32"}, ""},
	} {
		out, err := execOut(sysprobeArgv(t, c.args...)...)
		if err != nil || c.want != "" && out != c.want || out == "denied EPERM" || out == "" {
			t.Errorf("control %v: %q %v", c.args, out, err)
		}
	}
	// Every set-id call leaves its bit, and root links a setuid program
	// on the same filesystem.
	dir := t.TempDir()
	for _, c := range setIDCalls {
		p := filepath.Join(dir, c)
		out, err := execOut(sysprobeArgv(t, "setid", c, "4755", p)...)
		if out == "unsupported" {
			continue
		}
		fi, serr := os.Stat(p)
		if err != nil || out != "allowed" || serr != nil || fi.Mode()&os.ModeSetuid == 0 {
			t.Errorf("control setid %s: %q %v, file %v %v", c, out, err, fi, serr)
		}
	}
	if os.Geteuid() == 0 {
		p := filepath.Join(dir, "capped")
		must(t, os.WriteFile(p, nil, 0o644))
		if out, err := execOut(sysprobeArgv(t, "setcap", p)...); err != nil || out != "allowed" {
			t.Errorf("control setcap: %q %v", out, err)
		}
		src := setuidSource(t)
		for _, s := range []string{src, hostSetuid(dir)} {
			if s == "" {
				continue
			}
			l := filepath.Join(dir, "hl-"+filepath.Base(s))
			if err := os.Link(s, l); err != nil {
				t.Errorf("control: root cannot link %s: %v", s, err)
			}
		}
	}
}
