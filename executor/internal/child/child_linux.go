package child

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Exit codes of the child when it could not run the command.
const (
	CodeSetup    = 126
	CodeNotFound = 127
)

// Main is the sandboxed child's entry point (argv[1] == EntrySandbox). It
// never returns on success: the command replaces it. On any failure it
// reports on the status fd and returns 126 (or 127 when the command does
// not exist); the command has not run.
func Main(args []string) int {
	runtime.LockOSThread() // every restriction below is per thread; exec from this one
	status := os.NewFile(StatusFD, "status")
	cf := os.NewFile(ConfigFD, "config")
	if status == nil || cf == nil {
		fmt.Fprintln(os.Stderr, "claw: sandbox: not started by the executor")
		return CodeSetup
	}
	if slices.Contains(args, ArgRelayed) && orphaned(LifeFD) {
		return CodeSetup // nobody is left to hear a report
	}
	armed := slices.Contains(args, ArgArmed)
	c, err := readConfig(cf, armed)
	if !armed {
		cf.Close()
	}
	if err != nil {
		return report(status, Status{Stage: "config", Code: CodeSetup, Err: err.Error()})
	}
	st, err := setup(c)
	if err != nil {
		return reportStep(status, err)
	}
	if c.Mode == ModeProbe {
		st.Stage = "probe"
		writeStatus(status, st)
		return 0
	}
	st.Stage = "ready"
	writeStatus(status, st)
	if armed {
		WarmJSON(c.InProcess)
		err := takeRequest(c, cf)
		cf.Close()
		if err != nil {
			return reportStep(status, err)
		}
	}
	if c.InProcess {
		return toolHere(c, status)
	}
	if os.Getpid() == 1 {
		return initMain(c, status)
	}
	// close_range marked every fd >= 3 close-on-exec, the status fd included:
	// a successful exec closes it with nothing more written.
	err = syscall.Exec(c.Path, c.Argv, c.Env)
	return report(status, execFailure(c, err))
}

// readConfig reads the child's config: to the end of the pipe, or, for
// an armed worker, one frame (its request follows on the same pipe).
func readConfig(cf *os.File, armed bool) (*Config, error) {
	if !armed {
		c, err := DecodeConfig(cf)
		if err == nil && c.Mode == ModeArmed {
			return nil, errors.New("sandbox config: mode armed without a request to wait for")
		}
		return c, err
	}
	data, err := ReadFrame(cf)
	if err != nil {
		return nil, err
	}
	c, err := ParseConfig(data)
	if err == nil && c.Mode != ModeArmed {
		return nil, fmt.Errorf("sandbox config: an armed worker needs mode %s", ModeArmed)
	}
	return c, err
}

// takeRequest waits for an armed worker's one request (setup has
// confined it) and the go-ahead after it, then looks up the program and
// enters the directory under that confinement.
func takeRequest(c *Config, cf *os.File) error {
	data, err := ReadFrame(cf)
	if err != nil {
		return fail("request", err)
	}
	r, err := ParseRequest(data)
	if err != nil {
		return fail("request", err)
	}
	if err := c.Apply(r); err != nil {
		return fail("request", err)
	}
	var b [1]byte
	if n, _ := cf.Read(b[:]); n != 1 || b[0] != RequestGo {
		return fail("request", errors.New("no go-ahead for the request"))
	}
	if c.Path, err = resolve(c); err != nil {
		return err
	}
	if c.Dir != "" {
		if err := unix.Chdir(c.Dir); err != nil {
			return fail("cwd", err)
		}
	}
	return nil
}

// reportStep reports a failed step of setup or of an armed worker's
// request.
func reportStep(status *os.File, err error) int {
	var se *stepError
	if errors.As(err, &se) {
		return report(status, Status{Stage: se.stage, Code: se.code, Err: se.err.Error()})
	}
	return report(status, Status{Stage: "setup", Code: CodeSetup, Err: err.Error()})
}

// orphaned reports whether the relay that cloned this child is already
// dead (its life pipe hung up), and closes the pipe. The parent-death
// signal is in place by now, so a relay that dies later kills the child;
// one that died before is seen here. Only a relayed child (ArgRelayed)
// has a life pipe; one that lacks it is treated as orphaned.
func orphaned(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return true
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err != nil || n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
}

func execFailure(c *Config, err error) Status {
	code := CodeSetup
	if errors.Is(err, syscall.ENOENT) {
		code = CodeNotFound
	}
	return Status{Stage: "exec", Code: code, Err: fmt.Sprintf("%s: %v", c.Argv[0], err)}
}

