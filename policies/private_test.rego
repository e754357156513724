package claw.gate_test

# The allow_private_cidrs cases: which non-public destinations a shell
# command may reach through the egress proxy. fetch(host, class) is
# `curl URL` at full autonomy whose one destination is host.

fetch(host, class) := at(
	object.union(sh([cmd(["curl", "URL"], [], [])]), {"destinations": [object.union(
		dest(host, 8080, false),
		{"command": "curl", "scheme": "http", "how": "url", "class": class},
	)]}),
	"full",
)

private_fires := {
	"loopback without allow_private_cidrs": {
		"input": fetch("localhost", "loopback"),
		"config": {"allowed_domains": ["localhost"]},
	},
	"address outside the listed prefixes": {
		"input": fetch("10.1.2.3", "private"),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["127.0.0.0/8"]},
	},
	"next to a listed prefix": {
		"input": fetch("10.128.0.1", "private"),
		"config": {"allowed_domains": ["10.128.0.1"], "allow_private_cidrs": ["10.0.0.0/9"]},
	},
	"metadata even when listed": {
		"input": fetch("169.254.169.254", "metadata"),
		"config": {"allowed_domains": ["169.254.169.254"], "allow_private_cidrs": ["169.254.0.0/16"]},
	},
	"metadata name": {
		"input": fetch("metadata.google.internal", "metadata"),
		"config": {"allowed_domains": ["metadata.google.internal"], "allow_private_cidrs": ["169.254.0.0/16"]},
	},
}

private_quiet := {
	"localhost with allow_private_cidrs": {
		"input": fetch("localhost", "loopback"),
		"config": {"allowed_domains": ["localhost"], "allow_private_cidrs": ["127.0.0.0/8"]},
		"hosts": ["localhost:8080"],
	},
	"address listed alone": {
		"input": fetch("10.1.2.3", "private"),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["192.168.0.0/16", "10.1.2.3"]},
		"hosts": ["10.1.2.3:8080"],
	},
	"address inside a listed prefix": {
		"input": fetch("10.1.2.3", "private"),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["10.0.0.0/8"]},
		"hosts": ["10.1.2.3:8080"],
	},
	"IPv6 address listed": {
		"input": fetch("fd00::5", "private"),
		"config": {"allowed_domains": ["fd00::5"], "allow_private_cidrs": ["fd00::5/128"]},
		"hosts": ["[fd00::5]:8080"],
	},
}

# A destination the list does not open is denied as net.private_address,
# with nothing in the egress plan.
test_private_fires if {
	failing := {note |
		some note, tc in private_fires
		d := decide(tc.input, tc.config)
		not private_denied(d)
	}
	no_failures(failing)
}

private_denied(d) if {
	d.decision == "deny"
	some r in d.reasons
	r.id == "net.private_address"
	d.sandbox.network.hosts == []
}

# One the list opens (and allowed_domains names) is allowed at full, and
# the egress plan admits exactly it.
test_private_quiet if {
	failing := {note |
		some note, tc in private_quiet
		d := decide(tc.input, tc.config)
		not private_admitted(d, tc.hosts)
	}
	no_failures(failing)
}

private_admitted(d, hosts) if {
	d.decision == "allow"
	d.sandbox.network.hosts == hosts
}

# Data sent to a non-public destination the list opens asks at supervised
# (net.sends), as it does for a public one.
test_private_sends_asks if {
	act := object.union(sh([cmd(["curl", "URL"], [], [])]), {"destinations": [object.union(
		dest("localhost", 8080, true),
		{"command": "curl", "scheme": "http", "how": "url", "class": "loopback"},
	)]})
	d := decide(act, {"allowed_domains": ["localhost"], "allow_private_cidrs": ["127.0.0.0/8"]})
	d.decision == "ask"
	some r in d.reasons
	r.id == "net.sends"
}
