package executor

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// TestSeccompFilterDecisions runs the compiled filters themselves, in a
// classic BPF interpreter, on the system calls whose refusal in the
// sandbox proves little on its own: without capabilities the kernel
// already answers EPERM to kexec_load, init_module, finit_module and
// reboot, some kernels have no i386 entry to try, and whether the
// kernel itself refuses an SCTP or ICMP socket depends on its modules and
// sysctls. The set-id rules are checked here on every argument the kernel
// reads, garbage in the bits it ignores included. Each case fails if
// its rule left the filter (or, for the other ABIs, the bad-arch action
// were not to kill the process); the controls fail if the interpreter or
// the encoding of the calls were wrong.
func TestSeccompFilterDecisions(t *testing.T) {
	native, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		t.Skipf("no audit arch for %s here", runtime.GOARCH)
	}
	const (
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		eafno  = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
		eproto = unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT)
		allow  = unix.SECCOMP_RET_ALLOW
		kill   = unix.SECCOMP_RET_KILL_PROCESS
	)
	nr := func(name string) uint32 {
		sc, err := seccomp.GetSyscallFromName(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return uint32(sc)
	}
	// nrOpt is the number of a call that some architectures lack
	// (arm64 has no chmod, open, creat or mknod)
	const noSyscall = ^uint32(0)
	nrOpt := func(name string) uint32 {
		if sc, err := seccomp.GetSyscallFromName(name); err == nil && sc >= 0 {
			return uint32(sc)
		}
		return noSyscall
	}
	calls := []call{
		{name: "getpid (control)", nr: nr("getpid"), want: allow},
		{name: "ioctl TCGETS (control)", nr: nr("ioctl"), args: [6]uint64{0, unix.TCGETS}, want: allow},
		{name: "ptrace (control)", nr: nr("ptrace"), want: eperm},
		{name: "process_vm_readv", nr: nr("process_vm_readv"), want: eperm},
		{name: "process_vm_writev", nr: nr("process_vm_writev"), want: eperm},
		{name: "kexec_load", nr: nr("kexec_load"), want: eperm},
		{name: "init_module", nr: nr("init_module"), want: eperm},
		{name: "finit_module", nr: nr("finit_module"), want: eperm},
		{name: "reboot", nr: nr("reboot"), want: eperm},
		{name: "ioctl TIOCLINUX", nr: nr("ioctl"), args: [6]uint64{0, unix.TIOCLINUX}, want: eperm},
		{name: "ioctl TIOCLINUX high bits", nr: nr("ioctl"), args: [6]uint64{0, 1<<32 | unix.TIOCLINUX}, want: eperm},
	}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "386" {
		calls = append(calls, call{name: "modify_ldt", nr: nr("modify_ldt"), want: eperm})
	}
	// the set-id bits, in every call that sets a mode
	const (
		wr      = unix.O_WRONLY | unix.O_CLOEXEC
		creat   = unix.O_CREAT | unix.O_EXCL | wr
		tmpfile = unix.O_TMPFILE | wr
		garbage = 0xdead << 32          // bits above what the kernel reads
		atFDCWD = 1<<32 + unix.AT_FDCWD // AT_FDCWD as the 32-bit int it is
	)
	for _, m := range []uint64{0o4755, 0o2755, 0o6000, 0o4000 | garbage, 0o2000 | garbage} {
		calls = append(calls,
			call{name: fmt.Sprintf("chmod %#o", m), nr: nrOpt("chmod"), args: [6]uint64{0, m}, want: eperm},
			call{name: fmt.Sprintf("fchmod %#o", m), nr: nr("fchmod"), args: [6]uint64{3, m}, want: eperm},
			call{name: fmt.Sprintf("fchmodat %#o", m), nr: nr("fchmodat"), args: [6]uint64{atFDCWD, 0, m}, want: eperm},
			call{name: fmt.Sprintf("fchmodat2 %#o", m), nr: sysFchmodat2, args: [6]uint64{atFDCWD, 0, m, unix.AT_SYMLINK_NOFOLLOW}, want: eperm},
			call{name: fmt.Sprintf("creat %#o", m), nr: nrOpt("creat"), args: [6]uint64{0, m}, want: eperm},
			call{name: fmt.Sprintf("open O_CREAT %#o", m), nr: nrOpt("open"), args: [6]uint64{0, creat, m}, want: eperm},
			call{name: fmt.Sprintf("open O_TMPFILE %#o", m), nr: nrOpt("open"), args: [6]uint64{0, tmpfile, m}, want: eperm},
			call{name: fmt.Sprintf("openat O_CREAT %#o", m), nr: nr("openat"), args: [6]uint64{atFDCWD, 0, creat, m}, want: eperm},
			call{name: fmt.Sprintf("openat O_TMPFILE %#o", m), nr: nr("openat"), args: [6]uint64{atFDCWD, 0, tmpfile, m}, want: eperm},
			call{name: fmt.Sprintf("mknod %#o", m), nr: nrOpt("mknod"), args: [6]uint64{0, unix.S_IFREG | m}, want: eperm},
			call{name: fmt.Sprintf("mknodat %#o", m), nr: nr("mknodat"), args: [6]uint64{atFDCWD, 0, unix.S_IFREG | m}, want: eperm},
		)
	}
	calls = append(calls,
		call{name: "openat2", nr: nr("openat2"), args: [6]uint64{atFDCWD, 0, 0, 24}, want: enosys},
		// controls: modes without the bits, and opens that do not create
		call{name: "fchmodat 01777 (control)", nr: nr("fchmodat"), args: [6]uint64{atFDCWD, 0, 0o1777}, want: allow},
		call{name: "fchmod 0755 (control)", nr: nr("fchmod"), args: [6]uint64{3, 0o755 | garbage}, want: allow},
		call{name: "openat O_CREAT 0644 (control)", nr: nr("openat"), args: [6]uint64{atFDCWD, 0, creat, 0o644}, want: allow},
		call{name: "openat O_RDONLY, stray mode (control)", nr: nr("openat"), args: [6]uint64{atFDCWD, 0, unix.O_RDONLY, 0o6777}, want: allow},
		call{name: "mknodat fifo (control)", nr: nr("mknodat"), args: [6]uint64{atFDCWD, 0, unix.S_IFIFO | 0o644}, want: allow},
	)
	// sockets: none without a network grant; with one, TCP and UDP over
	// IPv4 and IPv6 only, the protocol compared as the int it is
	const nbcx = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	for _, s := range []struct {
		name          string
		fam, typ, pro uint64
		net           uint32
	}{
		{"tcp", unix.AF_INET, unix.SOCK_STREAM, 0, allow},
		{"tcp explicit", unix.AF_INET, unix.SOCK_STREAM | nbcx, unix.IPPROTO_TCP, allow},
		{"tcp6", unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP, allow},
		{"udp", unix.AF_INET, unix.SOCK_DGRAM | nbcx, 0, allow},
		{"udp6 explicit", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP, allow},
		{"tcp, protocol high bits", unix.AF_INET, unix.SOCK_STREAM, 1<<32 | unix.IPPROTO_TCP, allow},
		{"udplite", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE, eproto},
		{"udplite6", unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDPLITE, eproto},
		{"sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, eproto},
		{"sctp seqpacket", unix.AF_INET6, unix.SOCK_SEQPACKET, unix.IPPROTO_SCTP, eproto},
		{"icmp datagram", unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP, eproto},
		{"icmpv6 datagram", unix.AF_INET6, unix.SOCK_DGRAM | nbcx, unix.IPPROTO_ICMPV6, eproto},
		{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, eproto},
		{"raw, protocol 0", unix.AF_INET6, unix.SOCK_RAW | nbcx, 0, eproto},
		{"packet type", unix.AF_INET, unix.SOCK_PACKET, 0, eproto},
		{"dccp", unix.AF_INET, unix.SOCK_DCCP, unix.IPPROTO_DCCP, eproto},
		{"mptcp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, eproto},
		{"tcp, protocol 0x1006", unix.AF_INET, unix.SOCK_STREAM, 0x1000 | unix.IPPROTO_TCP, eproto},
		{"negative protocol", unix.AF_INET, unix.SOCK_STREAM, 0xffffffff, eproto},
		{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0, eafno},
		{"netlink", unix.AF_NETLINK, unix.SOCK_DGRAM, 0, eafno},
	} {
		calls = append(calls, call{name: "socket " + s.name, nr: nr("socket"), args: [6]uint64{s.fam, s.typ, s.pro}, want: eafno, net: s.net})
	}
	calls = append(calls, edgeCalls(nr, nrOpt)...)
	if runtime.GOARCH == "amd64" {
		calls = append(calls,
			call{name: "i386 getpid", arch: unix.AUDIT_ARCH_I386, nr: 20, want: kill},
			call{name: "x32 getpid", nr: 0x40000000 | nr("getpid"), want: kill},
		)
	}
	for _, netOn := range []bool{false, true} {
		prog, err := seccompProgram(netOn)
		must(t, err)
		for _, c := range calls {
			if c.nr == noSyscall {
				continue // not a call of this architecture
			}
			if c.arch == 0 {
				c.arch = native
			}
			want := c.want
			if netOn && c.net != 0 {
				want = c.net
			}
			got, err := runBPF(prog, seccompData(c.nr, c.arch, c.args))
			if err != nil || got != want {
				t.Errorf("network %v, %s: filter returns %#x (%v), want %#x", netOn, c.name, got, err, want)
			}
		}
	}
}

// call is one system call a filter decides on, and the expected answer.
type call struct {
	name string
	arch uint32
	nr   uint32
	args [6]uint64
	want uint32
	net  uint32 // the answer with a network grant, when it differs
}

// edgeCalls are the decisions on what gets past Landlock's grants, the
// same with and without a network grant: datagram socketpairs, listen,
// TCP Fast Open, read leases, extended attribute reads by path and
// inotify, each with its controls (a 32-bit compare: garbage in the
// upper half of an int argument changes nothing).
func edgeCalls(nr, nrOpt func(string) uint32) []call {
	const (
		eperm   = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enotsup = unix.SECCOMP_RET_ERRNO | uint32(unix.EOPNOTSUPP)
		enosys  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		eproto  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT)
		eafno   = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
		allow   = unix.SECCOMP_RET_ALLOW
		garbage = 0xdead << 32
		nbcx    = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	)
	cs := []call{
		{name: "socketpair unix stream (control)", nr: nr("socketpair"), args: [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM | nbcx}, want: allow},
		{name: "socketpair unix seqpacket (control)", nr: nr("socketpair"), args: [6]uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET}, want: allow},
		{name: "socketpair unix dgram", nr: nr("socketpair"), args: [6]uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, want: eproto},
		{name: "socketpair unix dgram cloexec", nr: nr("socketpair"), args: [6]uint64{unix.AF_UNIX, unix.SOCK_DGRAM | nbcx}, want: eproto},
		{name: "socketpair unix raw", nr: nr("socketpair"), args: [6]uint64{unix.AF_UNIX, unix.SOCK_RAW}, want: eproto},
		{name: "socketpair unix type 0", nr: nr("socketpair"), args: [6]uint64{unix.AF_UNIX, 0}, want: eproto},
		{name: "socketpair inet stream", nr: nr("socketpair"), args: [6]uint64{unix.AF_INET, unix.SOCK_STREAM}, want: eafno},
		{name: "listen", nr: nr("listen"), args: [6]uint64{3, 1}, want: eperm},
		{name: "sendto (control)", nr: nr("sendto"), args: [6]uint64{3, 0, 1, unix.MSG_NOSIGNAL}, want: allow},
		{name: "sendto MSG_FASTOPEN", nr: nr("sendto"), args: [6]uint64{3, 0, 1, msgFastOpen}, want: enotsup},
		{name: "sendto MSG_FASTOPEN|MSG_NOSIGNAL, high bits", nr: nr("sendto"), args: [6]uint64{3, 0, 1, garbage | msgFastOpen | unix.MSG_NOSIGNAL}, want: enotsup},
		{name: "sendmsg (control)", nr: nr("sendmsg"), args: [6]uint64{3, 0, unix.MSG_DONTWAIT}, want: allow},
		{name: "sendmsg MSG_FASTOPEN", nr: nr("sendmsg"), args: [6]uint64{3, 0, msgFastOpen}, want: enotsup},
		{name: "sendmmsg MSG_FASTOPEN", nr: nr("sendmmsg"), args: [6]uint64{3, 0, 1, msgFastOpen}, want: enotsup},
		{name: "setsockopt TCP_FASTOPEN_CONNECT", nr: nr("setsockopt"), args: [6]uint64{3, unix.IPPROTO_TCP, tcpFastOpenConnect}, want: enotsup},
		{name: "setsockopt TCP_FASTOPEN_CONNECT, high bits", nr: nr("setsockopt"), args: [6]uint64{3, garbage | unix.IPPROTO_TCP, garbage | tcpFastOpenConnect}, want: enotsup},
		{name: "setsockopt TCP_NODELAY (control)", nr: nr("setsockopt"), args: [6]uint64{3, unix.IPPROTO_TCP, unix.TCP_NODELAY}, want: allow},
		{name: "setsockopt SOL_SOCKET 30 (control)", nr: nr("setsockopt"), args: [6]uint64{3, unix.SOL_SOCKET, tcpFastOpenConnect}, want: allow},
		{name: "fcntl F_SETLEASE", nr: nr("fcntl"), args: [6]uint64{3, unix.F_SETLEASE, unix.F_RDLCK}, want: eperm},
		{name: "fcntl F_SETLEASE, high bits", nr: nr("fcntl"), args: [6]uint64{3, garbage | unix.F_SETLEASE, unix.F_WRLCK}, want: eperm},
		{name: "fcntl F_GETLEASE (control)", nr: nr("fcntl"), args: [6]uint64{3, unix.F_GETLEASE}, want: allow},
		{name: "fcntl F_SETFL (control)", nr: nr("fcntl"), args: [6]uint64{3, unix.F_SETFL, unix.O_NONBLOCK}, want: allow},
		{name: "fgetxattr (control)", nr: nr("fgetxattr"), want: allow},
		{name: "setxattr (control: the read-only remount answers)", nr: nr("setxattr"), want: allow},
		{name: "getxattrat", nr: sysGetxattrat, want: enotsup},
		{name: "listxattrat", nr: sysListxattrat, want: enotsup},
		{name: "inotify_init", nr: nrOpt("inotify_init"), want: enosys},
	}
	for _, n := range []string{"getxattr", "lgetxattr", "listxattr", "llistxattr"} {
		cs = append(cs, call{name: n, nr: nr(n), want: enotsup})
	}
	for _, n := range []string{"inotify_init1", "inotify_add_watch"} {
		cs = append(cs, call{name: n, nr: nr(n), want: enosys})
	}
	return cs
}

