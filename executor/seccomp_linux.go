package executor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The seccomp policy is default-allow with a deny list (Landlock and the
// mount namespace do the filesystem; seccomp removes kernel attack surface
// and the ways around them). It is compiled once per network mode with
// libseccomp in the parent and handed to the child as a BPF program, so the
// child never links libseccomp and never compiles anything.

var denyEPERM = []string{
	// namespaces and mounts
	"unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	// system administration
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
	"uselib", "_sysctl", "lookup_dcookie", "vhangup", "open_by_handle_at",
	"name_to_handle_at", "nfsservctl", "sysfs", "ustat",
	// other processes
	"ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open", "kcmp",
	"pidfd_getfd", "process_madvise",
	// attack surface
	"add_key", "request_key", "keyctl", "bpf", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"mbind", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages", "move_pages",
	"fanotify_init", "lsm_set_self_attr", "modify_ldt", // x86 LDT: old attack surface, nothing needs it
}

// ENOSYS makes libc fall back to calls the filter can inspect: clone3's
// flags and openat2's mode are in structs a filter cannot read.
var denyENOSYS = []string{"clone3", "openat2"}

const (
	cloneNewFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	addrNoRandomize = 0x0040000
	afMax           = 64 // above every family the kernel knows

	// sysFchmodat2 is fchmodat2's number on amd64 and arm64, for a
	// libseccomp too old to know the name.
	sysFchmodat2 = 452
	// oTmpfile is O_TMPFILE without the O_DIRECTORY it includes.
	oTmpfile = unix.O_TMPFILE &^ unix.O_DIRECTORY
)

// fixedSyscallNumbers: sysFchmodat2 is right for this architecture.
var fixedSyscallNumbers = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

// setIDBits are the mode bits refused wherever a mode is set.
var setIDBits = []uint64{unix.S_ISUID, unix.S_ISGID}

// modeRules are the calls that set a file's mode: the argument holding it
// and, for the open family, the one holding the flags that make the
// kernel use it (it ignores the mode without O_CREAT or O_TMPFILE; -1:
// always used). A sandboxed uid 0 creates files owned by root on the host
// (the user namespace maps uids one to one), and an owner may set the
// setuid bit without any capability: refusing the set-id bits here keeps
// a setuid-root program from being left in a write grant.
var modeRules = []struct {
	name        string
	nr          int // used when libseccomp does not know the name; 0: none
	mode, flags int
}{
	{name: "chmod", mode: 1, flags: -1},
	{name: "fchmod", mode: 1, flags: -1},
	{name: "fchmodat", mode: 2, flags: -1},
	{name: "fchmodat2", nr: sysFchmodat2, mode: 2, flags: -1},
	{name: "creat", mode: 1, flags: -1},
	{name: "open", mode: 2, flags: 1},
	{name: "openat", mode: 3, flags: 2},
	{name: "mknod", mode: 1, flags: -1},
	{name: "mknodat", mode: 2, flags: -1},
}

type bpfKey struct{ net bool }

var (
	bpfMu    sync.Mutex
	bpfCache = map[bpfKey][]byte{}
)

// seccompProgram returns the compiled filter for the network mode.
func seccompProgram(net bool) ([]byte, error) {
	bpfMu.Lock()
	defer bpfMu.Unlock()
	if p, ok := bpfCache[bpfKey{net}]; ok {
		return p, nil
	}
	p, err := compileSeccomp(net)
	if err != nil {
		return nil, err
	}
	bpfCache[bpfKey{net}] = p
	return p, nil
}

// compileSeccomp compiles a program; tests replace it.
var compileSeccomp = buildSeccomp

// optimize: compile a tree (see buildSeccomp), read under bpfMu; tests
// compare it with the list.
var optimize = true

func buildSeccomp(net bool) ([]byte, error) {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	defer f.Release()
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return nil, fmt.Errorf("seccomp bad-arch action: %w", err)
	}
	if err := f.SetNoNewPrivsBit(false); err != nil { // the child sets it itself
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	// A binary tree of the system call numbers rather than a list: the
	// kernel runs the program for every call number when it loads it (to
	// cache the calls it always allows), and for every call it does not.
	// The list took a new child about 150 us to load, the tree 55 us. A
	// libseccomp too old for it keeps the list, the same decisions.
	if optimize {
		_ = f.SetOptimize(2)
	}
	eperm := seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	addNr := func(name string, nr int, act seccomp.ScmpAction, conds ...seccomp.ScmpCondition) error {
		sc, err := seccomp.GetSyscallFromName(name)
		if err != nil {
			if nr == 0 || !fixedSyscallNumbers {
				return nil // not a syscall of this architecture
			}
			sc = seccomp.ScmpSyscall(nr)
		}
		if len(conds) == 0 {
			err = f.AddRule(sc, act)
		} else {
			err = f.AddRuleConditional(sc, act, conds)
		}
		if err != nil {
			return fmt.Errorf("seccomp rule %s: %w", name, err)
		}
		return nil
	}
	add := func(name string, act seccomp.ScmpAction, conds ...seccomp.ScmpCondition) error {
		return addNr(name, 0, act, conds...)
	}
	masked := func(arg uint, mask, value uint64) seccomp.ScmpCondition {
		// operand order: mask first, then the value (see the package notes)
		c, err := seccomp.MakeCondition(arg, seccomp.CompareMaskedEqual, mask, value)
		if err != nil {
			panic(err)
		}
		return c
	}
	for _, n := range denyEPERM {
		if err := add(n, eperm); err != nil {
			return nil, err
		}
	}
	for _, n := range denyENOSYS {
		if err := add(n, seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))); err != nil {
			return nil, err
		}
	}
	// clone with any namespace flag
	for bit := uint64(1); bit != 0 && bit <= 1<<31; bit <<= 1 {
		if bit&cloneNewFlags == 0 {
			continue
		}
		if err := add("clone", eperm, masked(0, bit, bit)); err != nil {
			return nil, err
		}
	}
	// legacy TTY input injection, 32-bit compare (CVE-2019-10063)
	for _, cmd := range []uint64{unix.TIOCSTI, unix.TIOCLINUX} {
		if err := add("ioctl", eperm, masked(1, 0xffffffff, cmd)); err != nil {
			return nil, err
		}
	}
	if err := add("personality", eperm, masked(0, addrNoRandomize, addrNoRandomize)); err != nil {
		return nil, err
	}
	// no setuid or setgid bit in any mode set: one rule per bit (and per
	// flag of the open family), as masked equality compares one value
	for _, r := range modeRules {
		for _, bit := range setIDBits {
			if r.flags < 0 {
				if err := addNr(r.name, r.nr, eperm, masked(uint(r.mode), bit, bit)); err != nil {
					return nil, err
				}
				continue
			}
			for _, flag := range []uint64{unix.O_CREAT, oTmpfile} {
				if err := addNr(r.name, r.nr, eperm, masked(uint(r.flags), flag, flag), masked(uint(r.mode), bit, bit)); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := addEdgeRules(add, addNr, masked); err != nil {
		return nil, err
	}
	eafno := seccomp.ActErrno.SetReturnCode(int16(unix.EAFNOSUPPORT))
	if !net {
		// no sockets at all: not even AF_UNIX, so host sockets (docker,
		// ssh-agent) stay out of reach; anonymous stream socketpairs stay.
		if err := add("socket", eafno); err != nil {
			return nil, err
		}
		ne, _ := seccomp.MakeCondition(0, seccomp.CompareNotEqual, unix.AF_UNIX)
		if err := add("socketpair", eafno, ne); err != nil {
			return nil, err
		}
	} else {
		// network granted: AF_INET and AF_INET6 only, and of those TCP
		// and UDP only: no raw, ICMP, SCTP, UDP-Lite or MPTCP sockets
		// (Landlock's TCP rules do not cover MPTCP).
		for fam := uint64(0); fam < afMax; fam++ {
			if fam == unix.AF_INET || fam == unix.AF_INET6 {
				continue
			}
			if err := add("socket", eafno, masked(0, 0xffffffff, fam)); err != nil {
				return nil, err
			}
		}
		eproto := seccomp.ActErrno.SetReturnCode(int16(unix.EPROTONOSUPPORT))
		// the type without SOCK_NONBLOCK and SOCK_CLOEXEC (the kernel
		// refuses any other flag): stream or datagram
		for _, b := range blocksExcept(sockTypeMask, unix.SOCK_STREAM, unix.SOCK_DGRAM) {
			if err := add("socket", eproto, masked(1, b.mask, b.value)); err != nil {
				return nil, err
			}
		}
		// the protocol, an int: the default one, TCP or UDP
		for _, b := range blocksExcept(0xffffffff, 0, unix.IPPROTO_TCP, unix.IPPROTO_UDP) {
			if err := add("socket", eproto, masked(2, b.mask, b.value)); err != nil {
				return nil, err
			}
		}
		ne, _ := seccomp.MakeCondition(0, seccomp.CompareNotEqual, unix.AF_UNIX)
		if err := add("socketpair", eafno, ne); err != nil {
			return nil, err
		}
	}
	prog, err := exportBPF(f)
	if err != nil {
		return nil, fmt.Errorf("seccomp export: %w", err)
	}
	if len(prog) == 0 || len(prog)%8 != 0 {
		return nil, errors.New("seccomp export: malformed program")
	}
	return prog, nil
}

// The edges of the grants, in both network modes: the calls that reach
// past Landlock without a path or port it sees.
const (
	// msgFastOpen (MSG_FASTOPEN) makes sendto, sendmsg and sendmmsg
	// connect a TCP socket without connect(2), and so without Landlock's
	// connect hook.
	msgFastOpen = 0x20000000
	// tcpFastOpenConnect is TCP_FASTOPEN_CONNECT: connect(2) itself is
	// checked, but a client that asks for Fast Open gets the answer of
	// a kernel with it off, and uses plain connect.
	tcpFastOpenConnect = 30
	// sysGetxattrat and sysListxattrat (Linux 6.13) are the same number
	// on every architecture, for a libseccomp too old to know them.
	sysGetxattrat  = 464
	sysListxattrat = 465
)

// xattrReads read extended attributes by path. Landlock does not check
// them, so they would read the attributes of any file the sandbox can
// name; the answer is that of a filesystem without extended attributes,
// which every tool takes as "none". fgetxattr and flistxattr stay: they
// need a descriptor open for reading (an O_PATH one is refused), which
// Landlock did check.
var xattrReads = []struct {
	name string
	nr   int
}{{"getxattr", 0}, {"lgetxattr", 0}, {"listxattr", 0}, {"llistxattr", 0},
	{"getxattrat", sysGetxattrat}, {"listxattrat", sysListxattrat}}

// inotifyCalls watch a path: Landlock does not check the watch, and
// seccomp cannot see the path, so inotify is refused as a kernel
// without it would (ENOSYS): watchers fall back to polling.
var inotifyCalls = []string{"inotify_init", "inotify_init1", "inotify_add_watch"}

type (
	addFunc   func(name string, act seccomp.ScmpAction, conds ...seccomp.ScmpCondition) error
	addNrFunc func(name string, nr int, act seccomp.ScmpAction, conds ...seccomp.ScmpCondition) error
)

// addEdgeRules adds the rules for what gets past Landlock's grants in
// both network modes: host unix sockets through a datagram socketpair,
// TCP Fast Open past the connect rules, listening on an autobound port,
// read leases that stall host writers, extended attributes and inotify
// watches outside the grants.
func addEdgeRules(add addFunc, addNr addNrFunc, masked func(arg uint, mask, value uint64) seccomp.ScmpCondition) error {
	eperm := seccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	enotsup := seccomp.ActErrno.SetReturnCode(int16(unix.EOPNOTSUPP))
	enosys := seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))
	eproto := seccomp.ActErrno.SetReturnCode(int16(unix.EPROTONOSUPPORT))
	// socketpair: stream and seqpacket only. A datagram pair's sendto
	// with an address reaches any host datagram socket by its path
	// (/dev/log, journald, systemd's notify socket); SOCK_RAW is a
	// datagram socket in AF_UNIX. A stream pair refuses an address
	// (EISCONN) and a seqpacket pair ignores it; connect on either is
	// EISCONN.
	for _, b := range blocksExcept(sockTypeMask, unix.SOCK_STREAM, unix.SOCK_SEQPACKET) {
		if err := add("socketpair", eproto, masked(1, b.mask, b.value)); err != nil {
			return err
		}
	}
	// no listening socket: a Spec grants no port to listen on, and
	// listen(2) autobinds a free port without bind(2)'s Landlock check
	if err := add("listen", eperm); err != nil {
		return err
	}
	// TCP Fast Open: the flags, an int, wherever a send takes them
	for _, c := range []struct {
		name string
		arg  uint
	}{{"sendto", 3}, {"sendmsg", 2}, {"sendmmsg", 3}} {
		if err := add(c.name, enotsup, masked(c.arg, msgFastOpen, msgFastOpen)); err != nil {
			return err
		}
	}
	if err := add("setsockopt", enotsup, masked(1, 0xffffffff, unix.IPPROTO_TCP), masked(2, 0xffffffff, tcpFastOpenConnect)); err != nil {
		return err
	}
	// read leases: a lease holder that ignores the break stalls every
	// writer of the file for lease-break-time; the command, an int
	for _, name := range []string{"fcntl", "fcntl64"} {
		if err := add(name, eperm, masked(1, 0xffffffff, unix.F_SETLEASE)); err != nil {
			return err
		}
	}
	for _, x := range xattrReads {
		if err := addNr(x.name, x.nr, enotsup); err != nil {
			return err
		}
	}
	for _, n := range inotifyCalls {
		if err := add(n, enosys); err != nil {
			return err
		}
	}
	return nil
}

