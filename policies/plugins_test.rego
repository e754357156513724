package claw.gate_test

# plugin(status, paths, writes) is a call of echo-plugin's echo tool as the
# broker resolved it, with the reach its manifest declares.
plugin(status, paths, writes) := object.union(base, {
	"kind": "plugin",
	"action": {"tool": "plugin", "args": {"plugin": "echo-plugin", "tool": "echo", "args": {}}},
	"plugin": {"name": "echo-plugin", "tool": "echo", "status": status, "detail": concat(" ", ["echo-plugin", status])},
	"paths": paths,
	"writes": writes,
})

plugins_fires := {
	"plugin.changed: a file differs from its pin": {
		"id": "plugin.changed",
		"input": at(plugin("changed", [], []), "full"),
		"decision": "deny",
		"risk": "high",
	},
	"plugin.unavailable: not installed": {
		"id": "plugin.unavailable",
		"input": at(plugin("not_installed", [], []), "full"),
		"decision": "deny",
	},
	"plugin.unavailable: unknown tool": {
		"id": "plugin.unavailable",
		"input": plugin("unknown_tool", [], []),
		"decision": "deny",
	},
	"plugin.unavailable: never looked up (a dry run)": {
		"id": "plugin.unavailable",
		"input": object.remove(plugin("ok", [], []), ["plugin"]),
		"decision": "deny",
	},
	"plugin.invalid_args: arguments fail the tool's schema": {
		"id": "plugin.invalid_args",
		"input": at(plugin("invalid_args", [], []), "full"),
		"decision": "deny",
		"risk": "medium",
	},
	"path.outside_workspace: a plugin that writes outside the workspace": {
		"id": "path.outside_workspace",
		"input": plugin("ok", ["/home/u/elsewhere"], ["/home/u/elsewhere"]),
		"decision": "deny",
	},
}

plugins_quiet := {
	"autonomy.supervised.ask: a plugin that writes in the workspace runs (the sandbox holds it there)": {
		"id": "autonomy.supervised.ask",
		"input": plugin("ok", ["/home/u/ws/out"], ["/home/u/ws/out"]),
		"decision": "allow",
	},
	"plugin.changed: an unchanged plugin without reach runs at supervised": {
		"id": "plugin.changed",
		"input": plugin("ok", [], []),
		"decision": "allow",
		"risk": "low",
	},
	"plugin.unavailable: invalid arguments are their own rule": {
		"id": "plugin.unavailable",
		"input": plugin("invalid_args", [], []),
		"decision": "deny",
	},
	"plugin.invalid_args: arguments that match": {
		"id": "plugin.invalid_args",
		"input": plugin("ok", [], []),
		"decision": "allow",
	},
	"plugin.unavailable: reads inside the workspace are low": {
		"id": "plugin.unavailable",
		"input": plugin("ok", ["/home/u/ws/notes"], []),
		"decision": "allow",
		"risk": "low",
	},
}

test_plugins_fires if {
	failing := {note |
		some note, tc in plugins_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_plugins_quiet if {
	failing := {note |
		some note, tc in plugins_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}

# the plan of a plugin with no reach grants no write; one that declares a
# write inside the workspace gets the workspace plan
test_plugin_sandbox_plan if {
	decide(plugin("ok", [], []), {}).sandbox.write == []
	decide(at(plugin("ok", ["/home/u/ws/out"], ["/home/u/ws/out"]), "full"), {}).sandbox.write == ["/home/u/ws"]
}

# a plugin's declared host, as the broker puts it into the input
plugin_dest(host, class) := object.union(plugin("ok", [], []), {"destinations": [object.union(
	dest(host, 8080, false),
	{"command": "echo-plugin", "scheme": "", "how": "plugin", "class": class},
)]})

# a plugin's declared hosts are judged like a shell command's
# destinations: one allowed_domains and allow_private_cidrs open is in the
# egress plan; one off allowed_domains, or a private address the list
# does not open, is denied with nothing planned
test_plugin_destinations if {
	open := {"allowed_domains": ["localhost"], "allow_private_cidrs": ["127.0.0.0/8"]}
	ok := decide(plugin_dest("localhost", "loopback"), open)
	ok.decision == "allow"
	ok.sandbox.network.hosts == ["localhost:8080"]
	ok.sandbox.net == true

	far := decide(plugin_dest("evil.example", "public"), open)
	far.decision == "deny"
	"net.domain_not_allowed" in {r.id | some r in far.reasons}
	far.sandbox.network.hosts == []

	closed := decide(plugin_dest("localhost", "loopback"), {"allowed_domains": ["localhost"]})
	closed.decision == "deny"
	"net.private_address" in {r.id | some r in closed.reasons}
	closed.sandbox.network.hosts == []
}
