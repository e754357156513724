package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// Run runs one action in a sandbox made for it and waits for it. An error
// wrapping ErrUnavailable or ErrInvalidSpec means nothing ran. A
// *SetupError (exit 126) means the child failed to confine itself and the
// command did not run; ErrNotFound (exit 127) that the command does not
// exist. Otherwise the error is nil and the Result carries the command's
// exit status (non-zero included).
func Run(ctx context.Context, s Spec) (Result, error) {
	return RunAfter(ctx, s, nil)
}

// RunAfter is [Run] that readies the sandbox first (starts the child, or
// takes a worker started ahead and checks that it fits) and gives the
// child its action only once ready returns nil: a caller readies the
// sandbox while it makes its record of the action durable. When ready
// returns an error nothing runs, and RunAfter returns that error. ready
// may be called more than once (after a failed start Run tries again);
// a nil ready is Run.
func RunAfter(ctx context.Context, s Spec, ready func() error) (Result, error) {
	if err := s.Validate(); err != nil {
		return Result{}, err
	}
	sup := fastSupport()
	if checkedReady.Load() {
		sup = Check()
	}
	res, err := runStdio(ctx, s, sup, stdio{ready: ready})
	if retryable(res, err) && !checkedReady.Load() {
		// the namespaces were not what the sysctls suggested; nothing ran
		res, err = runStdio(ctx, s, Check(), stdio{ready: ready})
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

	cfg, err := actionConfig(&s, sup, l, min, &std)
	if err != nil {
		return Result{}, err
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
	}
	// withBPF puts the seccomp program into cfg: compiled (the first
	// time) after a child started on demand, while it starts its runtime.
	// Without one an action fails closed, unless it is degraded: then it
	// runs without seccomp (and a tool not in the child, which needs it).
	// Once: an armed plan needs it before its worker is taken.
	withBPF := sync.OnceValue(func() error {
		if !sup.Seccomp {
			return nil
		}
		prog, err := seccompProgram(cfg.Net)
		if err == nil {
			cfg.BPF = prog
			return nil
		}
		err = fmt.Errorf("%w: seccomp filters are not available: %v", ErrUnavailable, err)
		if !s.Degraded {
			return err
		}
		warnings = append(warnings, "DEGRADED: "+err.Error())
		cfg.InProcess = false
		return nil
	})

	netOn := s.Net.On() || s.Net.Egress != nil
	var pl *plan // without Prestart, or for an egress or streamed action, no armed worker
	if eg == nil && !std.streamed() && prestarting() {
		if err := withBPF(); err != nil {
			return Result{}, err
		}
		if pl, err = newPlan(l, sup.ns, netOn, s.Limits, cfg); err != nil {
			return Result{}, err
		}
	}
	if armEvery && pl != nil {
		rearm(pl)
	}
	p := takeArmed(pl)
	if p == nil {
		if pl != nil {
			armedMissed.Add(1)
		}
		p = takeWarm(l, sup.ns, netOn, s.Limits)
	}
	defer func() {
		if p != nil { // not run: an error below
			p.discard()
		}
		// after the action, so that they do not compete with it
		rearm(pl)
		refill()
	}()
	var h *sandboxHome
	defer func() {
		if h != nil {
			removeHome(h)
		}
	}()
	// useHome gives the child its private home, and the environment and
	// directory that depend on it.
	useHome := func() error {
		if cfg.UID >= 0 {
			if err := os.Chown(h.dir, cfg.UID, cfg.GID); err != nil {
				return fmt.Errorf("sandbox home: %w", err)
			}
		}
		cfg.RW = append([]string{h.dir}, cfg.RW...)
		cfg.Env = buildEnv(&s, h.dir)
		if eg != nil {
			cfg.Env = egressEnv(cfg.Env)
		}
		cfg.Dir = s.Cwd
		if cfg.Dir == "" {
			cfg.Dir = h.dir
			if len(s.Write) > 0 {
				cfg.Dir = s.Write[0]
			}
		}
		return nil
	}

	// The action's time runs from when the child is given it: readying
	// the sandbox while the caller makes its record durable (RunAfter's
	// ready) does not count against s.Timeout. The same bound holds
	// meanwhile, so that a start that hangs still ends.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var clock *time.Timer
	if !noDeadline {
		clock = time.AfterFunc(s.Timeout, func() { cancel(context.DeadlineExceeded) })
		defer clock.Stop()
	}
	given := func() error {
		if err := std.await(); err != nil {
			return err
		}
		if clock != nil {
			clock.Reset(s.Timeout)
		}
		return nil
	}
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
		h, cg = p.home, p.cg
		if err := withBPF(); err != nil {
			return Result{}, err
		}
		if err := useHome(); err != nil {
			return Result{}, err
		}
		if std.ready != nil {
			p.prime(cfg, std)
		}
		if err := given(); err != nil {
			return Result{}, err
		}
		p.start = time.Now()
		res, st, err = p.run(ctx, cfg, std, maxOut)
		p = nil
	} else {
		// what the child needs only once it has started
		prepare := func() (*jobCgroup, error) {
			if err := withBPF(); err != nil {
				return nil, err
			}
			var err error
			if h, err = newHome(); err != nil {
				return nil, err
			}
			if err := useHome(); err != nil {
				return nil, err
			}
			var cg *jobCgroup
			if k := jobCgroups(); k.version != "" {
				if cg, err = newJobCgroup(k, s.Limits); err != nil {
					warnings = append(warnings, err.Error())
					cg = nil
				}
			}
			return cg, given()
		}
		var extra []*os.File
		if eg != nil {
			extra = []*os.File{eg.child}
		}
		res, st, cg, err = launch(ctx, l, sup.ns, cfg, std, maxOut, prepare, s.Net.On(), extra...)
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
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
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
		return res, setupError(st.Stage, st.Err, l)
	}
	if cfg.Exe != "" && !res.TimedOut {
		res.Tool = parseTool(res.Stdout)
	}
	return res, nil
}