// seccompData lays out struct seccomp_data (nr, arch, instruction
// pointer, six arguments) as the 32-bit words a filter loads.
func seccompData(nr, arch uint32, args [6]uint64) []uint32 {
	b := make([]byte, 64)
	binary.NativeEndian.PutUint32(b[0:], nr)
	binary.NativeEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.NativeEndian.PutUint64(b[16+8*i:], a)
	}
	w := make([]uint32, 16)
	for i := range w {
		w[i] = binary.NativeEndian.Uint32(b[4*i:])
	}
	return w
}

// runBPF interprets a classic BPF program (struct sock_filter entries, as
// the kernel takes them) on a seccomp_data and returns its verdict.
func runBPF(prog []byte, data []uint32) (uint32, error) {
	v, _, err := runBPFSteps(prog, data)
	return v, err
}

// runBPFSteps is runBPF that also counts the instructions it ran.
func runBPFSteps(prog []byte, data []uint32) (verdict uint32, steps int, err error) {
	var a, x uint32
	var mem [16]uint32
	n := len(prog) / 8
	for pc := 0; pc < n; pc++ {
		steps++
		ins := prog[8*pc:]
		code := binary.NativeEndian.Uint16(ins)
		jt, jf, k := int(ins[2]), int(ins[3]), binary.NativeEndian.Uint32(ins[4:])
		operand := k
		if code&unix.BPF_X != 0 {
			operand = x
		}
		switch code & 0x07 {
		case unix.BPF_LD, unix.BPF_LDX:
			var v uint32
			switch code & 0xe0 {
			case unix.BPF_ABS:
				if k%4 != 0 || int(k/4) >= len(data) {
					return 0, steps, fmt.Errorf("pc %d: load at %d", pc, k)
				}
				v = data[k/4]
			case unix.BPF_IMM:
				v = k
			case unix.BPF_MEM:
				v = mem[k%16]
			case unix.BPF_LEN:
				v = uint32(4 * len(data))
			default:
				return 0, steps, fmt.Errorf("pc %d: load mode %#x", pc, code)
			}
			if code&0x07 == unix.BPF_LD {
				a = v
			} else {
				x = v
			}
		case unix.BPF_ST:
			mem[k%16] = a
		case unix.BPF_STX:
			mem[k%16] = x
		case unix.BPF_ALU:
			switch code & 0xf0 {
			case unix.BPF_ADD:
				a += operand
			case unix.BPF_SUB:
				a -= operand
			case unix.BPF_AND:
				a &= operand
			case unix.BPF_OR:
				a |= operand
			case unix.BPF_XOR:
				a ^= operand
			case unix.BPF_LSH:
				a <<= operand
			case unix.BPF_RSH:
				a >>= operand
			case unix.BPF_NEG:
				a = -a
			default:
				return 0, steps, fmt.Errorf("pc %d: alu op %#x", pc, code)
			}
		case unix.BPF_JMP:
			var taken bool
			switch code & 0xf0 {
			case unix.BPF_JA:
				pc += int(k)
				continue
			case unix.BPF_JEQ:
				taken = a == operand
			case unix.BPF_JGT:
				taken = a > operand
			case unix.BPF_JGE:
				taken = a >= operand
			case unix.BPF_JSET:
				taken = a&operand != 0
			default:
				return 0, steps, fmt.Errorf("pc %d: jump op %#x", pc, code)
			}
			if taken {
				pc += jt
			} else {
				pc += jf
			}
		case unix.BPF_RET:
			if code&0x18 == unix.BPF_A {
				return a, steps, nil
			}
			return k, steps, nil
		case unix.BPF_MISC:
			if code&0xf8 == unix.BPF_TXA {
				a = x
			} else {
				x = a
			}
		}
	}
	return 0, steps, fmt.Errorf("no return in %d instructions", n)
}