// initMain runs when the child is the PID namespace's init: the command
// must not be PID 1 (the kernel would ignore the signals it sends itself,
// and nobody would reap orphans), so the child stays init, starts the
// command from this confined thread (the fork inherits the thread's
// Landlock domain, seccomp filter and no_new_privs), reaps everything, and
// reports the command's status. When init exits, the kernel kills every
// process left in the namespace.
func initMain(c *Config, status *os.File) int {
	// keep the command (and everything it starts) out of init's memory
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	pid, err := syscall.ForkExec(c.Path, c.Argv, &syscall.ProcAttr{
		Dir:   "",
		Env:   c.Env,
		Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		return report(status, execFailure(c, err))
	}
	releaseStdio() // the command has them; init needs only the status fd
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return CodeSetup
		}
		if wpid != pid {
			continue
		}
		ex := Status{Stage: "exit", UID: -1, Alone: alone()}
		if ws.Signaled() {
			ex.Signal = int(ws.Signal())
			ex.Exit = 128 + ex.Signal
		} else {
			ex.Exit = ws.ExitStatus()
		}
		writeStatus(status, ex)
		return ex.Exit
	}
}

// toolHere runs the tool in this process, every thread of which setup
// confined, and reports its status like a command's.
func toolHere(c *Config, status *os.File) int {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	code := ToolMain(c.Argv[2:])
	releaseStdio()
	writeStatus(status, Status{Stage: "exit", UID: -1, Exit: code, Alone: alone()})
	return code
}

// alone reports whether init is the only process left in its PID
// namespace: every other one would be its child (orphans are reparented
// to it), so it reaps the zombies and asks for more.
func alone() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
		case err == syscall.ECHILD:
			return os.Getpid() == 1
		case err != nil, pid == 0:
			return false
		}
	}
}

// releaseStdio points this process's stdin, stdout and stderr at
// /dev/null, so that the parent sees the end of the action's output
// without waiting for this process to exit. If /dev/null cannot be opened
// they stay, and the parent waits for the exit.
func releaseStdio() {
	fd, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	for i := 0; i <= 2; i++ {
		unix.Dup3(fd, i, 0)
	}
	unix.Close(fd)
}

// threadSyscall makes a per-thread change on this thread, or on every
// thread of the process when all is set (a tool that runs in the child
// itself: the Go runtime may run it on any thread).
func threadSyscall(all bool, trap, a1, a2, a3 uintptr) syscall.Errno {
	var e syscall.Errno
	if all {
		_, _, e = syscall.AllThreadsSyscall(trap, a1, a2, a3)
	} else {
		_, _, e = unix.Syscall(trap, a1, a2, a3)
	}
	return e
}

// checkThreads verifies, from /proc, that every thread of the process has
// the seccomp filter, no_new_privs and no capabilities (permitted,
// effective, inheritable or ambient), before a tool runs in it.
func checkThreads() error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		if err != nil {
			return err
		}
		for _, want := range []string{"\nSeccomp:\t2\n", "\nNoNewPrivs:\t1\n", "\nCapInh:\t0000000000000000\n", "\nCapPrm:\t0000000000000000\n", "\nCapEff:\t0000000000000000\n", "\nCapAmb:\t0000000000000000\n"} {
			if !strings.Contains(string(b), want) {
				return fmt.Errorf("thread %s is not confined: no %q", t.Name(), strings.TrimSpace(want))
			}
		}
	}
	return nil
}

type stepError struct {
	stage string
	code  int
	err   error
}

func (e *stepError) Error() string { return e.stage + ": " + e.err.Error() }

func fail(stage string, err error) error { return &stepError{stage, CodeSetup, err} }

// report tells the parent why nothing ran; the parent words it for the user.
func report(f *os.File, s Status) int {
	writeStatus(f, s)
	return s.Code
}

func writeStatus(f *os.File, s Status) {
	f.Write(s.Line())
}

// lowerRlimit sets the soft and hard limit of l.Resource to l.Max, or to
// the current hard limit when that is lower (one inherited from a ulimit,
// systemd's LimitNPROC= or a container): a limit is only ever lowered,
// which needs no privilege, and the lower limit is the stricter one.
func lowerRlimit(l Rlimit) error {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(l.Resource, &cur); err != nil {
		return err
	}
	v := min(l.Max, cur.Max)
	return syscall.Setrlimit(l.Resource, &syscall.Rlimit{Cur: v, Max: v})
}

