// Command probe tries one thing the sandbox must refuse and prints
// "allowed" or "denied ERRNO" (the escape suite's instrument). It is built
// without cgo by the executor's tests.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: probe WHAT [ARGS]")
		os.Exit(2)
	}
	err := run(os.Args[1], os.Args[2:])
	if err == nil {
		fmt.Println("allowed")
		return
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		fmt.Println("denied", unix.ErrnoName(en))
		return
	}
	fmt.Println("denied", err)
}

func arg(a []string, i int) string {
	if i < len(a) {
		return a[i]
	}
	return ""
}

func run(what string, a []string) error {
	switch what {
	case "write":
		return os.WriteFile(arg(a, 0), []byte("pwned\n"), 0o644)
	case "append":
		f, err := os.OpenFile(arg(a, 0), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Write([]byte("pwned\n"))
		return err
	case "truncate":
		return os.Truncate(arg(a, 0), 0)
	case "read":
		_, err := os.ReadFile(arg(a, 0))
		return err
	case "list": // read a directory's names
		_, err := os.ReadDir(arg(a, 0))
		return err
	case "remove":
		return unix.Unlink(arg(a, 0))
	case "rename":
		return unix.Rename(arg(a, 0), arg(a, 1))
	case "link":
		return unix.Link(arg(a, 0), arg(a, 1))
	case "symlink-read": // make ws/link -> target, then read through it
		if err := unix.Symlink(arg(a, 0), arg(a, 1)); err != nil {
			return err
		}
		_, err := os.ReadFile(arg(a, 1))
		return err
	case "chmod":
		return unix.Chmod(arg(a, 0), 0o777)
	case "chown":
		return unix.Chown(arg(a, 0), 65534, 65534)
	case "utimes":
		return unix.UtimesNano(arg(a, 0), []unix.Timespec{{Sec: 1}, {Sec: 1}})
	case "mknod-block":
		return unix.Mknod(arg(a, 0), unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0)))
	case "mknod-char":
		return unix.Mknod(arg(a, 0), unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3)))
	case "exec":
		return unix.Exec(arg(a, 0), []string{arg(a, 0)}, nil)
	case "tcp": // connect host:port over IPv4
		return connect(unix.AF_INET, unix.SOCK_STREAM, 0, arg(a, 0))
	case "tcp6":
		return connect(unix.AF_INET6, unix.SOCK_STREAM, 0, arg(a, 0))
	case "mptcp":
		return connect(unix.AF_INET, unix.SOCK_STREAM, 262, arg(a, 0))
	case "udp":
		return connect(unix.AF_INET, unix.SOCK_DGRAM, 0, arg(a, 0))
	case "raw":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "netlink":
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "socket-highbit": // AF_INET with garbage in the upper 32 bits
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, 1<<32|unix.AF_INET, unix.SOCK_STREAM, 0)
		if e != 0 {
			return e
		}
		unix.Close(int(fd))
		return nil
	case "listen":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		return unix.Listen(fd, 1)
	case "unix": // connect a pathname unix socket
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: arg(a, 0)})
	case "abstract":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + arg(a, 0)})
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return err
	case "ptrace":
		pid, _ := strconv.Atoi(arg(a, 0))
		return unix.PtraceAttach(pid)
	case "kill":
		pid, _ := strconv.Atoi(arg(a, 0))
		return unix.Kill(pid, 0)
	case "mount":
		return unix.Mount("tmpfs", arg(a, 0), "tmpfs", 0, "")
	case "unshare-user":
		return unix.Unshare(unix.CLONE_NEWUSER)
	case "unshare-net":
		return unix.Unshare(unix.CLONE_NEWNET)
	case "clone-newuser":
		pid, _, e := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			return e
		}
		if pid == 0 {
			unix.Exit(0)
		}
		var ws unix.WaitStatus
		unix.Wait4(int(pid), &ws, 0, nil)
		return nil
	case "clone3":
		type cloneArgs struct{ flags, pidfd, childTid, parentTid, exitSignal, stack, stackSize, tls, setTid, setTidSize, cgroup uint64 }
		ca := cloneArgs{flags: unix.CLONE_NEWUSER, exitSignal: uint64(unix.SIGCHLD)}
		pid, _, e := unix.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&ca)), unsafe.Sizeof(ca), 0)
		if e != 0 {
			return e
		}
		if pid == 0 {
			unix.Exit(0)
		}
		return nil
	case "chroot":
		return unix.Chroot("/")
	case "keyctl":
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, true)
		return err
	case "bpf":
		_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0)
		return errnoOrNil(e)
	case "io_uring":
		var params [120]byte
		fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		return errnoOrNil(e)
	case "perf":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
		attr.Size = uint32(unsafe.Sizeof(attr))
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "userfaultfd":
		fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		return errnoOrNil(e)
	case "open_by_handle_at":
		_, _, e := unix.Syscall(unix.SYS_OPEN_BY_HANDLE_AT, ^uintptr(99), 0, 0)
		return errnoOrNil(e)
	case "tiocsti", "tiocsti-highbit":
		fd, err := unix.Open(arg(a, 0), unix.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", arg(a, 0), err)
		}
		defer unix.Close(fd)
		cmd := uintptr(unix.TIOCSTI)
		if what == "tiocsti-highbit" {
			cmd |= 1 << 32
		}
		c := byte('x')
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), cmd, uintptr(unsafe.Pointer(&c)))
		return errnoOrNil(e)
	case "setuid-root": // a setuid binary (or any exec) must not regain root capabilities
		return unix.Setuid(0)
	case "sysv-shm": // attach the host's segment with this key and write it
		key, _ := strconv.ParseInt(arg(a, 0), 0, 64)
		id, err := unix.SysvShmGet(int(key), 0, 0)
		if err != nil {
			return err
		}
		b, err := unix.SysvShmAttach(id, 0, 0)
		if err != nil {
			return err
		}
		copy(b, "written by the sandbox")
		return unix.SysvShmDetach(b)
	case "sysv-sem": // remove the host's semaphore set with this key
		key, _ := strconv.ParseInt(arg(a, 0), 0, 64)
		id, _, e := unix.Syscall(unix.SYS_SEMGET, uintptr(key), 0, 0)
		if e != 0 {
			return e
		}
		_, _, e = unix.Syscall6(unix.SYS_SEMCTL, id, 0, unix.IPC_RMID, 0, 0, 0)
		return errnoOrNil(e)
	case "sysv-msg": // send to the host's message queue with this key
		key, _ := strconv.ParseInt(arg(a, 0), 0, 64)
		id, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), 0, 0)
		if e != 0 {
			return e
		}
		msg := [16]byte{0: 1, 8: 'x'} // type 1, one byte
		_, _, e = unix.Syscall6(unix.SYS_MSGSND, id, uintptr(unsafe.Pointer(&msg)), 1, unix.IPC_NOWAIT, 0, 0)
		return errnoOrNil(e)
	case "unix-pair": // TYPE MODE PATH: reach a host unix socket from a socketpair
		return unixPair(arg(a, 0), arg(a, 1), arg(a, 2))
	case "listen-autobind": // listen without bind: the kernel picks a port
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Listen(fd, 1)
	case "fastopen": // MODE HOST:PORT: connect through TCP Fast Open
		return fastOpen(arg(a, 0), arg(a, 1))
	case "lease": // take a read lease on a file
		fd, err := unix.Open(arg(a, 0), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open: %w", err)
		}
		defer unix.Close(fd)
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		return err
	case "xattr": // CALL PATH NAME: read an extended attribute (or the list)
		return xattr(arg(a, 0), arg(a, 1), arg(a, 2))
	case "inotify": // watch a directory
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, err = unix.InotifyAddWatch(fd, arg(a, 0), unix.IN_ALL_EVENTS)
		return err
	case "stat":
		var st unix.Stat_t
		return unix.Stat(arg(a, 0), &st)
	case "fd": // read an inherited descriptor
		n, _ := strconv.Atoi(arg(a, 0))
		var b [1]byte
		_, err := unix.Read(n, b[:])
		return err
	}
	return fmt.Errorf("unknown probe %q", what)
}

func errnoOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func connect(family, typ, proto int, hostport string) error {
	fd, err := unix.Socket(family, typ, proto)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	host, portS, _ := cut(hostport)
	port, _ := strconv.Atoi(portS)
	var sa unix.Sockaddr
	if family == unix.AF_INET6 {
		sa = &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
	} else {
		ip := [4]byte{127, 0, 0, 1}
		if host != "127.0.0.1" && host != "" {
			fmt.Sscanf(host, "%d.%d.%d.%d", &ip[0], &ip[1], &ip[2], &ip[3])
		}
		sa = &unix.SockaddrInet4{Port: port, Addr: ip}
	}
	if typ == unix.SOCK_DGRAM {
		return unix.Sendto(fd, []byte("x"), 0, sa)
	}
	return unix.Connect(fd, sa)
}

func cut(hp string) (string, string, bool) {
	for i := len(hp) - 1; i >= 0; i-- {
		if hp[i] == ':' {
			return hp[:i], hp[i+1:], true
		}
	}
	return hp, "", false
}

// unixPair makes a socketpair of the type and tries to reach the host
// socket at path through it: sendto or sendmsg with the path as the
// address, or connect.
func unixPair(typ, mode, path string) error {
	t, ok := map[string]int{"stream": unix.SOCK_STREAM, "seqpacket": unix.SOCK_SEQPACKET, "dgram": unix.SOCK_DGRAM, "raw": unix.SOCK_RAW}[typ]
	if !ok {
		return fmt.Errorf("unknown socket type %q", typ)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, t|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	sa := &unix.SockaddrUnix{Name: path}
	switch mode {
	case "sendto":
		return unix.Sendto(fds[0], []byte("x"), unix.MSG_DONTWAIT, sa)
	case "sendmsg":
		_, err := unix.SendmsgN(fds[0], []byte("x"), nil, sa, unix.MSG_DONTWAIT)
		return err
	case "connect":
		return unix.Connect(fds[0], sa)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

const (
	msgFastOpen        = 0x20000000
	tcpFastOpenConnect = 30
)

// fastOpen connects to hostport (IPv4) with TCP Fast Open: sendto,
// sendmsg or sendmmsg with MSG_FASTOPEN, or the TCP_FASTOPEN_CONNECT
// option (then connect and write).
func fastOpen(mode, hostport string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, portS, _ := cut(hostport)
	port, _ := strconv.Atoi(portS)
	sa := &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	msg := []byte("fast open\n")
	switch mode {
	case "sendto":
		return unix.Sendto(fd, msg, msgFastOpen, sa)
	case "sendmsg":
		_, err := unix.SendmsgN(fd, msg, nil, sa, msgFastOpen)
		return err
	case "sendmmsg":
		raw := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: sa.Addr}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&raw.Port))[:], uint16(port))
		iov := unix.Iovec{Base: &msg[0]}
		iov.SetLen(len(msg))
		var mm struct {
			hdr unix.Msghdr
			len uint32
			_   uint32
		}
		mm.hdr.Name = (*byte)(unsafe.Pointer(&raw))
		mm.hdr.Namelen = unix.SizeofSockaddrInet4
		mm.hdr.Iov = &iov
		mm.hdr.SetIovlen(1)
		n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&mm)), 1, msgFastOpen, 0, 0)
		if e != 0 {
			return e
		}
		if n != 1 {
			return fmt.Errorf("sendmmsg sent %d messages", n)
		}
		return nil
	case "sockopt":
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, tcpFastOpenConnect, 1); err != nil {
			return err
		}
		if err := unix.Connect(fd, sa); err != nil {
			return err
		}
		_, err := unix.Write(fd, msg)
		return err
	}
	return fmt.Errorf("unknown mode %q", mode)
}

