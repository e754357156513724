package executor

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
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

// relayed reports whether the child is cloned by the helper's relay
// rather than by this process: a clone into a new user namespace copies
// the cloning process's page tables and costs it a page fault on its next
// write to each page, which claw, with its large heap, pays in whatever
// it does next (see child.Relay). The relay is one more program start on
// the way to the child, so only a prestarted child, whose start is off the
// action's path, takes it; an action started on demand is quicker cloned
// directly. claw itself (the self re-exec) is too large to be a cheap
// relay; without a user namespace the clone shares memory until the exec
// and needs none.
func relayed(l launcher, m nsMode, prestarted bool) bool { return prestarted && m.user && !l.self }

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
// short-lived claw does not pay for a probe child on every action.
func fastSupport() Support {
	fastOnce.Do(func() {
		fast = staticSupport()
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

// staticSupport is everything Check knows without starting a child.
func staticSupport() Support {
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
	_, perr := seccompProgram(false)
	_, nerr := seccompProgram(true)
	if perr != nil || nerr != nil {
		s.Missing = append(s.Missing, fmt.Sprintf("seccomp: %v", errors.Join(perr, nerr)))
	}
	s.Seccomp = perr == nil && nerr == nil
	s.Cgroup = jobCgroups().version
	return s
}

func probe() Support {
	s := staticSupport()
	if s.Helper == "" {
		return s
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
	res, st, err := launch(ctx, l, m, cfg, stdio{}, 4096, nil, false)
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

// Run runs one action in a sandbox made for it and waits for it. An error
// wrapping ErrUnavailable or ErrInvalidSpec means nothing ran. A
// *SetupError (exit 126) means the child failed to confine itself and the
// command did not run; ErrNotFound (exit 127) that the command does not
// exist. Otherwise the error is nil and the Result carries the command's
// exit status (non-zero included).
func Run(ctx context.Context, s Spec) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	sup := fastSupport()
	if checkedReady.Load() {
		sup = Check()
	}
	res, err := runWith(ctx, s, sup)
	if retryable(res, err) && !checkedReady.Load() {
		// the namespaces were not what the sysctls suggested; nothing ran
		res, err = runWith(ctx, s, Check())
	}
	return res, err
}

// retryable reports a failure to start the child or to set up its
// namespaces' mounts or hostname (a seccomp filter claw itself runs
// under, such as a systemd unit's, may refuse sethostname): nothing ran,
// and a probed configuration may work.
func retryable(res Result, err error) bool {
	var se *SetupError
	if errors.As(err, &se) {
		return se.Stage == "mount" || se.Stage == "mount /proc" || se.Stage == "hostname" || se.Stage == "cgroup namespace"
	}
	return errors.Is(err, errStart)
}

var errStart = errors.New("cannot start the sandbox")

func runWith(ctx context.Context, s Spec, sup Support) (Result, error) {
	return runStdio(ctx, s, sup, stdio{})
}

// runStdio is runWith with the command's standard input and output
// streamed through std (see [Start]) instead of taken from s.Stdin and only
// captured.
func runStdio(ctx context.Context, s Spec, sup Support, std stdio) (Result, error) {
	noDeadline := std.streamed() && s.Timeout == 0
	min := s.MinLandlockABI
	if min <= 0 {
		min = DefaultMinLandlockABI
	}
	var warnings []string
	if err := sup.Require(min); err != nil {
		if !s.Degraded || sup.Helper == "" {
			return Result{}, err
		}
		warnings = append(warnings, "DEGRADED: "+err.Error())
	}
	l, err := findHelper()
	if err != nil {
		return Result{}, err
	}
	s = withDefaults(s)

	p := takeWarm(l, sup.ns, s.Net.On() || s.Net.Egress != nil, s.Limits)
	defer func() {
		if p != nil { // not run: an error below
			p.discard()
		}
		refill() // after the action, so that it does not compete with it
	}()
	var h *sandboxHome
	if p != nil {
		h = p.home
	} else if h, err = newHome(); err != nil {
		return Result{}, err
	}
	defer h.remove()
	home := h.dir

	cfg := &child.Config{Mode: child.ModeExec, MinABI: min, Degraded: s.Degraded, UID: -1, GID: -1,
		MountNS: sup.ns.mount, MountProc: sup.ns.proc && sup.ns.pid && sup.ns.mount, Hostname: sup.ns.hostname(), CgroupNS: sup.ns.cgroup}
	if s.RunAs != "" {
		uid, gid, err := lookupUser(s.RunAs)
		if err != nil {
			return Result{}, err
		}
		if os.Geteuid() != 0 && uid != os.Geteuid() {
			return Result{}, fmt.Errorf("%w: run_as needs root", ErrInvalidSpec)
		}
		cfg.UID, cfg.GID = uid, gid
		if err := os.Chown(home, uid, gid); err != nil {
			return Result{}, fmt.Errorf("sandbox home: %w", err)
		}
	}
	cfg.Env = buildEnv(&s, home)
	cfg.Dir = s.Cwd
	if cfg.Dir == "" {
		cfg.Dir = home
		if len(s.Write) > 0 {
			cfg.Dir = s.Write[0]
		}
	}
	switch s.Tool {
	case "", ToolShell:
		cfg.Argv = s.Argv
		if !std.streamed() {
			std.in = bytes.NewReader(s.Stdin)
		}
	default:
		t, err := toolLauncher(l, s.Tool)
		if err != nil {
			return Result{}, err
		}
		cfg.Argv = []string{t.argv0, child.EntryTool, s.Tool}
		cfg.Exe = t.path
		std.in = bytes.NewReader(s.Args)
		// The cgo-free helper can confine every one of its threads and
		// run the tool itself, without starting a second program.
		cfg.InProcess = !t.self && t == l && cfg.MountProc && sup.Seccomp && sup.LandlockABI > 0
	}
	cfg.RO = append(systemReadPaths(), s.Read...)
	if cfg.MountProc {
		cfg.RO = append(cfg.RO, "/proc")
	}
	cfg.RW = append([]string{home}, s.Write...)
	cfg.Protect = s.Protect
	cfg.Dev = devicePaths
	if s.Net.On() {
		cfg.Net = true
		cfg.TCPPorts = s.Net.Ports
		cfg.UDPPorts = []uint16{53}
	}
	var eg *egressRun
	if s.Net.Egress != nil {
		if !sup.ns.net {
			return Result{}, fmt.Errorf("%w: the egress proxy needs a network namespace", ErrUnavailable)
		}
		if eg, err = newEgressRun(s.Net.Egress); err != nil {
			return Result{}, err
		}
		defer eg.close() // on an early return; the report is taken below
		cfg.Net, cfg.TCPPorts, cfg.EgressPort = true, []uint16{EgressPort}, EgressPort
		cfg.Env = egressEnv(cfg.Env)
	}
	cfg.Limits = rlimits(s.Limits)
	if sup.Seccomp {
		if cfg.BPF, err = seccompProgram(cfg.Net); err != nil {
			return Result{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}

	var cancel context.CancelFunc
	if noDeadline {
		ctx, cancel = context.WithCancel(ctx)
	} else {
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
	}
	defer cancel()
	maxOut := s.MaxOutput
	if s.Tool != "" && s.Tool != ToolShell {
		maxOut = maxToolOutput
	}
	var (
		res Result
		st  *child.Status
		cg  *jobCgroup
	)
	if p != nil {
		cg = p.cg
		res, st, err = p.run(ctx, cfg, std, maxOut)
		p = nil
	} else {
		if k := jobCgroups(); k.version != "" {
			if cg, err = newJobCgroup(k, s.Limits); err != nil {
				warnings = append(warnings, err.Error())
				cg = nil
			}
		}
		var extra []*os.File
		if eg != nil {
			extra = []*os.File{eg.child}
		}
		res, st, err = launch(ctx, l, sup.ns, cfg, std, maxOut, cg, s.Net.On(), extra...)
	}
	if eg != nil {
		res.Egress = eg.close()
	}
	if cg != nil {
		go cg.removeWhenEmpty() // the namespace's processes are dying
		res.Sandbox.Cgroup = cg.version
	}
	if err != nil {
		return res, err
	}
	res.Sandbox.Namespaces = sup.ns.names(s.Net.On())
	res.Sandbox.Degraded = s.Degraded && len(warnings) > 0
	res.Sandbox.Warnings = append(warnings, res.Sandbox.Warnings...)
	if st != nil && st.Stage == "ready" {
		res.Sandbox.LandlockABI = st.ABI
		res.Sandbox.Seccomp = len(cfg.BPF) > 0
		res.Sandbox.NoNewPrivs = true
		res.Sandbox.CapsDropped = st.Caps
		res.Sandbox.ReadOnlyFS = st.Mount
		res.Sandbox.FreshProc = st.Proc
		res.Sandbox.UID = st.UID
		res.Sandbox.ToolInProcess = cfg.InProcess
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
	}
	if st != nil && st.Stage == "start" {
		// the relay could not clone the child: nothing ran
		return res, fmt.Errorf("%w: %w: %s", ErrUnavailable, errStart, st.Err)
	}
	if st != nil && st.Code != 0 {
		res.ExitCode = st.Code
		res.SetupError = st.Stage + ": " + st.Err
		if st.Code == child.CodeNotFound {
			return res, fmt.Errorf("%s: %w", cfg.Argv[0], ErrNotFound)
		}
		return res, &SetupError{Stage: st.Stage, Msg: st.Err}
	}
	if cfg.Exe != "" && !res.TimedOut {
		res.Tool = parseTool(res.Stdout)
	}
	return res, nil
}

// ErrNotFound is returned (wrapped) when the command does not exist; the
// Result's exit code is 127.
var ErrNotFound = errors.New("command not found")

// SetupError is returned when the sandboxed child could not confine itself;
// the command did not run and the Result's exit code is 126.
type SetupError struct {
	Stage string // the failing step: rlimit, mount, landlock, seccomp, exec…
	Msg   string
}

func (e *SetupError) Error() string {
	return "sandbox setup failed at " + e.Stage + ": " + e.Msg
}

func parseTool(out []byte) *ToolResult {
	var o child.ToolOutput
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return &ToolResult{Error: "malformed tool output: " + err.Error()}
	}
	return &ToolResult{Payload: o.Payload, Error: o.Error}
}

// launch starts the child with the config, feeds it, waits, and collects.
func launch(ctx context.Context, l launcher, m nsMode, cfg *child.Config, std stdio, maxOut int64, cg *jobCgroup, netOn bool, extra ...*os.File) (Result, *child.Status, error) {
	// Pdeathsig follows the thread that forked: keep it for the whole run.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := startProc(l, m, netOn, cg, false, extra...)
	if err != nil {
		return Result{}, nil, err
	}
	return p.run(ctx, cfg, std, maxOut)
}

// proc is a started child that waits for its config on its config pipe:
// until it gets one it has done nothing but enter its namespaces (and,
// with cgroups, its job cgroup).
type proc struct {
	cmd            *exec.Cmd
	l              launcher
	m              nsMode
	netOn          bool
	cg             *jobCgroup
	cgLimits       Limits       // what the job cgroup was created with
	home           *sandboxHome // a prestarted child's private home directory
	mounts         int          // a prestarted child's view: this namespace's mountinfo (raw fd) as it started; -1 none
	cfgW, stR      *os.File
	stdinW         *os.File
	outR, errR     *os.File // the child's stdout and stderr
	stdout, stderr *capture
	start          time.Time
	done           chan struct{} // closed when the child has been waited for
}

// startProc starts the child. The calling goroutine must hold its OS
// thread (runtime.LockOSThread) until the child has been waited for: the
// child's parent-death signal fires when that thread ends. A prestarted
// child is told so: it prepares what it can while it waits. extra are
// handed to the child from child.EgressFD on (never to a relayed one) and
// closed here once it has them.
func startProc(l launcher, m nsMode, netOn bool, cg *jobCgroup, prestarted bool, extra ...*os.File) (*proc, error) {
	// config, status, stdin, stdout, stderr: the child's ends are closed
	// here once it has them
	var ends [5][2]*os.File
	closeAll := func() {
		for _, e := range ends {
			for _, f := range e {
				if f != nil {
					f.Close()
				}
			}
		}
	}
	for i := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		ends[i] = [2]*os.File{r, w}
	}
	cfgR, cfgW := ends[0][0], ends[0][1]
	stR, stW := ends[1][0], ends[1][1]
	inR, inW := ends[2][0], ends[2][1]
	outR, outW := ends[3][0], ends[3][1]
	errR, errW := ends[4][0], ends[4][1]
	p := &proc{l: l, m: m, netOn: netOn, cg: cg, cfgW: cfgW, stR: stR, stdinW: inW, outR: outR, errR: errR, mounts: -1,
		stdout: newCapture(DefaultMaxOutput), stderr: newCapture(DefaultMaxOutput), done: make(chan struct{})}
	args := []string{l.argv0, child.EntrySandbox}
	if prestarted {
		args = append(args, child.ArgPrestarted)
	}
	p.cmd = &exec.Cmd{
		Path:        l.path,
		Args:        args,
		Env:         []string{},
		Dir:         "/",
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		ExtraFiles:  []*os.File{cfgR, stW},
		SysProcAttr: m.sysProcAttr(netOn),
	}
	if len(extra) > 0 {
		if relayed(l, m, prestarted) {
			closeAll()
			return nil, errors.New("files for a relayed child")
		}
		// fd 5 stays closed: it is the relay's in a relayed child
		p.cmd.ExtraFiles = append(p.cmd.ExtraFiles, nil)
		p.cmd.ExtraFiles = append(p.cmd.ExtraFiles, extra...)
		defer func() {
			for _, f := range extra {
				f.Close()
			}
		}()
	}
	var goW *os.File // the relay's go-ahead
	if relayed(l, m, prestarted) {
		goR, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		goW = w
		defer goR.Close()
		p.cmd.Args = append([]string{l.argv0, child.EntryRelay, strconv.Itoa(m.bits(netOn))}, args[1:]...)
		p.cmd.ExtraFiles = append(p.cmd.ExtraFiles, goR)
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		closeAll()
		if goW != nil {
			goW.Close()
		}
		return nil, fmt.Errorf("%w: %w: %v", ErrUnavailable, errStart, err)
	}
	cfgR.Close()
	stW.Close()
	inR.Close()
	outW.Close()
	errW.Close()
	if err := cg.add(p.cmd.Process.Pid); err != nil {
		if goW != nil {
			goW.Close()
		}
		p.discard()
		return nil, &SetupError{Stage: "cgroup", Msg: err.Error()}
	}
	if goW != nil {
		_, err := goW.Write([]byte{1})
		goW.Close()
		if err != nil {
			p.discard()
			return nil, &SetupError{Stage: "start", Msg: "the sandbox relay exited before its go-ahead: " + err.Error()}
		}
	}
	return p, nil
}

// kill ends the child and everything it started.
func (p *proc) kill() {
	pid := p.cmd.Process.Pid
	syscall.Kill(pid, syscall.SIGKILL)  // PID 1 of the namespace: takes everyone
	syscall.Kill(-pid, syscall.SIGKILL) // the session's group, without a PID namespace
	p.cg.kill()                         // whatever left the session, without a PID namespace
}

// alive reports whether the child has not exited, without reaping it.
func (p *proc) alive() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == 0
}

// discard kills a child that will not run anything and cleans up after it.
func (p *proc) discard() {
	p.kill()
	p.cfgW.Close()
	p.stdinW.Close()
	p.cmd.Wait()
	p.stR.Close()
	p.outR.Close()
	p.errR.Close()
	close(p.done)
	// the relay is gone; the child it cloned may still be exiting
	p.cg.removeWhenEmpty()
	if p.mounts >= 0 {
		unix.Close(p.mounts)
		p.mounts = -1
	}
	p.home.remove()
}

// earlyReturns counts the runs that ended on the child's exit report
// rather than its exit.
var earlyReturns atomic.Int64

// outputGrace is how long the child's output may still arrive after it
// was killed (a process outside a PID namespace may keep the pipes open).
const outputGrace = 500 * time.Millisecond

// run hands the child its config and standard input, waits for it, and collects
// what happened. The action is over when the child has exited, or, when
// it stayed init, as soon as it reported the command's exit with no other
// process left in its namespace and both output streams reached their
// end: the child is then killed and reaped in the background, and its
// namespace's teardown is not waited for.
func (p *proc) run(ctx context.Context, cfg *child.Config, std stdio, maxOut int64) (Result, *child.Status, error) {
	var res Result
	defer p.cfgW.Close()
	cfgData, err := json.Marshal(cfg)
	if err != nil {
		p.discard()
		return res, nil, err
	}
	p.stdout.setMax(maxOut)
	p.stderr.setMax(maxOut)
	go func() {
		p.cfgW.Write(cfgData) // the child waits for this before doing anything
		p.cfgW.Close()
	}()
	go func() {
		if std.in != nil {
			// fails with EPIPE when the command does not read it all
			io.Copy(p.stdinW, std.in)
		}
		p.stdinW.Close()
	}()
	copyOut := func(dst io.Writer, src *os.File) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			io.Copy(dst, src)
			close(done)
		}()
		return done
	}
	outDone, errDone := copyOut(std.tee(p.stdout), p.outR), copyOut(p.stderr, p.errR)

	// the setup line ("ready", "probe" or a failure) and, when the child
	// stayed init, the command's "exit" line or a later failure
	var (
		stMu        sync.Mutex
		setup, last *child.Status
	)
	exitSeen, statusEOF := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(statusEOF)
		sc := bufio.NewScanner(io.LimitReader(p.stR, 64<<10))
		seen := false
		for sc.Scan() {
			var s child.Status
			if json.Unmarshal(sc.Bytes(), &s) != nil {
				continue
			}
			stMu.Lock()
			if setup == nil {
				setup = &s
			} else {
				last = &s
			}
			stMu.Unlock()
			if s.Stage == "exit" && s.Alone && !seen {
				seen = true
				close(exitSeen)
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	finished := make(chan struct{}) // closed when run returns
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-finished: // over: the child may already be reaped
			default:
				p.kill()
			}
		case <-finished:
		}
	}()
	reported := make(chan struct{}) // the exit line and both ends of output
	go func() {
		for _, c := range []<-chan struct{}{exitSeen, outDone, errDone} {
			select {
			case <-c:
			case <-finished:
				return
			}
		}
		close(reported)
	}()

	var werr error
	waited := false
	select {
	case werr = <-exited:
		waited = true
	case <-reported:
	}
	p.kill() // nothing of the tree may outlive the action
	res.Duration = time.Since(p.start)
	finish := func() {
		if p.mounts >= 0 {
			unix.Close(p.mounts)
			p.mounts = -1
		}
		p.stR.Close()
		p.outR.Close()
		p.errR.Close()
		close(p.done)
	}
	if waited {
		// the output may still be in the pipes, or held open by a process
		// that left (without a PID namespace)
		grace := time.NewTimer(outputGrace)
		for _, c := range []<-chan struct{}{outDone, errDone, statusEOF} {
			select {
			case <-c:
			case <-grace.C:
				p.outR.Close()
				p.errR.Close()
				p.stR.Close()
				<-c
			}
		}
		grace.Stop()
		finish()
	} else {
		earlyReturns.Add(1)
		go func() {
			<-exited
			finish()
		}()
	}
	stMu.Lock()
	st, ex := setup, last
	stMu.Unlock()
	if ex != nil && ex.Stage != "exit" {
		st = ex // the command could not be started after setup
	}
	if waited {
		if werr != nil {
			var ee *exec.ExitError
			if !errors.As(werr, &ee) {
				return res, st, fmt.Errorf("waiting for the sandbox: %w", werr)
			}
		}
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				res.Signal = unix.SignalName(ws.Signal())
				res.ExitCode = 128 + int(ws.Signal())
			default:
				res.ExitCode = ws.ExitStatus()
			}
		}
	}
	if ex != nil && ex.Stage == "exit" && res.Signal == "" {
		res.ExitCode = ex.Exit
		if ex.Signal != 0 {
			res.Signal = unix.SignalName(syscall.Signal(ex.Signal))
		}
	}
	res.Stdout, res.StdoutTruncated = p.stdout.bytes()
	res.Stderr, res.StderrTruncated = p.stderr.bytes()
	res.StdoutBytes, res.StderrBytes = p.stdout.total, p.stderr.total
	so, se := p.stdout.sum(), p.stderr.sum()
	res.StdoutSHA256, res.StderrSHA256 = hex.EncodeToString(so), hex.EncodeToString(se)
	both := sha256.Sum256(append(append([]byte{}, so...), se...))
	res.OutputSHA256 = hex.EncodeToString(both[:])
	return res, st, nil
}