// joinCgroups moves the calling thread into each v1 cgroup directory of
// dirs, by writing 0 to its tasks file. A thread that moves itself is
// moved without the lock that moving a whole process takes (the first to
// take that one waits for an RCU grace period, milliseconds on an idle
// machine). The command, started from this thread, starts in the groups,
// and so does everything it starts; the Go runtime's other threads of
// this process stay where they were, outside the job's count.
func joinCgroups(dirs []string) error {
	for _, d := range dirs {
		fd, err := unix.Open(filepath.Join(d, "tasks"), unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err == nil {
			_, err = unix.Write(fd, []byte("0"))
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("joining %s: %w", d, err)
		}
	}
	return nil
}

// setup confines the current thread in the order the design needs: job
// cgroups, rlimits, mounts (while capabilities remain), command lookup,
// cwd, credentials, no_new_privs, Landlock, seccomp, fd hygiene.
func setup(c *Config) (Status, error) {
	st := Status{UID: -1}
	if err := joinCgroups(c.Cgroups); err != nil {
		return st, fail("cgroup", err)
	}
	for _, l := range c.Limits {
		if err := lowerRlimit(l); err != nil {
			return st, fail("rlimit", fmt.Errorf("resource %d: %w", l.Resource, err))
		}
	}
	if c.EgressPort != 0 {
		if err := egressListen(c.EgressPort); err != nil {
			return st, fail("egress", err)
		}
	}
	if c.MountNS {
		if err := remount(c); err != nil {
			return st, fail("mount", err)
		}
		if err := protect(c.Protect); err != nil {
			return st, fail("mount", err)
		}
		st.Mount = true
		if c.MountProc {
			if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
				return st, fail("mount /proc", err)
			}
			st.Proc = true
		}
	}
	if c.Hostname != "" {
		if err := setHostname(c.Hostname); err != nil {
			return st, fail("hostname", err)
		}
	}
	if c.CgroupNS {
		if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
			return st, fail("cgroup namespace", err)
		}
	}
	if c.Mode == ModeExec {
		path, err := resolve(c)
		if err != nil {
			return st, err
		}
		if c.Exe != "" {
			c.RO = append(c.RO, path) // the tool's binary must be executable in the domain
		}
		c.Path = path
		if c.Dir != "" {
			if err := unix.Chdir(c.Dir); err != nil {
				return st, fail("cwd", err)
			}
		}
	} else if c.Mode == ModeArmed && c.Exe != "" {
		c.RO = append(c.RO, c.Exe) // as for ModeExec: resolve returns Exe
	}
	abi, _ := LandlockABI()
	rs := -1
	switch {
	case abi >= c.MinABI && abi > 0, c.Degraded && abi > 0:
		var err error
		if rs, err = landlockRuleset(c, abi); err != nil {
			return st, fail("landlock", err)
		}
	case c.Degraded:
	default:
		return st, fail("landlock", fmt.Errorf("landlock ABI %d is below the required %d", abi, c.MinABI))
	}
	all := c.InProcess
	if all && (rs < 0 || len(c.BPF) == 0 || !c.MountProc) {
		return st, fail("threads", errors.New("a tool runs in the child only with Landlock, seccomp and a fresh /proc"))
	}
	if err := credentials(c, &st, all); err != nil {
		return st, fail("credentials", err)
	}
	if e := threadSyscall(all, unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return st, fail("no_new_privs", e)
	}
	if rs >= 0 {
		if err := landlockRestrict(rs, all); err != nil {
			return st, fail("landlock", err)
		}
		st.ABI = abi
	}
	if len(c.BPF) > 0 {
		if err := loadSeccomp(c.BPF, all); err != nil {
			return st, fail("seccomp", err)
		}
	} else if !c.Degraded {
		return st, fail("seccomp", errors.New("no seccomp program"))
	}
	if all {
		if err := checkThreads(); err != nil {
			return st, fail("threads", err)
		}
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return st, fail("close_range", err)
	}
	return st, nil
}

// resolve finds the program the way execvp would, with the sandbox's PATH,
// before Landlock hides anything.
func resolve(c *Config) (string, error) {
	if c.Exe != "" {
		return c.Exe, nil
	}
	name := c.Argv[0]
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && c.Dir != "" {
			p = filepath.Join(c.Dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", &stepError{"exec", CodeNotFound, fmt.Errorf("%s: command not found", name)}
		}
		return p, nil
	}
	pathEnv := "/usr/local/bin:/usr/bin:/bin"
	for _, e := range c.Env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // relative PATH entries are never searched in the sandbox
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &stepError{"exec", CodeNotFound, fmt.Errorf("%s: command not found", name)}
}

// remount makes the whole mount tree read-only and nosuid, except the
// read-write grants, which are bind-mounted onto themselves and made
// writable again. This covers what Landlock does not (chmod, chown, utimes,
// xattrs outside the workspace, notably for root).
func remount(c *Config) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	var binds []string
	for _, p := range c.RW {
		fi, err := os.Stat(p)
		if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
			continue // device files stay writable on a read-only mount
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %q: %w", p, err)
		}
		binds = append(binds, p)
	}
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("read-only /: %w", err)
	}
	rw := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	for _, p := range binds {
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, &rw); err != nil {
			return fmt.Errorf("writable %q: %w", p, err)
		}
	}
	return nil
}