// sockTypeMask is the type part of socket's type argument (SOCK_TYPE_MASK).
const sockTypeMask = 0xf

// block is the set of values v with v&mask == value.
type block struct{ mask, value uint64 }

// blocksExcept covers every value under mask (a run of low bits) but the
// kept ones with aligned power-of-two blocks: masked-equality rules that
// refuse all the rest, the way a filter that allows by default must.
func blocksExcept(mask uint64, keep ...uint64) []block {
	var out []block
	var split func(value, size uint64)
	split = func(value, size uint64) {
		kept := false
		for _, k := range keep {
			if k >= value && k-value < size {
				kept = true
			}
		}
		switch {
		case !kept:
			out = append(out, block{mask &^ (size - 1), value})
		case size > 1:
			split(value, size/2)
			split(value+size/2, size/2)
		}
	}
	split(0, mask+1)
	return out
}

// exportBPF writes the program to a memfd (libseccomp before 2.6 has no
// in-memory export) and reads it back.
func exportBPF(f *seccomp.ScmpFilter) ([]byte, error) {
	fd, err := unix.MemfdCreate("claw-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	mf := os.NewFile(uintptr(fd), "claw-seccomp")
	defer mf.Close()
	if err := f.ExportBPF(mf); err != nil {
		return nil, err
	}
	if _, err := mf.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(mf, 1<<20))
}
