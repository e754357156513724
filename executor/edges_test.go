package executor

import (
	"strings"
	"testing"
)

// TestEdges: what doctor reports for each edge follows the kernel: the
// Landlock ABI that covers it, the seccomp program, the namespaces; the
// metadata residue is never reported confined.
func TestEdges(t *testing.T) {
	confined := func(s Support) map[string]bool {
		m := map[string]bool{}
		for _, e := range edges(&s) {
			key, _, _ := strings.Cut(e.Name, " (")
			m[key] = e.Confined
			if e.By == "" {
				t.Errorf("%s: no word on how", e.Name)
			}
		}
		return m
	}
	for _, c := range []struct {
		name string
		s    Support
		want map[string]bool
	}{
		{"ABI 7, seccomp, namespaces", Support{LandlockABI: 7, Seccomp: true, UTSNS: true, CgroupNS: true}, map[string]bool{
			"TCP connect and bind by port": true, "host pathname unix sockets": true, "UDP by port": false,
			"TCP Fast Open past the port rules": true, "listening sockets": true, "read leases stalling host writers": true,
			"extended attributes outside the grants": true, "inotify watches outside the grants": true,
			"metadata outside the grants": false, "the host's hostname": true, "claw's cgroup paths": true,
		}},
		{"ABI 10, no seccomp, no UTS namespace", Support{LandlockABI: 10}, map[string]bool{
			"host pathname unix sockets": true, "UDP by port": true, "TCP Fast Open past the port rules": false,
			"listening sockets": false, "inotify watches outside the grants": false, "metadata outside the grants": false,
			"the host's hostname": false, "claw's cgroup paths": false,
		}},
		{"ABI 7, seccomp, UTS but no cgroup namespace (a systemd unit)", Support{LandlockABI: 7, Seccomp: true, UTSNS: true}, map[string]bool{
			"the host's hostname": true, "claw's cgroup paths": false,
		}},
		{"ABI 6, seccomp", Support{LandlockABI: 6, Seccomp: true}, map[string]bool{
			"abstract unix sockets and signals outside the sandbox": true, "host pathname unix sockets": true,
		}},
		{"ABI 3, seccomp", Support{LandlockABI: 3, Seccomp: true}, map[string]bool{
			"TCP connect and bind by port": false, "abstract unix sockets and signals outside the sandbox": false,
		}},
	} {
		got := confined(c.s)
		for k, v := range c.want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s confined %v (reported: %v), want %v", c.name, k, g, ok, v)
			}
		}
	}
}