// setHostname names the child's own UTS namespace (the domain name gets
// the kernel's default), while it still has the capability to.
func setHostname(name string) error {
	if err := unix.Sethostname([]byte(name)); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	if err := unix.Setdomainname([]byte("(none)")); err != nil {
		return fmt.Errorf("setdomainname: %w", err)
	}
	return nil
}

// protect bind-mounts each existing path onto itself read-only: files in
// a writable grant that run code outside the sandbox later (git hooks) stay
// as they are. An absent path or a symbolic link is skipped.
func protect(paths []string) error {
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
			continue
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %q: %w", p, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &ro); err != nil {
			return fmt.Errorf("read-only %q: %w", p, err)
		}
	}
	return nil
}

// credentials switches to the configured uid/gid and drops every
// capability: the bounding and ambient sets are emptied and securebits
// locked so that executing anything, even as uid 0, grants nothing.
func credentials(c *Config, st *Status, all bool) error {
	setgroups, setresgid, setresuid := unix.Setgroups, unix.Setresgid, unix.Setresuid
	if all { // the syscall package changes every thread
		setgroups, setresgid, setresuid = syscall.Setgroups, syscall.Setresgid, syscall.Setresuid
	}
	// The securebits and the bounding set first: dropping from the
	// bounding set needs CAP_SETPCAP in the effective set, which a change
	// to a non-root uid would clear. NO_SETUID_FIXUP then keeps that
	// change from touching the capability sets at all; the capset below
	// empties them.
	const secbits = 0x2f // NOROOT|NOROOT_LOCKED|NO_SETUID_FIXUP|NO_SETUID_FIXUP_LOCKED|KEEP_CAPS_LOCKED
	if haveCap(unix.CAP_SETPCAP) {
		if e := threadSyscall(all, unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, secbits, 0); e != 0 {
			return fmt.Errorf("securebits: %w", e)
		}
		// The bounding set is emptied on this thread only: one call per
		// capability on every thread costs a stop-the-world each. The
		// other threads of an in-process tool keep theirs, which grants
		// nothing: they have no capabilities and no_new_privs (both
		// checked before the tool runs) and the locked NOROOT securebits,
		// so not even an execve as uid 0 could gain one.
		last := lastCap() // read once: it is a file in /proc
		for i := 0; i <= last; i++ {
			if e := threadSyscall(false, unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(i), 0); e != 0 && e != unix.EINVAL {
				return fmt.Errorf("drop bounding capability %d: %w", i, e)
			}
		}
	} else if c.UID >= 0 {
		// without the securebits: keep capabilities across setuid long
		// enough to drop them explicitly
		_ = threadSyscall(all, unix.SYS_PRCTL, unix.PR_SET_KEEPCAPS, 1, 0)
	}
	if c.GID >= 0 {
		if err := setgroups([]int{c.GID}); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
		if err := setresgid(c.GID, c.GID, c.GID); err != nil {
			return fmt.Errorf("setgid: %w", err)
		}
	}
	if c.UID >= 0 {
		if err := setresuid(c.UID, c.UID, c.UID); err != nil {
			return fmt.Errorf("setuid: %w", err)
		}
	}
	// a credential change clears the parent-death signal; set it again
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	// The capset below empties the ambient set too (the kernel keeps it a
	// subset of permitted and inheritable): clearing it here is for this
	// thread only, and costs the other threads of an in-process tool no
	// stop-the-world (their ambient sets are checked before it runs).
	_ = threadSyscall(false, unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if e := threadSyscall(all, unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	st.Caps = true
	st.UID = unix.Getuid()
	return nil
}

func haveCap(cap int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[cap/32].Effective&(1<<(uint(cap)%32)) != 0
}

func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		var n int
		if _, err := fmt.Sscanf(string(b), "%d", &n); err == nil && n > 0 && n < 128 {
			return n
		}
	}
	return 63
}

// loadSeccomp installs a precompiled classic BPF program on this thread,
// or with all on every thread of the process (the kernel's TSYNC).
func loadSeccomp(prog []byte, all bool) error {
	fprog := unix.SockFprog{Len: uint16(len(prog) / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&prog[0]))}
	var flags uintptr
	if all {
		flags = unix.SECCOMP_FILTER_FLAG_TSYNC
	}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return fmt.Errorf("seccomp(SET_MODE_FILTER): %w", e)
	}
	if r != 0 { // TSYNC: the id of a thread that could not be synchronised
		return fmt.Errorf("seccomp(SET_MODE_FILTER): thread %d could not be synchronised", r)
	}
	runtime.KeepAlive(prog)
	return nil
}
