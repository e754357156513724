package egress

import (
	"fmt"
	"net/netip"

	"github.com/clawsec/claw/internal/netclass"
)

// vet returns why the proxy may not connect to a, or nil. A public
// address is allowed; any other one only inside a prefix of allow, and a
// cloud metadata address only when a prefix names exactly it.
func vet(a netip.Addr, allow []netip.Prefix) error {
	a = a.Unmap().WithZone("")
	class := netclass.Class(a) // the gate's classifier too
	if class == "public" {
		return nil
	}
	for _, p := range allow {
		if p.Contains(a) && (class != "metadata" || p.Bits() == a.BitLen()) {
			return nil
		}
	}
	return fmt.Errorf("%s is a %s address", a, class)
}

// ParseCIDRs parses allow_private_cidrs entries ("10.0.0.0/8",
// "fd00::/8", or a bare address for one host).
func ParseCIDRs(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		p, err := ParseCIDR(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseCIDR parses one allow_private_cidrs entry. The prefix must be
// written in its masked form (10.0.0.0/8, not 10.1.2.3/8), so that what
// it opens is what it says.
func ParseCIDR(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR prefix like \"10.0.0.0/8\" or an address", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q has bits set after the prefix length; write %q", s, p.Masked().String())
	}
	if p.Bits() == 0 {
		return netip.Prefix{}, fmt.Errorf("%q opens every address; list the private ranges you need", s)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped prefix; write the IPv4 prefix", s)
	}
	return p, nil
}