func withDefaults(s Spec) Spec {
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxOutput == 0 {
		s.MaxOutput = DefaultMaxOutput
	}
	l := &s.Limits
	if l.CPUSeconds == 0 {
		l.CPUSeconds = DefaultCPU
	}
	if l.FileSizeBytes == 0 {
		l.FileSizeBytes = DefaultFileSize
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = DefaultOpenFiles
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = DefaultMemory
	}
	if l.Processes == 0 {
		l.Processes = DefaultProcesses
	}
	clean := func(ps []string) []string {
		out := make([]string, 0, len(ps))
		for _, p := range ps {
			out = append(out, filepath.Clean(p))
		}
		return out
	}
	s.Read, s.Write, s.Protect = clean(s.Read), clean(s.Write), clean(s.Protect)
	if s.Cwd != "" {
		s.Cwd = filepath.Clean(s.Cwd)
	}
	return s
}

func rlimits(l Limits) []child.Rlimit {
	return []child.Rlimit{
		{Resource: unix.RLIMIT_CPU, Max: l.CPUSeconds},
		{Resource: unix.RLIMIT_FSIZE, Max: l.FileSizeBytes},
		{Resource: unix.RLIMIT_NOFILE, Max: l.OpenFiles},
		{Resource: unix.RLIMIT_CORE, Max: 0},
		{Resource: unix.RLIMIT_DATA, Max: l.MemoryBytes},
		{Resource: unix.RLIMIT_NPROC, Max: l.Processes},
	}
}

