package child

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// egressListen runs in the child's new network namespace, before it drops
// its capabilities: it brings the loopback interface up, listens on
// 127.0.0.1:port and hands the listening socket to the parent over the
// unix socket at EgressFD, which serves the egress proxy on it. The
// child keeps no copy of either descriptor, so the command can neither
// accept on the listener nor reach the parent's socket.
func egressListen(port uint16) error {
	defer unix.Close(EgressFD)
	if err := loopbackUp(); err != nil {
		return err
	}
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("bind 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(ln, 128); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := unix.Sendmsg(EgressFD, []byte{1}, unix.UnixRights(ln), nil, 0); err != nil {
		return fmt.Errorf("handing the listener to claw: %w", err)
	}
	return nil
}

// loopbackUp sets IFF_UP on lo; the kernel then adds 127.0.0.1/8 and ::1
// itself.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bringing lo up: %w", err)
	}
	return nil
}
