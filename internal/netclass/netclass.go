// Package netclass classes an IP address for claw's network rules: the
// gate's judgement of a destination and the egress proxy's check of the
// address it is about to dial use this one classifier, so the two cannot
// drift apart. It is a leaf: the standard library only.
package netclass

import "net/netip"

var (
	metadata = []netip.Prefix{
		netip.MustParsePrefix("169.254.169.254/32"), // AWS, GCP, Azure, OpenStack
		netip.MustParsePrefix("169.254.170.2/32"),   // ECS task credentials
		netip.MustParsePrefix("100.100.100.200/32"), // Alibaba
		netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS IPv6
	}
	private = []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"),
		netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
		netip.MustParsePrefix("fc00::/7"),
	}
	// reserved are ranges that are neither public nor plainly private:
	// special purpose, documentation, benchmarking, class E, and the IPv6
	// forms that embed or translate to an IPv4 address (NAT64 can reach
	// anything, 6to4, Teredo, IPv4-compatible).
	reserved = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
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

// Class returns the class of a: "public", "metadata", "unspecified",
// "loopback", "link_local", "multicast", "private" or "reserved". An
// IPv4-mapped IPv6 address is classed as its IPv4 address; a zone is
// ignored; an invalid address is "reserved".
func Class(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	for _, p := range metadata {
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
	}
	for _, p := range private {
		if p.Contains(a) {
			return "private"
		}
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