func lookupUser(name string) (uid, gid int, err error) {
	if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		if u, err := user.LookupId(name); err == nil {
			g, _ := strconv.Atoi(u.Gid)
			return n, g, nil
		}
		return n, n, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: run_as: %v", ErrInvalidSpec, err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, nil
}

// devicePaths are the device files every sandbox may read and write.
var devicePaths = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// systemReadPaths are readable (and executable) in every sandbox: the
// system's programs and libraries and a minimal /etc. The sandbox's uid 0
// reads what root may, so nothing here may hold a file only root can
// read: of /etc/ssl and /etc/pki only the CA certificates and OpenSSL's
// configuration, never their private directories (TLS keys); no shadow
// files. Paths that do not exist grant nothing.
func systemReadPaths() []string {
	ps := []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
	for _, e := range []string{
		"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
		"hosts", "resolv.conf", "host.conf", "gai.conf", "localtime", "timezone", "services",
		"protocols", "ca-certificates", "ca-certificates.conf", "alternatives",
		"mime.types", "os-release", "debian_version", "bash.bashrc", "inputrc", "terminfo",
		"magic", "locale.alias", "locale.conf", "environment.d",
		"gitconfig", // git refuses to run when it exists but cannot be read
		// CA certificates: the directories and the bundles where Go and
		// OpenSSL look for them (Debian, Fedora, Alpine, openSUSE)
		"ssl/certs", "ssl/openssl.cnf", "ssl/cert.pem", "ssl/ca-bundle.pem",
		"pki/tls/certs", "pki/tls/cert.pem", "pki/tls/openssl.cnf", "pki/ca-trust",
	} {
		ps = append(ps, "/etc/"+e)
	}
	return ps
}