// TestSeccompTree: the programs are compiled as a binary tree of the call
// numbers, which decides any call in a few dozen instructions (the kernel
// runs the program for every call number as it loads it, and for every
// call the command makes), and they decide every call number, of each
// architecture the filter knows and of others, on every argument pattern
// tried, as the list of rules does.
func TestSeccompTree(t *testing.T) {
	native, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		t.Skipf("no audit arch for %s here", runtime.GOARCH)
	}
	args := [][6]uint64{{}, {^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)},
		{unix.AF_UNIX, unix.SOCK_DGRAM, 0o4755, unix.O_CREAT, 0o6000}, {unix.AF_INET, unix.SOCK_STREAM, unix.O_TMPFILE, 0o4000, unix.O_CREAT}}
	for _, netOn := range []bool{false, true} {
		bpfMu.Lock() // seccompProgram reads optimize under it
		tree, err := buildSeccomp(netOn)
		was := optimize
		optimize = false
		list, lerr := buildSeccomp(netOn)
		optimize = was
		bpfMu.Unlock()
		must(t, err)
		must(t, lerr)
		most, total := map[string]int{}, map[string]int{}
		for _, arch := range []uint32{native, unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_ARM} {
			for nr := uint32(0); nr < 1100; nr++ {
				for _, nrs := range []uint32{nr, nr | 0x40000000} {
					for _, a := range args {
						d := seccompData(nrs, arch, a)
						got, steps, err := runBPFSteps(tree, d)
						want, listSteps, lerr := runBPFSteps(list, d)
						if err != nil || lerr != nil || got != want {
							t.Fatalf("network %v, arch %#x, call %d, args %x: tree %#x (%v), list %#x (%v)", netOn, arch, nrs, a, got, err, want, lerr)
						}
						most["tree"] = max(most["tree"], steps)
						most["list"] = max(most["list"], listSteps)
						if arch == native && a == args[0] {
							total["tree"] += steps
							total["list"] += listSteps
						}
					}
				}
			}
		}
		t.Logf("network %v: up to %d instructions, %d on average (the list %d, %d)", netOn, most["tree"], total["tree"]/2200, most["list"], total["list"]/2200)
		if total["tree"]/2200 > 32 {
			t.Errorf("network %v: the program runs %d instructions for a call on average (the list %d)", netOn, total["tree"]/2200, total["list"]/2200)
		}
	}
}
