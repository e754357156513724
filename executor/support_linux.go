package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// nsMode is how the child is cloned.
type nsMode struct {
	user, pid, mount, net bool
	// ipc: a new IPC namespace, so the host's System V shared memory,
	// semaphores and message queues and its POSIX message queues are out
	// of reach (a sandboxed uid 0 owns root's: it could read, write and
	// remove them)
	ipc bool
	// uts: a new UTS namespace, named sandboxHostname, so the host's
	// name is not seen
	uts bool
	// cgroup: a new cgroup namespace, which the child makes once it is in
	// its job cgroup, so that no cgroup path above that (claw's own, the
	// job's name) is seen either
	cgroup bool
	proc   bool // a fresh /proc can be mounted
}

// sandboxHostname is the hostname inside a sandbox with a UTS namespace.
const sandboxHostname = "claw"

func (m nsMode) names(net bool) []string {
	var n []string
	if m.user {
		n = append(n, "user")
	}
	if m.pid {
		n = append(n, "pid")
	}
	if m.mount {
		n = append(n, "mount")
	}
	if m.ipc {
		n = append(n, "ipc")
	}
	if m.uts {
		n = append(n, "uts")
	}
	if m.cgroup {
		n = append(n, "cgroup")
	}
	if m.net && !net {
		n = append(n, "net")
	}
	return n
}

// hostname is the name the child gives its UTS namespace ("": none).
func (m nsMode) hostname() string {
	if m.uts {
		return sandboxHostname
	}
	return ""
}

// bits are the namespaces a child is cloned into, for child.CloneAttr.
func (m nsMode) bits(netOn bool) int {
	var ns int
	if m.user {
		ns |= child.NSUser
	}
	if m.pid {
		ns |= child.NSPID
	}
	if m.mount {
		ns |= child.NSMount
	}
	if m.ipc {
		ns |= child.NSIPC
	}
	if m.uts {
		ns |= child.NSUTS
	}
	if m.net && !netOn {
		ns |= child.NSNet
	}
	return ns
}

func (m nsMode) sysProcAttr(netOn bool) *syscall.SysProcAttr {
	a := child.CloneAttr(m.bits(netOn))
	a.Setsid = true
	return a
}

var (
	checkOnce    sync.Once
	checked      Support
	checkedReady atomic.Bool
)

// Check probes the kernel once (it starts one sandboxed child) and reports
// what is supported and what will be enforced. It is cached.
func Check() Support {
	checkOnce.Do(func() { checked = probe(); checkedReady.Store(true) })
	return checked
}

var (
	fastOnce sync.Once
	fast     Support
)

// fastSupport is Check without starting a child: the namespaces are
// inferred from sysctls. Run uses it, and falls back to Check (and retries
// once) when the child cannot be started or mounted as inferred, so a
// short-lived claw does not pay for a probe child on every action. Nor
// does it compile a seccomp program or look for job cgroups (its Cgroup
// is empty): the action does both while its child starts.
func fastSupport() Support {
	fastOnce.Do(func() {
		fast = staticSupport(false)
		if fast.Helper == "" {
			return
		}
		user := userNSAllowed()
		if user || fast.Root {
			fast.ns = nsMode{user: user, pid: true, mount: true, ipc: true, uts: true, cgroup: true, net: true, proc: true}
			fast.UserNS, fast.PIDNS, fast.MountNS, fast.NetNS, fast.FreshProc = user, true, true, true, true
			fast.UTSNS, fast.CgroupNS = true, true
		}
		if err := fast.Require(0); err != nil {
			fast.Err = err.Error()
		}
	})
	return fast
}

