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
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// launch starts the child, then runs prepare, which completes cfg with
// what the child needs only once it runs (its seccomp program, its home)
// and makes its job cgroup: the child starts its runtime meanwhile, on
// another CPU. Then it feeds the child, waits, and collects. When prepare
// fails the child, which has run nothing, is discarded. The job cgroup is
// returned whatever happened.
func launch(ctx context.Context, l launcher, m nsMode, cfg *child.Config, std stdio, maxOut int64, prepare func() (*jobCgroup, error), netOn bool, extra ...*os.File) (Result, *child.Status, *jobCgroup, error) {
	// Pdeathsig follows the thread that forked: keep it for the whole run.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// Nothing is prepared while the child is being started: until it
	// executes the helper it shares this process's memory copy-on-write,
	// and every page written here meanwhile would be copied.
	p, err := startProc(l, m, netOn, nil, startOnDemand, extra...)
	if err != nil {
		return Result{}, nil, nil, err
	}
	cg, err := prepare()
	if err != nil {
		p.discard()
		return Result{}, nil, cg, err
	}
	p.start = time.Now() // the action's time runs from here
	p.cg = cg
	if cg.joinedByChild(cfg) {
		cfg.Cgroups = cg.dirs
	} else if err := cg.add(p.cmd.Process.Pid); err != nil {
		p.discard()
		return Result{}, nil, cg, &SetupError{Stage: "cgroup", Msg: err.Error()}
	}
	res, st, err := p.run(ctx, cfg, std, maxOut)
	return res, st, cg, err
}

// proc is a started child that waits for its config on its config pipe:
// until it gets one it has done nothing but enter its namespaces (and,
// with cgroups, its job cgroup).
type proc struct {
	cmd      *exec.Cmd
	l        launcher
	m        nsMode
	netOn    bool
	cg       *jobCgroup
	cgLimits Limits       // what the job cgroup was created with
	home     *sandboxHome // a prestarted child's private home directory
	// an armed worker's: the plan it is confined to, its "ready" line
	// (already read, through stBuf, which run reads on from), and the
	// granted paths as they were when it was confined
	plan           *plan
	ready          *child.Status
	stBuf          *bufio.Reader
	fp             []fileID
	primed         bool // its request and input are written (prime); run sends the go-ahead
	mounts         int  // a prestarted child's view: this namespace's mountinfo (raw fd) as it started; -1 none
	cfgW, stR      *os.File
	stdinW         *os.File
	outR, errR     *os.File // the child's stdout and stderr
	stdout, stderr *capture
	start          time.Time
	done           chan struct{} // closed when the child has been waited for
}

// startHow is how a child is started.
type startHow int

const (
	startOnDemand   startHow = iota // for an action waiting for it
	startPrestarted                 // ahead of its action; idle until its config
	startArmed                      // ahead of its action; confined to a plan, then idle until its request
)

