package claw.gate_test

get(url) := at(http(url, "GET"), "full")

network_fires := {
	"net.domain_not_allowed: curl to a host not listed": {
		"id": "net.domain_not_allowed",
		"input": at(shd(dest("evil.example.net", 443, true)), "full"),
		"decision": "deny",
	},
	"net.domain_not_allowed: a registry not listed": {
		"id": "net.domain_not_allowed",
		"input": at(shd(object.union(dest("registry.npmjs.org", 443, false), {"how": "registry"})), "full"),
		"decision": "deny",
	},
	"net.domain_not_allowed: a registry host in a URL is judged by allowed_domains": {
		"id": "net.domain_not_allowed",
		"input": at(shd(dest("registry.npmjs.org", 443, false)), "full"),
		"config": {"allowed_registries": ["registry.npmjs.org"]},
		"decision": "deny",
	},
	"net.domain_not_allowed: a name built from data under a domain not listed": {
		"id": "net.domain_not_allowed",
		"input": at(shd(object.union(dest("", 53, true), {"known": false, "raw": "$(cat .env).evil.example.net", "suffix": "evil.example.net"})), "full"),
		"decision": "deny",
	},
	"net.private_address: metadata": {
		"id": "net.private_address",
		"input": at(shd(object.union(dest("169.254.169.254", 80, false), {"class": "metadata"})), "full"),
		"decision": "deny",
	},
	"net.userinfo: lookalike": {
		"id": "net.userinfo",
		"input": at(shd(object.union(dest("example.com", 443, false), {"userinfo": true})), "full"),
		"decision": "deny",
	},
	"net.invalid_destination: unparseable": {
		"id": "net.invalid_destination",
		"input": at(shd(object.union(dest("", 0, false), {"known": false, "error": "url has no host"})), "full"),
		"decision": "deny",
	},
	"net.unknown_destination: built at run time": {
		"id": "net.unknown_destination",
		"input": at(shd(object.union(dest("", 0, false), {"known": false, "raw": "$(cat .env).example.com"})), "full"),
		"decision": "ask",
	},
	"net.sends: upload to an allowed host": {
		"id": "net.sends",
		"input": shd(dest("example.com", 443, true)),
		"decision": "ask",
	},
	"net.sends: push to a configured remote": {
		"id": "net.sends",
		"input": shd(object.union(dest("", 0, true), {"known": false, "how": "remote", "raw": "origin"})),
		"decision": "ask",
	},
	"http.invalid_url: parse error": {
		"id": "http.invalid_url",
		"input": get({"error": "missing protocol scheme"}),
		"decision": "deny",
		"risk": "critical",
	},
	"http.invalid_url: no analysis": {
		"id": "http.invalid_url",
		"input": at(object.union(kind("http"), {"url": null}), "full"),
		"decision": "deny",
	},
	"http.scheme: file": {
		"id": "http.scheme",
		"input": get({"scheme": "file", "host": ""}),
		"decision": "deny",
		"risk": "high",
	},
	"http.scheme: gopher": {
		"id": "http.scheme",
		"input": get({"scheme": "gopher"}),
		"decision": "deny",
	},
	"http.scheme: missing": {
		"id": "http.scheme",
		"input": get({"scheme": ""}),
		"decision": "deny",
	},
	"http.userinfo: user@host": {
		"id": "http.userinfo",
		"input": get({"userinfo": true}),
		"decision": "deny",
		"risk": "high",
	},
	"http.private_address: loopback": {
		"id": "http.private_address",
		"input": get({"host": "127.0.0.1", "ip": "127.0.0.1", "class": "loopback"}),
		"config": {"allowed_domains": ["*"]},
		"decision": "deny",
		"risk": "high",
	},
	"http.private_address: decimal loopback": {
		"id": "http.private_address",
		"input": get({"host": "2130706433", "ip": "127.0.0.1", "class": "loopback"}),
		"config": {"allowed_domains": ["*"]},
		"decision": "deny",
	},
	"http.private_address: metadata even when listed": {
		"id": "http.private_address",
		"input": get({"host": "169.254.169.254", "ip": "169.254.169.254", "class": "metadata"}),
		"config": {"allowed_domains": ["169.254.169.254"]},
		"decision": "deny",
	},
	"http.private_address: private": {
		"id": "http.private_address",
		"input": get({"host": "10.0.0.1", "class": "private"}),
		"decision": "deny",
	},
	"http.private_address: link-local IPv6": {
		"id": "http.private_address",
		"input": get({"host": "fe80::1", "class": "link_local"}),
		"decision": "deny",
	},
	"http.private_address: IPv4-mapped IPv6": {
		"id": "http.private_address",
		"input": get({"host": "::ffff:127.0.0.1", "ip": "127.0.0.1", "class": "loopback"}),
		"decision": "deny",
	},
	"http.private_address: localhost name": {
		"id": "http.private_address",
		"input": get({"host": "localhost", "class": "loopback"}),
		"config": {"allowed_domains": ["localhost"]},
		"decision": "deny",
	},
	"http.private_address: unspecified": {
		"id": "http.private_address",
		"input": get({"host": "0.0.0.0", "class": "unspecified"}),
		"decision": "deny",
	},
	"http.private_address: class missing": {
		"id": "http.private_address",
		"input": get({"class": null}),
		"decision": "deny",
	},
	"http.domain_not_allowed: other host": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "evil.com"}),
		"decision": "deny",
		"risk": "high",
	},
	"http.domain_not_allowed: suffix look-alike": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "evilexample.com"}),
		"decision": "deny",
	},
	"http.domain_not_allowed: subdomain of an exact entry": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "www.example.com"}),
		"decision": "deny",
	},
	"http.domain_not_allowed: wildcard does not cover its apex": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "github.com"}),
		"decision": "deny",
	},
	"http.domain_not_allowed: wildcard look-alike": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "evilgithub.com"}),
		"decision": "deny",
	},
	"http.domain_not_allowed: empty list allows nothing": {
		"id": "http.domain_not_allowed",
		"input": get({}),
		"config": {"allowed_domains": []},
		"decision": "deny",
	},
	"http.domain_not_allowed: at readonly": {
		"id": "http.domain_not_allowed",
		"input": at(http({"host": "evil.com"}, "GET"), "readonly"),
		"decision": "deny",
	},
	"http.scheme: absent": {
		"id": "http.scheme",
		"input": at(object.union(kind("http"), {"url": {"host": "example.com", "class": "public"}}), "full"),
		"decision": "deny",
	},
	"http.private_address: class absent": {
		"id": "http.private_address",
		"input": at(object.union(kind("http"), {"url": {"scheme": "https", "host": "example.com"}}), "full"),
		"decision": "deny",
	},
	"http.domain_not_allowed: host absent": {
		"id": "http.domain_not_allowed",
		"input": at(object.union(kind("http"), {"url": {"scheme": "https", "class": "public"}}), "full"),
		"config": {"allowed_domains": ["*"]},
		"decision": "deny",
	},
	"http.invalid_url: url absent": {
		"id": "http.invalid_url",
		"input": at(object.remove(kind("http"), ["url"]), "full"),
		"decision": "deny",
	},
	"http.domain_not_allowed: star needs a host": {
		"id": "http.domain_not_allowed",
		"input": get({"host": ""}),
		"config": {"allowed_domains": ["*"]},
		"decision": "deny",
	},
}

