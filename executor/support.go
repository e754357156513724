package executor

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnavailable is returned (wrapped, test with errors.Is) when the kernel
// does not offer the confinement claw requires: Landlock below the minimum
// ABI, no seccomp, no namespaces, or no sandbox helper. Nothing ran. The
// CLI exits 5.
var ErrUnavailable = errors.New("sandbox unavailable")

// Support is what the kernel offers and what the executor will enforce.
type Support struct {
	Kernel         string `json:"kernel"`
	LandlockABI    int    `json:"landlock_abi"`
	LandlockErrata int    `json:"landlock_errata"`
	Seccomp        bool   `json:"seccomp"`
	UserNS         bool   `json:"user_namespace"`
	PIDNS          bool   `json:"pid_namespace"`
	MountNS        bool   `json:"mount_namespace"`
	NetNS          bool   `json:"net_namespace"`
	UTSNS          bool   `json:"uts_namespace"`
	CgroupNS       bool   `json:"cgroup_namespace"`
	FreshProc      bool   `json:"fresh_proc"`
	Cgroup         string `json:"cgroup,omitempty"` // "v2", "v1" or "" (none usable)
	Root           bool   `json:"root"`
	Helper         string `json:"helper,omitempty"`
	HelperIsSelf   bool   `json:"helper_is_self,omitempty"`
	// Enforced lists, in words, what every sandboxed action gets.
	Enforced []string `json:"enforced"`
	// Missing lists what is not available, with consequences.
	Missing []string `json:"missing,omitempty"`
	// Edges are the ways out of the grants that Landlock alone may not
	// close, and how this kernel's sandbox deals with each.
	Edges []Edge `json:"edges,omitempty"`
	// Err is why the sandbox is unavailable at the default minimum (empty:
	// available).
	Err string `json:"error,omitempty"`

	ns nsMode
}

// Require returns nil when the sandbox can be applied with Landlock ABI
// minABI (0: the default), or an error wrapping ErrUnavailable that says
// what is missing.
func (s Support) Require(minABI int) error {
	if minABI <= 0 {
		minABI = DefaultMinLandlockABI
	}
	var why []string
	if s.Helper == "" {
		why = append(why, "no sandbox helper")
	}
	if s.LandlockABI < minABI {
		if s.LandlockABI == 0 {
			why = append(why, fmt.Sprintf("Landlock is not enabled (need ABI %d)", minABI))
		} else {
			why = append(why, fmt.Sprintf("Landlock ABI %d is below the required %d", s.LandlockABI, minABI))
		}
	}
	if !s.Seccomp {
		why = append(why, "seccomp filters are not available")
	}
	if !s.PIDNS || !s.MountNS {
		why = append(why, "PID and mount namespaces are not available (unprivileged user namespaces disabled?)")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(why, "; "))
}

// Edge is one way out of a sandbox's grants that Landlock alone may not
// close, and whether the sandbox closes it on this kernel: by Landlock
// (when its ABI covers it), by the seccomp program or a namespace, or not
// at all (a residue the README states).
type Edge struct {
	Name     string `json:"name"`
	Confined bool   `json:"confined"`
	By       string `json:"by"` // what confines it here, or what stays open and why
}
