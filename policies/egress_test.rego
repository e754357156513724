package claw.gate_test

# fetch(u) is `curl URL` at full autonomy whose one destination is u
# merged into a public https URL of example.com.
fetch(u) := at(
	object.union(sh([cmd(["curl", "URL"], [], [])]), {"destinations": [object.union(
		{"raw": "URL", "scheme": "https", "host": "example.com", "port": 443, "userinfo": false, "ip": "", "class": "public", "error": ""},
		u,
	)]}),
	"full",
)

egress_fires := {
	"net.invalid_url: parse error": {
		"id": "net.invalid_url",
		"input": fetch({"error": "invalid port \"x\""}),
		"decision": "deny",
		"risk": "critical",
	},
	"net.domain_not_allowed: other host": {
		"id": "net.domain_not_allowed",
		"input": fetch({"host": "evil.com"}),
		"decision": "deny",
		"risk": "high",
	},
	"net.domain_not_allowed: suffix look-alike": {
		"id": "net.domain_not_allowed",
		"input": fetch({"host": "evilexample.com"}),
		"decision": "deny",
	},
	"net.domain_not_allowed: at supervised": {
		"id": "net.domain_not_allowed",
		"input": at(fetch({"host": "evil.com"}), "supervised"),
		"decision": "deny",
	},
	"net.private_address: loopback without allow_private_cidrs": {
		"id": "net.private_address",
		"input": fetch({"host": "localhost", "class": "loopback"}),
		"config": {"allowed_domains": ["localhost"]},
		"decision": "deny",
	},
	"net.private_address: address outside the listed prefixes": {
		"id": "net.private_address",
		"input": fetch({"host": "10.1.2.3", "ip": "10.1.2.3", "class": "private"}),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["127.0.0.0/8"]},
		"decision": "deny",
	},
	"net.private_address: next to a listed prefix": {
		"id": "net.private_address",
		"input": fetch({"host": "10.128.0.1", "ip": "10.128.0.1", "class": "private"}),
		"config": {"allowed_domains": ["10.128.0.1"], "allow_private_cidrs": ["10.0.0.0/9"]},
		"decision": "deny",
	},
	"net.private_address: metadata even when listed": {
		"id": "net.private_address",
		"input": fetch({"host": "169.254.169.254", "ip": "169.254.169.254", "class": "metadata"}),
		"config": {"allowed_domains": ["169.254.169.254"], "allow_private_cidrs": ["169.254.0.0/16"]},
		"decision": "deny",
	},
	"net.private_address: metadata name": {
		"id": "net.private_address",
		"input": fetch({"host": "metadata.google.internal", "class": "metadata"}),
		"config": {"allowed_domains": ["metadata.google.internal"], "allow_private_cidrs": ["169.254.0.0/16"]},
		"decision": "deny",
	},
}

egress_quiet := {
	"net.invalid_url: analysed": {"id": "net.invalid_url", "input": fetch({}), "decision": "allow"},
	"net.domain_not_allowed: exact": {"id": "net.domain_not_allowed", "input": fetch({}), "decision": "allow"},
	"net.domain_not_allowed: wildcard subdomain": {"id": "net.domain_not_allowed", "input": fetch({"host": "api.github.com"}), "decision": "allow"},
	"net.domain_not_allowed: http tool is network.rego's": {"id": "net.domain_not_allowed", "input": at(http({"host": "evil.com"}, "GET"), "full"), "decision": "deny"},
	"net.private_address: localhost with allow_private_cidrs": {
		"id": "net.private_address",
		"input": fetch({"host": "localhost", "class": "loopback", "port": 8080}),
		"config": {"allowed_domains": ["localhost"], "allow_private_cidrs": ["127.0.0.0/8"]},
		"decision": "allow",
	},
	"net.private_address: address listed alone": {
		"id": "net.private_address",
		"input": fetch({"host": "10.1.2.3", "ip": "10.1.2.3", "class": "private"}),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["192.168.0.0/16", "10.1.2.3"]},
		"decision": "allow",
	},
	"net.private_address: address as the host, no ip field": {
		"id": "net.private_address",
		"input": fetch({"host": "10.1.2.3", "class": "private"}),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["10.0.0.0/8"]},
		"decision": "allow",
	},
	"net.private_address: IPv6 address listed": {
		"id": "net.private_address",
		"input": fetch({"host": "fd00::5", "ip": "fd00::5", "class": "private"}),
		"config": {"allowed_domains": ["fd00::5"], "allow_private_cidrs": ["fd00::5/128"]},
		"decision": "allow",
	},
	"net.private_address: address inside a listed prefix": {
		"id": "net.private_address",
		"input": fetch({"host": "10.1.2.3", "ip": "10.1.2.3", "class": "private"}),
		"config": {"allowed_domains": ["10.1.2.3"], "allow_private_cidrs": ["10.0.0.0/8"]},
		"decision": "allow",
	},
}

test_egress_fires if {
	failing := {note |
		some note, tc in egress_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_egress_quiet if {
	failing := {note |
		some note, tc in egress_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}

# The egress plan is every destination as host:port, sorted and without
# repeats, an IPv6 address in brackets; none without destinations.
test_egress_plan if {
	act := at(
		object.union(sh([cmd(["curl", "A", "B", "C"], [], [])]), {"destinations": [
			{"raw": "A", "scheme": "https", "host": "example.com", "port": 443, "userinfo": false, "ip": "", "class": "public", "error": ""},
			{"raw": "B", "scheme": "http", "host": "2001:db8::1", "port": 8080, "userinfo": false, "ip": "2001:db8::1", "class": "public", "error": ""},
			{"raw": "C", "scheme": "https", "host": "example.com", "port": 443, "userinfo": false, "ip": "", "class": "public", "error": ""},
		]}),
		"full",
	)
	res := decide(act, {"allowed_domains": ["*"]})
	res.sandbox.network.hosts == ["[2001:db8::1]:8080", "example.com:443"]
	decide(at(sh([cmd(["ls"], [], [])]), "full"), {}).sandbox.network.hosts == []
	decide(at(http({}, "GET"), "full"), {}).sandbox.network.hosts == []
}