const (
	sysGetxattrat  = 464
	sysListxattrat = 465
)

// xattr reads the attribute name of path (or its list) through one call.
func xattr(call, path, name string) error {
	buf := make([]byte, 256)
	var err error
	switch call {
	case "getxattr":
		_, err = unix.Getxattr(path, name, buf)
	case "lgetxattr":
		_, err = unix.Lgetxattr(path, name, buf)
	case "listxattr":
		_, err = unix.Listxattr(path, buf)
	case "llistxattr":
		_, err = unix.Llistxattr(path, buf)
	case "getxattrat", "listxattrat":
		p, _ := unix.BytePtrFromString(path)
		atFDCWD := unix.AT_FDCWD
		n, _ := unix.BytePtrFromString(name)
		var e syscall.Errno
		if call == "getxattrat" {
			args := struct {
				value       uint64
				size, flags uint32
			}{uint64(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf)), 0}
			_, _, e = unix.Syscall6(sysGetxattrat, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), 0, uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args))
		} else {
			_, _, e = unix.Syscall6(sysListxattrat, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), 0, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0)
		}
		err = errnoOrNil(e)
	case "fgetxattr-opath": // through a descriptor that Landlock never checked
		fd, oerr := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if oerr != nil {
			return fmt.Errorf("open: %w", oerr)
		}
		defer unix.Close(fd)
		_, err = unix.Fgetxattr(fd, name, buf)
	default:
		return fmt.Errorf("unknown call %q", call)
	}
	return err
}
