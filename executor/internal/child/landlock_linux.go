package child

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights, by the ABI that introduced them.
const (
	fsRead    = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsExec    = unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsV1Write = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsDevices = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
	fsV1All   = fsRead | fsExec | fsV1Write | fsDevices
	// file-only rights (what a rule on a non-directory may carry)
	fsFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

const ruleNetPort = 2 // LANDLOCK_RULE_NET_PORT
const rulePathBeneath = 1

// LandlockABI returns the kernel's Landlock ABI version (0: none) and its
// errata bits.
func LandlockABI() (abi, errata int) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, 0
	}
	er, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
	if e != 0 {
		er = 0
	}
	return int(v), int(er)
}

// handledFS is every filesystem right the given ABI knows.
func handledFS(abi int) uint64 {
	h := uint64(fsV1All)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		h |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return h
}

type rulesetAttr struct {
	fs, net, scoped uint64
}

// landlockRuleset builds the ruleset for the config's paths and ports and
// returns its fd. It runs before credentials change, so the paths are opened
// with the parent's access.
func landlockRuleset(c *Config, abi int) (int, error) {
	if abi < 1 {
		return -1, errors.New("landlock is not supported by this kernel or not enabled at boot")
	}
	handled := handledFS(abi)
	attr := rulesetAttr{fs: handled}
	if abi >= 4 {
		attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		if abi >= 10 {
			attr.net |= unix.LANDLOCK_ACCESS_NET_BIND_UDP | unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP
		}
	}
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	rs := int(fd)
	if err := landlockRules(c, abi, rs, handled); err != nil {
		unix.Close(rs)
		return -1, err
	}
	return rs, nil
}

// landlockRestrict enforces the ruleset on the calling thread (and what it
// executes). no_new_privs must be set.
func landlockRestrict(rs int, all bool) error {
	defer unix.Close(rs)
	if e := threadSyscall(all, unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}

func landlockRules(c *Config, abi, rs int, handled uint64) error {
	ro := uint64(fsRead | fsExec)
	rw := (handled &^ uint64(fsDevices)) &^ unix.LANDLOCK_ACCESS_FS_IOCTL_DEV &^ unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	dev := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE)
	if abi >= 3 {
		dev |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	for _, g := range []struct {
		paths  []string
		access uint64
	}{{c.RO, ro}, {c.RW, rw}, {c.Dev, dev}} {
		for _, p := range g.paths {
			if err := addPathRule(rs, p, g.access&handled); err != nil {
				return err
			}
		}
	}
	if abi >= 4 && c.Net {
		for _, port := range c.TCPPorts {
			if err := addPortRule(rs, unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port); err != nil {
				return err
			}
		}
		if abi >= 10 {
			for _, port := range c.UDPPorts {
				if err := addPortRule(rs, unix.LANDLOCK_ACCESS_NET_CONNECT_SEND_UDP, port); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func addPathRule(rs int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil // a grant on nothing grants nothing
		}
		return fmt.Errorf("landlock rule %q: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock rule %q: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fsFileRights
	}
	pb := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), rulePathBeneath, uintptr(unsafe.Pointer(&pb)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock rule %q: %w", path, e)
	}
	return nil
}

type netPortAttr struct {
	access uint64
	port   uint64
}

func addPortRule(rs int, access uint64, port uint16) error {
	np := netPortAttr{access: access, port: uint64(port)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), ruleNetPort, uintptr(unsafe.Pointer(&np)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock port rule %d: %w", port, e)
	}
	return nil
}
