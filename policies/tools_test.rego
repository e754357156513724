package claw.gate_test

tools_fires := {
	"estop: engaged stops a low-risk read": {
		"id": "estop",
		"input": object.union(read("file_read", ["/home/u/ws/a"]), {"context": {"estop": true}}),
		"decision": "deny",
		"risk": "critical",
	},
	"estop: engaged stops at full autonomy": {
		"id": "estop",
		"input": object.union(at(kind("time"), "full"), {"context": {"estop": true}}),
		"decision": "deny",
	},
	"estop: engaged cannot be passphrased": {
		"id": "estop",
		"input": object.union(at(kind("time"), "full"), {"context": {"estop": true}}),
		"config": {"passphrase_enabled": true, "passphrase_for": ["estop", "critical"]},
		"decision": "deny",
	},
	"input.invalid: errors from Go": {
		"id": "input.invalid",
		"input": object.union(kind("file_read"), {"errors": ["path contains a NUL byte"]}),
		"decision": "deny",
		"risk": "critical",
	},
	"input.invalid: wrong version": {
		"id": "input.invalid",
		"input": object.union(kind("time"), {"version": 2}),
		"decision": "deny",
	},
	"input.invalid: no version": {
		"id": "input.invalid",
		"input": object.remove(kind("time"), ["version"]),
		"decision": "deny",
	},
	"input.invalid: relative workspace": {
		"id": "input.invalid",
		"input": object.union(kind("time"), {"context": {"workspace": "ws"}}),
		"decision": "deny",
	},
	"input.invalid: root workspace": {
		"id": "input.invalid",
		"input": object.union(kind("time"), {"context": {"workspace": "/"}}),
		"decision": "deny",
	},
	"input.invalid: no context": {
		"id": "input.invalid",
		"input": object.remove(kind("time"), ["context"]),
		"decision": "deny",
	},
	"input.invalid: relative path": {
		"id": "input.invalid",
		"input": read("file_read", ["ws/a"]),
		"decision": "deny",
	},
	"input.invalid: dot-dot path": {
		"id": "input.invalid",
		"input": read("file_read", ["/home/u/ws/../.ssh/id_rsa"]),
		"decision": "deny",
	},
	"input.invalid: dot path": {
		"id": "input.invalid",
		"input": read("file_read", ["/home/u/ws/./a"]),
		"decision": "deny",
	},
	"input.invalid: double slash": {
		"id": "input.invalid",
		"input": read("file_read", ["/home/u/ws//a"]),
		"decision": "deny",
	},
	"input.invalid: trailing slash": {
		"id": "input.invalid",
		"input": read("file_read", ["/home/u/ws/a/"]),
		"decision": "deny",
	},
	"input.invalid: relative dd target with dot-dot": {
		"id": "input.invalid",
		"input": at(sh([cmd(["dd", "if=a", "of=../../x"], [], [])]), "full"),
		"config": {"forbidden_commands": []},
		"decision": "deny",
	},
	"tool.unknown: kind unknown": {
		"id": "tool.unknown",
		"input": object.union(kind("unknown"), {"action": {"tool": "launch_missiles"}}),
		"decision": "deny",
		"risk": "critical",
	},
	"tool.unknown: kind missing": {
		"id": "tool.unknown",
		"input": object.remove(kind("time"), ["kind"]),
		"decision": "deny",
	},
	"tool.unknown: unknown at full autonomy": {
		"id": "tool.unknown",
		"input": at(kind("exec"), "full"),
		"decision": "deny",
	},
	"tool.unknown: input is not an object": {
		"id": "tool.unknown",
		"input": "rm -rf /",
		"decision": "deny",
	},
	"autonomy.invalid: godmode": {
		"id": "autonomy.invalid",
		"input": at(kind("time"), "godmode"),
		"decision": "deny",
		"risk": "critical",
	},
	"autonomy.invalid: missing": {
		"id": "autonomy.invalid",
		"input": object.union(kind("time"), {"context": {"autonomy": null}}),
		"decision": "deny",
	},
}

tools_quiet := {
	"estop: not engaged": {
		"id": "estop",
		"input": kind("time"),
		"decision": "allow",
	},
	"estop: false is not engaged": {
		"id": "estop",
		"input": object.union(kind("time"), {"context": {"estop": false}}),
		"decision": "allow",
	},
	"input.invalid: canonical paths": {
		"id": "input.invalid",
		"input": read("file_read", ["/home/u/ws/a", "/home/u/ws/.hidden", "/home/u/ws/a..b"]),
		"decision": "allow",
	},
	"input.invalid: null errors": {
		"id": "input.invalid",
		"input": object.union(kind("time"), {"errors": null}),
		"decision": "allow",
	},
	"input.invalid: root path is canonical": {
		"id": "input.invalid",
		"input": at(read("file_list", ["/"]), "full"),
		"config": {"workspace_only": false},
		"decision": "allow",
	},
	"tool.unknown: every known kind": {
		"id": "tool.unknown",
		"input": kind("memory_search"),
		"decision": "allow",
	},
	"tool.unknown: generic tool": {
		"id": "tool.unknown",
		"input": object.union(kind("tool"), {"action": {"args": {"server": "fs", "name": "stat", "args": {}}}}),
		"decision": "ask",
	},
	"autonomy.invalid: readonly": {
		"id": "autonomy.invalid",
		"input": at(kind("time"), "readonly"),
		"decision": "allow",
	},
	"autonomy.invalid: full": {
		"id": "autonomy.invalid",
		"input": at(kind("time"), "full"),
		"decision": "allow",
	},
}

# Every known kind is accepted.
test_known_kinds_are_not_unknown if {
	every k in ["shell", "file_read", "file_write", "edit_file", "file_list", "http", "time", "memory_search", "tool", "plugin"] {
		not "tool.unknown" in ids(decide(kind(k), {}))
	}
}

test_tools_fires if {
	failing := {note |
		some note, tc in tools_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_tools_quiet if {
	failing := {note |
		some note, tc in tools_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}