func userNSAllowed() bool {
	read := func(p string) (int, bool) {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	if n, ok := read("/proc/sys/user/max_user_namespaces"); !ok || n == 0 {
		return false
	}
	if os.Geteuid() == 0 {
		return true
	}
	if n, ok := read("/proc/sys/kernel/unprivileged_userns_clone"); ok && n == 0 {
		return false
	}
	if n, ok := read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && n != 0 {
		return false
	}
	return true
}

// staticSupport is everything Check knows without starting a child. With
// full it also compiles the seccomp program of an action without network
// (seccomp is available when that succeeds) and finds where job cgroups
// go. Without, both are left to the action, which does them once its
// child has started (runStdio): seccomp is taken to be available, and an
// action that cannot compile its program fails closed, as does a child
// whose program the kernel refuses.
func staticSupport(full bool) Support {
	var s Support
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		s.Kernel = unix.ByteSliceToString(uts.Release[:])
	}
	s.LandlockABI, s.LandlockErrata = child.LandlockABI()
	s.Root = os.Geteuid() == 0
	l, err := findHelper()
	if err != nil {
		s.Missing = append(s.Missing, "sandbox helper: "+err.Error())
		s.Err = err.Error()
		return s
	}
	s.Helper, s.HelperIsSelf = l.path, l.self
	s.Root = os.Geteuid() == 0
	// The program of an action without network. That of an action with
	// network is compiled when one needs it (which fails closed) and by
	// the probe: a short-lived claw compiles only the one it uses.
	s.Seccomp = true
	if full {
		if _, err = seccompProgram(false); err != nil {
			s.Missing = append(s.Missing, fmt.Sprintf("seccomp: %v", err))
			s.Seccomp = false
		}
		s.Cgroup = jobCgroups().version
	}
	return s
}

func probe() Support {
	s := staticSupport(true)
	if s.Helper == "" {
		return s
	}
	if _, err := seccompProgram(true); err != nil && s.Seccomp {
		s.Missing = append(s.Missing, fmt.Sprintf("seccomp (with network): %v", err))
		s.Seccomp = false
	}
	l, _ := findHelper()
	seccompOK := s.Seccomp
	s.Seccomp = false
	perr := error(nil)
	if !seccompOK {
		perr = errors.New("no seccomp program")
	}
	candidates := []nsMode{
		{user: true, pid: true, mount: true, net: true, proc: true},
		{user: true, pid: true, mount: true, net: true},
	}
	if s.Root {
		candidates = append(candidates, nsMode{pid: true, mount: true, net: true, proc: true}, nsMode{pid: true, mount: true, net: true})
	}
	// each first with IPC, UTS and cgroup namespaces, then with IPC and
	// UTS (a systemd unit may forbid the cgroup one), then with IPC
	// alone, then (a kernel or a filter that refuses them) without
	withIPC := make([]nsMode, 0, 4*len(candidates)+1)
	for _, extra := range []struct{ uts, cgroup bool }{{true, true}, {true, false}, {false, false}} {
		for _, m := range candidates {
			m.ipc, m.uts, m.cgroup = true, extra.uts, extra.cgroup
			withIPC = append(withIPC, m)
		}
	}
	candidates = append(append(withIPC, candidates...), nsMode{})
	for _, m := range candidates {
		st, err := probeOne(l, m, perr == nil)
		if err != nil {
			continue
		}
		s.ns = m
		s.UserNS, s.PIDNS, s.MountNS, s.NetNS, s.FreshProc = m.user, m.pid, m.mount, m.net, m.proc
		s.UTSNS, s.CgroupNS = m.uts, m.cgroup
		s.Seccomp = seccompOK && st.seccomp
		break
	}
	s.describe()
	if err := s.Require(0); err != nil {
		s.Err = err.Error()
	}
	return s
}

type probeResult struct{ seccomp bool }