// actionConfig is the child config of s without what depends on the
// sandbox's home directory (its RW grant, the environment, the default
// directory) or on an egress grant, and without the seccomp program. It
// sets std's input to the command's stdin or the tool's arguments.
func actionConfig(s *Spec, sup Support, l launcher, min int, std *stdio) (*child.Config, error) {
	cfg := &child.Config{Mode: child.ModeExec, MinABI: min, Degraded: s.Degraded, UID: -1, GID: -1,
		MountNS: sup.ns.mount, MountProc: sup.ns.proc && sup.ns.pid && sup.ns.mount, Hostname: sup.ns.hostname(), CgroupNS: sup.ns.cgroup}
	if s.RunAs != "" {
		uid, gid, err := lookupUser(s.RunAs)
		if err != nil {
			return nil, err
		}
		if os.Geteuid() != 0 && uid != os.Geteuid() {
			return nil, fmt.Errorf("%w: run_as needs root", ErrInvalidSpec)
		}
		cfg.UID, cfg.GID = uid, gid
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
			return nil, err
		}
		cfg.Argv = []string{t.argv0, child.EntryTool, string(s.Tool)}
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
	cfg.RW = slices.Clone(s.Write)
	cfg.Protect = s.Protect
	cfg.Dev = devicePaths
	if s.Net.On() {
		cfg.Net = true
		cfg.TCPPorts = s.Net.Ports
		cfg.UDPPorts = []uint16{53}
	}
	cfg.Limits = rlimits(s.Limits)
	return cfg, nil
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

// setupError is the child's failure at stage. A helper that cannot read
// its config is most likely from another build than the claw that wrote
// it (claw upgraded, claw-sandbox not): the message says so.
func setupError(stage, msg string, l launcher) *SetupError {
	if stage == "config" && !l.self {
		msg += " (the sandbox helper " + l.path + " may come from another claw build: install claw and " + HelperName + " together)"
	}
	return &SetupError{Stage: stage, Msg: msg}
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
