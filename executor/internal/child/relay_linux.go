package child

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Namespaces the child is cloned into, as the relay's NS argument.
const (
	NSUser = 1 << iota
	NSPID
	NSMount
	NSNet
	NSIPC
	NSUTS
)

// CloneAttr is how the child is cloned into the namespaces ns: the clone
// flags and, with a user namespace, the id maps (as root the whole id
// range maps onto itself; otherwise only the caller's own ids, with the
// capabilities the child needs to mount and then drop everything kept
// ambient, without pretending to be root inside).
func CloneAttr(ns int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if ns&NSUser != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		uid, gid := os.Getuid(), os.Getgid()
		if uid == 0 {
			a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			a.GidMappingsEnableSetgroups = true
		} else {
			a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
			if ns&NSNet != 0 { // to bring lo up for the egress proxy
				a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
			}
		}
	}
	if ns&NSPID != 0 {
		a.Cloneflags |= syscall.CLONE_NEWPID
	}
	if ns&NSMount != 0 {
		a.Cloneflags |= syscall.CLONE_NEWNS
	}
	if ns&NSNet != 0 {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	if ns&NSIPC != 0 {
		a.Cloneflags |= syscall.CLONE_NEWIPC
	}
	if ns&NSUTS != 0 {
		a.Cloneflags |= syscall.CLONE_NEWUTS
	}
	return a
}

// Relay is the helper's entry point as a relay (argv[1] == EntryRelay,
// args: NS, then the child's own arguments from EntrySandbox on). A
// process cloned into a new user namespace cannot share its parent's
// memory (the parent must write its id maps while it runs), so the
// kernel copies the parent's page tables and the parent then takes a
// page fault on the first write to each of its pages: for claw, whose
// heap holds the compiled policies, that cost milliseconds per action,
// paid by whatever claw did next. claw therefore starts this small
// program the cheap way (sharing its memory until the exec), and the
// relay does the clone. It waits for the go-ahead on fd 5 (claw moves it
// into the job's cgroup first, so the child starts inside, unless the
// relay is to join them itself: see below), clones the child with fds
// 0–4, closes its own copies (the pipes' ends belong to the child alone),
// and waits: it exits with the child's exit status, or
// with SIGKILL when the child was killed. Its death kills the child (the
// child's parent-death signal), so killing the relay ends the sandbox.
// A clone that fails is reported on the status fd as stage "start".
//
// Between NS and EntrySandbox may come job cgroup directories (v1), each
// as ArgCgroup followed by the directory: the relay then moves the thread
// that clones the child into each of them before the clone, so that the
// child, and every thread and process it starts, is born inside (a
// thread that moves itself does so without the lock that moving a whole
// process takes: see joinCgroups). A move that fails is reported as stage
// "cgroup", and nothing is cloned.
func Relay(args []string) int {
	runtime.LockOSThread() // the child's parent-death signal follows this thread
	ns, err := strconv.Atoi(firstArg(args))
	var cgroups []string
	for len(args) > 2 && args[1] == ArgCgroup && filepath.IsAbs(args[2]) {
		cgroups = append(cgroups, args[2])
		args = append(args[:1:1], args[3:]...)
	}
	if err != nil || ns < 0 || ns&^(NSUser|NSPID|NSMount|NSNet|NSIPC|NSUTS) != 0 || len(args) < 2 || args[1] != EntrySandbox {
		fmt.Fprintln(os.Stderr, "claw: sandbox: relay: bad arguments")
		return CodeSetup
	}
	var b [1]byte
	n, _ := unix.Read(GoFD, b[:])
	unix.Close(GoFD)
	if n != 1 {
		return CodeSetup // the parent gave up before the clone
	}
	if err := joinCgroups(cgroups); err != nil {
		writeStatus(os.NewFile(StatusFD, "status"), Status{Stage: "cgroup", Code: CodeSetup, UID: -1, Err: err.Error()})
		return CodeSetup
	}
	attr := CloneAttr(ns)
	// The child's parent-death signal is set only after its id maps are
	// written, and inside a PID namespace the child cannot tell that its
	// parent died before that (getppid is always 0 there). The life pipe
	// closes the gap: its write end dies with the relay, and the child
	// looks at the read end once its parent-death signal is in place.
	var life [2]int
	if err := unix.Pipe2(life[:], unix.O_CLOEXEC); err != nil {
		writeStatus(os.NewFile(StatusFD, "status"), Status{Stage: "start", Code: CodeSetup, UID: -1, Err: "life pipe: " + err.Error()})
		return CodeSetup
	}
	pid, err := syscall.ForkExec("/proc/self/exe", append(append([]string{os.Args[0]}, args[1:]...), ArgRelayed), &syscall.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: []uintptr{0, 1, 2, ConfigFD, StatusFD, uintptr(life[0])},
		Sys:   attr,
	})
	unix.Close(life[0])
	if err != nil {
		writeStatus(os.NewFile(StatusFD, "status"), Status{Stage: "start", Code: CodeSetup, UID: -1, Err: "cannot clone the sandbox: " + err.Error()})
		return CodeSetup
	}
	for fd := 0; fd <= StatusFD; fd++ {
		unix.Close(fd)
	}
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		switch {
		case err != nil:
			return CodeSetup
		case ws.Signaled() && ws.Signal() == syscall.SIGKILL:
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		case ws.Signaled():
			return 128 + int(ws.Signal())
		default:
			return ws.ExitStatus()
		}
	}
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
