package executor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// tcpFastOpenSysctl holds the kernel's TCP Fast Open mode; bit 1 lets
// clients use it.
const tcpFastOpenSysctl = "/proc/sys/net/ipv4/tcp_fastopen"

// edges reports each edge for the support s describes.
func edges(s *Support) []Edge {
	abi, sc := s.LandlockABI, s.Seccomp
	// landlock: confined from ABI min on; below it, by what otherwise
	// says, and only partly (confined reports the whole edge)
	landlock := func(min int, what, otherwise string, confined bool) Edge {
		if abi >= min {
			return Edge{Name: what, Confined: true, By: fmt.Sprintf("Landlock (ABI %d, needs %d)", abi, min)}
		}
		return Edge{Name: what, Confined: confined, By: fmt.Sprintf("Landlock ABI %d lacks it (needs %d); %s", abi, min, otherwise)}
	}
	seccomp := func(what, how string) Edge {
		if !sc {
			return Edge{Name: what, By: "open: no seccomp program"}
		}
		return Edge{Name: what, Confined: true, By: "seccomp: " + how}
	}
	return []Edge{
		landlock(4, "TCP connect and bind by port", "without a network grant no socket can be made and a network namespace holds none; with one, every TCP port is reachable", false),
		landlock(6, "abstract unix sockets and signals outside the sandbox", "abstract sockets are per network namespace (hidden without a network grant); signals reach only what the PID namespace holds", false),
		landlock(9, "host pathname unix sockets", "seccomp refuses every unix socket but stream and seqpacket socketpairs, whose sends take no address", sc),
		landlock(10, "UDP by port", "without a network grant no socket and a network namespace; with one, UDP reaches any port", false),
		fastOpen(seccomp("TCP Fast Open past the port rules (Landlock does not check it: landlock-lsm/linux#41)", "MSG_FASTOPEN and TCP_FASTOPEN_CONNECT refused")),
		seccomp("listening sockets (listen autobinds a port without bind's check)", "listen refused"),
		seccomp("read leases stalling host writers", "fcntl F_SETLEASE refused"),
		seccomp("extended attributes outside the grants", "getxattr, lgetxattr, listxattr, llistxattr, getxattrat, listxattrat refused (a descriptor Landlock let open still reads its own)"),
		seccomp("inotify watches outside the grants", "inotify refused (ENOSYS: watchers poll)"),
		{Name: "metadata outside the grants", By: "open: stat, access, readlink, statfs and chdir on any path (existence, type, size, mode, owner, times, symlink targets); Landlock checks content and listings, not lookups"},
		nsEdge(s.UTSNS, "the host's hostname", "UTS namespace named "+sandboxHostname),
		nsEdge(s.CgroupNS, "claw's cgroup paths", "cgroup namespace rooted at the action's own cgroup"),
	}
}

func nsEdge(ok bool, what, how string) Edge {
	if ok {
		return Edge{Name: what, Confined: true, By: how}
	}
	return Edge{Name: what, By: "open: no such namespace here"}
}

// fastOpen adds the kernel's TCP Fast Open mode to the edge.
func fastOpen(e Edge) Edge {
	b, err := os.ReadFile(tcpFastOpenSysctl)
	v, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	switch {
	case err != nil || perr != nil:
		e.By += "; net.ipv4.tcp_fastopen unreadable"
	case v&1 != 0:
		e.By += fmt.Sprintf("; net.ipv4.tcp_fastopen=%d lets clients use it", v)
	default:
		e.By += fmt.Sprintf("; net.ipv4.tcp_fastopen=%d: clients are off on this host anyway", v)
	}
	return e
}
