package egress

import (
	"fmt"
	"net/netip"
)

var (
	metadataAddrs = []netip.Prefix{
		netip.MustParsePrefix("169.254.169.254/32"), // AWS, GCP, Azure, OpenStack
		netip.MustParsePrefix("169.254.170.2/32"),   // ECS task credentials
		netip.MustParsePrefix("100.100.100.200/32"), // Alibaba
		netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS IPv6
	}
	// reserved are ranges that are neither public nor plainly private:
	// carrier-grade NAT, special purpose, benchmarking, class E, and the
	// IPv6 forms that embed or translate to an IPv4 address (NAT64, 6to4,
	// Teredo, IPv4-compatible).
	reserved = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("100.64.0.0/10"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("240.0.0.0/4"),
		netip.MustParsePrefix("64:ff9b::/96"),
		netip.MustParsePrefix("64:ff9b:1::/48"),
		netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("2002::/16"),
		netip.MustParsePrefix("2001::/32"),
		netip.MustParsePrefix("::/96"),
	}
)

// Class names what kind of address a is: "public", or why it is not
// (metadata, unspecified, loopback, link_local, multicast, private,
// reserved). An IPv4-mapped IPv6 address is classed as its IPv4 address.
func Class(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	for _, p := range metadataAddrs {
		if p.Contains(a) {
			return "metadata"
		}
	}
	switch {
	case !a.IsValid():
		return "reserved"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link_local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "reserved"
	case a.IsPrivate():
		return "private"
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return "reserved"
		}
	}
	if !a.IsGlobalUnicast() {
		return "reserved"
	}
	return "public"
}

// vet returns why the proxy may not connect to a, or nil. A public
// address is allowed; any other one only inside a prefix of allow, and a
// cloud metadata address only when a prefix names exactly it.
func vet(a netip.Addr, allow []netip.Prefix) error {
	a = a.Unmap().WithZone("")
	class := Class(a)
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
