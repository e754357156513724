# Shell network: the destinations found in a shell command
# (input.destinations) against allowed_domains and the private address
# refusal, and the egress plan: the host:port list claw's egress proxy
# admits for the action, its only network.
package claw.gate

import data.claw.lib

default allow_private_cidrs := []

allow_private_cidrs := data.claw.config.allow_private_cidrs

# dests are the analysed destinations with every field present.
dests := [object.union(url_defaults, d) |
	input.kind == "shell"
	some d in input.destinations
	is_object(d)
]

dest_host_allowed(d) if {
	"*" in allowed_hosts
	d.host != ""
}

dest_host_allowed(d) if d.host in allowed_hosts

dest_host_allowed(d) if {
	some h in allowed_hosts
	startswith(h, "*.")
	endswith(d.host, substring(h, 1, -1))
}

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

# METADATA
# title: Unusable network destination
# description: A URL in the command could not be analysed; what cannot be analysed is not reached.
# custom:
#   id: net.invalid_url
#   severity: critical
deny contains r if {
	some d in dests
	d.error != ""
	r := lib.reason(rego.metadata.rule(), sprintf("the url %q cannot be used: %v", [d.raw, d.error]))
}

# METADATA
# title: Network destination not allowed
# description: >-
#   allowed_domains is the egress allowlist of shell commands too, at
#   every autonomy; an empty list allows no host.
# custom:
#   id: net.domain_not_allowed
#   severity: high
deny contains r if {
	some d in dests
	d.error == ""
	not dest_host_allowed(d)
	r := lib.reason(rego.metadata.rule(), sprintf("%v is not on allowed_domains", [d.host]))
}

# METADATA
# title: Non-public network destination
# description: >-
#   The destination is, or names, a loopback, private, link-local, cloud
#   metadata, unspecified, multicast or reserved address that
#   allow_private_cidrs does not open.
# custom:
#   id: net.private_address
#   severity: high
deny contains r if {
	some d in dests
	d.error == ""
	d.class != "public"
	not private_dest_allowed(d)
	r := lib.reason(rego.metadata.rule(), sprintf("%v is a %v address, not a public one", [d.host, d.class]))
}

# sandbox_egress is the egress plan: each destination as host:port (an
# IPv6 address in brackets).
sandbox_egress := sort({hp |
	some d in dests
	d.error == ""
	d.port > 0
	hp := dest_host_port(d)
})

dest_host_port(d) := sprintf("[%s]:%d", [d.host, d.port]) if contains(d.host, ":")

dest_host_port(d) := sprintf("%s:%d", [d.host, d.port]) if not contains(d.host, ":")
