# allow_private_cidrs: the non-public ranges a shell command may reach
# through the egress proxy (an internal mirror), for the rules that judge
# shell destinations.
package claw.gate

default allow_private_cidrs := []

allow_private_cidrs := data.claw.config.allow_private_cidrs

# A non-public destination is opened by allow_private_cidrs: an address
# when a listed prefix holds it, a name (localhost, an intranet name) as
# soon as one is listed, since the proxy checks every address it
# resolves to against the same list. Metadata never is. d is a
# destination with a host and a class, and the address in ip when the
# host is written in another notation.
private_dest_allowed(d) if {
	dest_ip(d) != ""
	d.class != "metadata"
	some c in allow_private_cidrs
	cidr_holds(c, dest_ip(d))
}

private_dest_allowed(d) if {
	dest_ip(d) == ""
	not d.class in {"metadata", "invalid"}
	count(allow_private_cidrs) > 0
}

# dest_ip is the destination's address, "" for a name.
dest_ip(d) := d.ip if {
	is_string(d.ip)
	d.ip != ""
} else := d.host if {
	v4(d.host)
} else := d.host if {
	contains(d.host, ":")
} else := ""

# cidr_holds(c, ip): the prefix c (or the address c) holds ip. IPv4 is
# compared as numbers; an IPv6 address only by an entry naming exactly
# it (net.cidr_contains is not among the allowed built-ins).
cidr_holds(c, ip) if {
	parts := split(c, "/")
	v4(parts[0])
	v4(ip)
	n := prefix_len(parts)
	shift := 32 - n
	bits.rsh(v4_num(ip), shift) == bits.rsh(v4_num(parts[0]), shift)
}

cidr_holds(c, ip) if {
	not v4(ip)
	c in {ip, concat("", [ip, "/128"])}
}

prefix_len(parts) := 32 if count(parts) == 1

prefix_len(parts) := to_number(parts[1]) if count(parts) == 2

v4(s) if regex.match(`^[0-9]{1,3}(\.[0-9]{1,3}){3}$`, s)

v4_num(s) := n if {
	p := [to_number(x) | some x in split(s, ".")]
	n := (((((p[0] * 256) + p[1]) * 256) + p[2]) * 256) + p[3]
}
