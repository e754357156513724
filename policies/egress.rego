# Shell network: the destinations found in a shell command
# (input.destinations) against allowed_domains and the private address
# refusal, and the egress plan: the host:port list claw's egress proxy
# admits for the action, its only network.
package claw.gate

import data.claw.lib

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