network_quiet := {
	"net.domain_not_allowed: a package manager's default registry on allowed_registries": {
		"id": "net.domain_not_allowed",
		"input": shd(object.union(dest("registry.npmjs.org", 443, false), {"how": "registry"})),
		"config": {"allowed_registries": ["registry.npmjs.org"]},
		"decision": "allow",
	},
	"net.domain_not_allowed: a registry under a wildcard of allowed_registries": {
		"id": "net.domain_not_allowed",
		"input": shd(object.union(dest("files.pythonhosted.org", 443, false), {"how": "registry"})),
		"config": {"allowed_registries": ["*.pythonhosted.org"]},
		"decision": "allow",
	},
	"net.domain_not_allowed: allowed subdomain": {
		"id": "net.domain_not_allowed",
		"input": shd(dest("api.github.com", 443, false)),
		"decision": "allow",
	},
	"net.domain_not_allowed: a name built from data under an allowed wildcard": {
		"id": "net.domain_not_allowed",
		"input": at(shd(object.union(dest("", 53, true), {"known": false, "raw": "$(id).api.github.com", "suffix": "api.github.com"})), "full"),
		"decision": "ask",
	},
	"net.private_address: public": {
		"id": "net.private_address",
		"input": shd(dest("example.com", 443, false)),
		"decision": "allow",
	},
	"net.userinfo: ssh user": {
		"id": "net.userinfo",
		"input": at(shd(object.union(dest("example.com", 22, true), {"userinfo": true, "scheme": "ssh"})), "full"),
		"decision": "allow",
	},
	"net.invalid_destination: fine": {
		"id": "net.invalid_destination",
		"input": shd(dest("example.com", 443, false)),
		"decision": "allow",
	},
	"net.unknown_destination: a configured remote": {
		"id": "net.unknown_destination",
		"input": shd(object.union(dest("", 0, false), {"known": false, "how": "remote", "raw": "origin"})),
		"decision": "allow",
	},
	"net.sends: a fetch": {
		"id": "net.sends",
		"input": shd(dest("example.com", 443, false)),
		"decision": "allow",
	},
	"net.sends: full allows": {
		"id": "net.sends",
		"input": at(shd(dest("example.com", 443, false)), "full"),
		"decision": "allow",
	},
	"http.invalid_url: parsed": {"id": "http.invalid_url", "input": get({}), "decision": "allow"},
	"http.invalid_url: not http": {"id": "http.invalid_url", "input": kind("time"), "decision": "allow"},
	"http.scheme: http": {"id": "http.scheme", "input": get({"scheme": "http", "port": 80}), "decision": "allow"},
	"http.scheme: https": {"id": "http.scheme", "input": get({}), "decision": "allow"},
	"http.scheme: invalid url reports only that": {"id": "http.scheme", "input": get({"error": "bad", "scheme": ""}), "decision": "deny"},
	"http.invalid_url: null error": {"id": "http.invalid_url", "input": get({"error": null}), "decision": "allow"},
	"http.userinfo: none": {"id": "http.userinfo", "input": get({"userinfo": false}), "decision": "allow"},
	"http.private_address: public": {"id": "http.private_address", "input": get({"class": "public"}), "decision": "allow"},
	"http.private_address: public IP listed": {
		"id": "http.private_address",
		"input": get({"host": "93.184.215.14", "ip": "93.184.215.14"}),
		"config": {"allowed_domains": ["93.184.215.14"]},
		"decision": "allow",
	},
	"http.domain_not_allowed: exact": {"id": "http.domain_not_allowed", "input": get({}), "decision": "allow"},
	"http.domain_not_allowed: wildcard subdomain": {"id": "http.domain_not_allowed", "input": get({"host": "api.github.com"}), "decision": "allow"},
	"http.domain_not_allowed: wildcard deeper subdomain": {"id": "http.domain_not_allowed", "input": get({"host": "a.b.github.com"}), "decision": "allow"},
	"http.domain_not_allowed: star": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "anything.org"}),
		"config": {"allowed_domains": ["*"]},
		"decision": "allow",
	},
	"http.domain_not_allowed: entries are case-insensitive": {
		"id": "http.domain_not_allowed",
		"input": get({"host": "example.org"}),
		"config": {"allowed_domains": ["Example.ORG."]},
		"decision": "allow",
	},
	"http.domain_not_allowed: post to an allowed host": {
		"id": "http.domain_not_allowed",
		"input": http({}, "POST"),
		"decision": "ask",
		"risk": "medium",
	},
}