// startProc starts the child. The calling goroutine must hold its OS
// thread (runtime.LockOSThread) until the child has been waited for: the
// child's parent-death signal fires when that thread ends. A prestarted
// child is told so: it prepares what it can while it waits. extra are
// handed to the child from child.EgressFD on (never to a relayed one) and
// closed here once it has them.
func startProc(l launcher, m nsMode, netOn bool, cg *jobCgroup, how startHow, extra ...*os.File) (*proc, error) {
	prestarted := how != startOnDemand
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
	if how == startArmed {
		args = append(args, child.ArgArmed)
	}
	p.cmd = &exec.Cmd{
		Path:        l.path,
		Args:        args,
		Env:         helperEnv,
		Dir:         "/",
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		ExtraFiles:  []*os.File{cfgR, stW},
		SysProcAttr: m.sysProcAttr(netOn),
	}
	if len(extra) > 0 {
		if relayed(l, m, how) {
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
	var goW *os.File   // the relay's go-ahead
	var joins []string // the relay joins the job cgroups itself
	if relayed(l, m, how) {
		joins = relayCgroupArgs(cg, how)
		goR, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		goW = w
		defer goR.Close()
		p.cmd.Args = append([]string{l.argv0, child.EntryRelay, strconv.Itoa(m.bits(netOn))}, joins...)
		p.cmd.Args = append(p.cmd.Args, args[1:]...)
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
	if joins != nil {
		cg = nil // not moved by claw
	}
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
	if !p.m.pid {
		// whatever left the session; nothing leaves a PID namespace, which
		// dies with its init (reading the cgroup's process list cost each
		// action about 0.1 ms)
		p.cg.kill()
	}
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

// message is what the child is sent for its action: the whole config, or
// to an armed worker, already confined to its plan, the request (command,
// environment, directory) in a frame and the go-ahead, or once primed
// the go-ahead alone.
func (p *proc) message(cfg *child.Config) ([]byte, error) {
	switch {
	case p.ready == nil:
		return child.MarshalConfig(cfg), nil
	case p.primed:
		return []byte{child.RequestGo}, nil
	}
	req, err := request(cfg)
	return append(req, child.RequestGo), err
}

// request is an armed worker's request for the action of cfg, framed.
func request(cfg *child.Config) ([]byte, error) {
	data, err := json.Marshal(child.Request{Argv: cfg.Argv, Env: cfg.Env, Dir: cfg.Dir})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := child.WriteFrame(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// prime writes an armed worker its action's input and request ahead of
// run, when both fit in their empty pipes: the worker parses the request
// while the caller waits (see RunAfter), and looks up the command,
// enters its directory and runs it only once run sends the go-ahead.
func (p *proc) prime(cfg *child.Config, std stdio) {
	in, ok := std.in.(*bytes.Reader)
	if p.ready == nil || !ok {
		return
	}
	req, err := request(cfg)
	if err != nil || len(req) > pipeSize(p.cfgW) || in.Len() > pipeSize(p.stdinW) {
		return
	}
	io.Copy(p.stdinW, in)
	p.stdinW.Close()
	p.cfgW.Write(req)
	p.primed = true
}

// pipeSize is the capacity of the pipe f writes to: what a write to it
// takes at once when it is empty (0 when unknown).
func pipeSize(f *os.File) int {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	sc.Control(func(fd uintptr) {
		if size, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil {
			n = size
		}
	})
	return n
}

// copyBuffers are the buffers a run's output is copied through: an
// action would otherwise allocate (and clear) two of io.Copy's 32 KiB.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

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
	cfgData, err := p.message(cfg)
	if err != nil {
		p.discard()
		return res, nil, err
	}
	p.stdout.setMax(maxOut)
	p.stderr.setMax(maxOut)
	// The child waits for this before doing anything. A message that fits
	// in the empty pipe is written at once, not after the goroutines below
	// have started; a larger one is written meanwhile.
	writeCfg := func() {
		p.cfgW.Write(cfgData)
		p.cfgW.Close()
	}
	if len(cfgData) <= pipeSize(p.cfgW) {
		writeCfg()
	} else {
		go writeCfg()
	}
	if !p.primed { // a primed worker's input is written already
		go func() {
			if std.in != nil {
				// fails with EPIPE when the command does not read it all
				io.Copy(p.stdinW, std.in)
			}
			p.stdinW.Close()
		}()
	}
	copyOut := func(dst io.Writer, src *os.File) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			buf := copyBuffers.Get().(*[]byte)
			// src without its WriteTo, which would take a new buffer
			io.CopyBuffer(dst, struct{ io.Reader }{src}, *buf)
			copyBuffers.Put(buf)
			close(done)
		}()
		return done
	}
	outDone, errDone := copyOut(std.tee(p.stdout), p.outR), copyOut(p.stderr, p.errR)

	// the setup line ("ready", "probe" or a failure) and, when the child
	// stayed init, the command's "exit" line or a later failure
	var (
		stMu        sync.Mutex
		setup, last *child.Status = p.ready, nil
	)
	var stSrc io.Reader = p.stR
	if p.stBuf != nil {
		stSrc = p.stBuf
	}
	exitSeen, statusEOF := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(statusEOF)
		sc := bufio.NewScanner(io.LimitReader(stSrc, 64<<10))
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
	// Over when the child exits, or once the exit line and both ends of
	// output have come (waited for here, not by another goroutine that
	// would have to be woken on the way).
	var werr error
	waited := false
wait:
	for _, c := range []<-chan struct{}{exitSeen, outDone, errDone} {
		select {
		case werr = <-exited:
			waited = true
			break wait
		case <-c:
		}
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

// helperEnv is the whole environment of the helper (the command gets
// its own, from the config): one P for the Go runtime, which then starts
// fewer threads before the helper reads its config, while claw finishes
// that config on the other CPUs.
var helperEnv = []string{"GOMAXPROCS=1"}

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
func relayed(l launcher, m nsMode, how startHow) bool {
	return how != startOnDemand && m.user && !l.self
}