func probeOne(l launcher, m nsMode, withBPF bool) (probeResult, error) {
	cfg := &child.Config{Mode: child.ModeProbe, MinABI: 0, Degraded: true, UID: -1, GID: -1,
		MountNS: m.mount, MountProc: m.proc && m.pid && m.mount, Hostname: m.hostname(), CgroupNS: m.cgroup}
	if withBPF {
		cfg.BPF, _ = seccompProgram(false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, st, _, err := launch(ctx, l, m, cfg, stdio{}, 4096, func() (*jobCgroup, error) { return nil, nil }, false)
	if err != nil {
		return probeResult{}, err
	}
	if res.ExitCode != 0 || st == nil || st.Stage != "probe" {
		return probeResult{}, fmt.Errorf("probe failed: %s", res.Stderr)
	}
	return probeResult{seccomp: withBPF}, nil
}

func (s *Support) describe() {
	if s.LandlockABI > 0 {
		e := fmt.Sprintf("Landlock ABI %d: filesystem (read-only system dirs, read-write grants only, no device nodes)", s.LandlockABI)
		if s.LandlockABI >= 4 {
			e += ", TCP bind/connect by port"
		}
		if s.LandlockABI >= 6 {
			e += ", abstract unix socket and signal scoping"
		}
		if s.LandlockABI >= 9 {
			e += ", pathname unix sockets"
		}
		if s.LandlockABI >= 10 {
			e += ", UDP by port"
		}
		s.Enforced = append(s.Enforced, e)
		if s.LandlockABI < 9 {
			s.Missing = append(s.Missing, "Landlock ABI < 9: pathname unix sockets are not covered by Landlock (seccomp refuses socket(AF_UNIX) and datagram socketpairs instead)")
		}
		if s.LandlockABI < 10 {
			s.Missing = append(s.Missing, "Landlock ABI < 10: UDP is not covered by Landlock (seccomp refuses sockets when network is off; a net namespace hides the host)")
		}
	} else {
		s.Missing = append(s.Missing, "Landlock: not enabled (add landlock to the lsm= boot parameter)")
	}
	if s.Seccomp {
		s.Enforced = append(s.Enforced, "seccomp: namespaces, mount, ptrace, keyctl, bpf, perf, io_uring, kexec/modules, TIOCSTI/TIOCLINUX denied; no setuid or setgid mode bits; no sockets without a network grant, TCP and UDP only with one; socketpairs of unix stream and seqpacket only; no listen, TCP Fast Open, read leases, extended attribute reads by path or inotify; foreign architectures killed")
	}
	s.Enforced = append(s.Enforced, "no_new_privs; every capability dropped (bounding, ambient, securebits locked)")
	if s.UserNS || s.PIDNS || s.MountNS {
		s.Enforced = append(s.Enforced, "namespaces: "+strings.Join(s.ns.names(false), ", "))
	} else {
		s.Missing = append(s.Missing, "namespaces: none usable; a timeout kills only the process group and /proc is not granted")
	}
	if s.MountNS {
		s.Enforced = append(s.Enforced, "whole filesystem remounted read-only and nosuid except the write grants (stops chmod/chown/utimes outside them)")
	}
	if s.FreshProc {
		s.Enforced = append(s.Enforced, "fresh /proc showing only the sandbox's processes")
	} else {
		s.Missing = append(s.Missing, "fresh /proc: not mountable; /proc is not granted at all")
	}
	s.Enforced = append(s.Enforced, "rlimits: CPU, file size, open files, core 0, data size, processes (RLIMIT_NPROC does not apply to uid 0)")
	switch s.Cgroup {
	case "v2":
		s.Enforced = append(s.Enforced, "cgroup v2: pids.max and memory.max per action")
	case "v1":
		s.Enforced = append(s.Enforced, "cgroup v1: pids.max per action (memory bounded per process by RLIMIT_DATA only)")
	default:
		s.Missing = append(s.Missing, "cgroups: no delegated cgroup; process count relies on RLIMIT_NPROC (not enforced for root) and the wall timeout")
	}
	s.Enforced = append(s.Enforced, "environment from an allowlist only; inherited file descriptors closed")
	s.Edges = edges(s)
	if s.Root {
		s.Enforced = append(s.Enforced, "as root: uid 0 kept unless run_as is set, with no capabilities; outside the write grants the filesystem is read-only")
	}
}