test_network_fires if {
	failing := {note |
		some note, tc in network_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_network_quiet if {
	failing := {note |
		some note, tc in network_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}

# shd is a shell action with one destination.
shd(d) := object.union(sh([cmd([d.command, d.raw], [], [])]), {"destinations": [d]})

test_network_plan_lists_allowed_destinations if {
	res := decide(
		object.union(sh([cmd(["git", "fetch"], [], [])]), {"destinations": [
			dest("example.com", 443, false),
			object.union(dest("", 0, false), {"known": false, "how": "remote", "raw": "origin"}),
		]}),
		{},
	)
	res.sandbox.network.hosts == ["example.com:443"]
	res.sandbox.net == true
}

test_network_plan_empty_without_network if {
	res := decide(sh([ls]), {})
	res.sandbox.network.hosts == []
	res.sandbox.net == false
}

# the hosts of the external agent a delegate call names, as the broker
# puts them into the input: the task and what the agent reads go to them,
# so supervised asks and full allows; a host off allowed_domains is
# denied at any autonomy, and a delegate call naming no agent has none
delegate_dest(host) := object.union(base, {
	"kind": "delegate",
	"action": {"tool": "delegate", "args": {"task": "fix the tests", "agent": "claude"}},
	"destinations": [object.union(dest(host, 443, true), {"command": "claude", "scheme": "", "how": "delegate"})],
})

test_delegate_destinations if {
	cfg := {"allowed_domains": ["api.anthropic.com"]}
	asked := decide(delegate_dest("api.anthropic.com"), cfg)
	asked.decision == "ask"
	"net.sends" in {r.id | some r in asked.reasons}

	decide(at(delegate_dest("api.anthropic.com"), "full"), cfg).decision == "allow"

	far := decide(at(delegate_dest("evil.example"), "full"), cfg)
	far.decision == "deny"
	"net.domain_not_allowed" in {r.id | some r in far.reasons}

	none := object.union(delegate_dest("api.anthropic.com"), {"destinations": []})
	decide(at(none, "full"), cfg).decision == "allow"
}
