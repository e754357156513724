package claw.gate_test

# Grants: a grant covers an ask exactly within its scope, and never a
# deny or a passphrase. The cases reach outside the workspace (far, with
# workspace_only off), which supervised asks about; what stays in the
# workspace runs without asking and needs no grant.

far_dir := "/home/u/far"

far_config := {"workspace_only": false}

scope(o) := object.union(
	{"tool": "shell", "commands": [], "args": "any", "paths": [], "hosts": [], "methods": [], "autonomy": "", "conversation": ""},
	o,
)

tool_sync_grant := [{"id": "g-my", "scope": scope({"commands": [{"program": "mytool", "subcommand": "sync"}], "paths": [far_dir]})}]

tool_sync := cmd(["mytool", "sync", far_dir], [], [far_dir])

grants_fires := {
	"grant.applied: mytool sync outside the workspace": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([tool_sync]),
		"grants": tool_sync_grant,
		"decision": "allow",
		"risk": "medium",
	},
	"grant.applied: workspace write": {
		"id": "grant.applied",
		"config": far_config,
		"input": write("file_write", ["/home/u/far/a.go"]),
		"grants": [{"id": "g-w", "scope": scope({"tool": "file_write", "args": "", "paths": [far_dir]})}],
		"decision": "allow",
	},
	"grant.applied: http POST to its host": {
		"id": "grant.applied",
		"config": far_config,
		"input": http({}, "POST"),
		"grants": [{"id": "g-h", "scope": scope({"tool": "http", "args": "", "hosts": ["example.com"], "methods": ["POST"]})}],
		"decision": "allow",
	},
	"grant.applied: scoped to this conversation": {
		"id": "grant.applied",
		"config": far_config,
		"input": object.union(sh([tool_sync]), {"context": {"conversation": "c1"}}),
		"grants": [{"id": "g-c", "scope": scope({"commands": [{"program": "mytool", "subcommand": "sync"}], "paths": [far_dir], "conversation": "c1"})}],
		"decision": "allow",
	},
}

grants_quiet := {
	"grant.applied: another subcommand": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([cmd(["mytool", "push", far_dir], [], [far_dir])]),
		"grants": tool_sync_grant,
		"decision": "ask",
	},
	"grant.applied: a second program": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([tool_sync, cmd(["cat", "/home/u/far/x"], [], ["/home/u/far/x"])]),
		"grants": tool_sync_grant,
		"decision": "ask",
	},
	"grant.applied: a path outside the scope": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([cmd(["mytool", "sync", "/usr/x"], [], ["/usr/x"])]),
		"grants": tool_sync_grant,
	},
	"grant.applied: marked command": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([marked(tool_sync, "exec_flag", "mytool sync -c")]),
		"grants": tool_sync_grant,
	},
	"grant.applied: dynamic command": {
		"id": "grant.applied",
		"config": far_config,
		"input": shp([tool_sync], {"dynamic": true}),
		"grants": tool_sync_grant,
	},
	"grant.applied: other conversation": {
		"id": "grant.applied",
		"config": far_config,
		"input": object.union(sh([tool_sync]), {"context": {"conversation": "c2"}}),
		"grants": [{"id": "g-c", "scope": scope({"commands": [{"program": "mytool", "subcommand": "sync"}], "paths": [far_dir], "conversation": "c1"})}],
		"decision": "ask",
	},
	"grant.applied: other autonomy": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([tool_sync]),
		"grants": [{"id": "g-a", "scope": scope({"commands": [{"program": "mytool", "subcommand": "sync"}], "paths": [far_dir], "autonomy": "full"})}],
		"decision": "ask",
	},
	"grant.applied: a deny is never covered": {
		"id": "grant.applied",
		"config": far_config,
		"input": at(sh([cmd(["rm", "-rf", "/"], ["r", "f"], ["/"])]), "full"),
		"grants": [{"id": "g-rm", "scope": scope({"commands": [{"program": "rm"}], "paths": ["/"]})}],
		"decision": "deny",
	},
	"grant.applied: a passphrase is never covered": {
		"id": "grant.applied",
		"input": sh([tool_sync]),
		"config": {"workspace_only": false, "passphrase_enabled": true, "passphrase_for": ["medium", "high"]},
		"grants": tool_sync_grant,
		"decision": "passphrase",
	},
	"grant.applied: http to another host": {
		"id": "grant.applied",
		"config": far_config,
		"input": http({"host": "api.github.com"}, "POST"),
		"grants": [{"id": "g-h", "scope": scope({"tool": "http", "args": "", "hosts": ["example.com"], "methods": ["POST"]})}],
	},
	"grant.applied: args none with arguments": {
		"id": "grant.applied",
		"config": far_config,
		"input": sh([tool_sync]),
		"grants": [{"id": "g-n", "scope": scope({"commands": [{"program": "mytool", "subcommand": "sync"}], "args": "none", "paths": [far_dir]})}],
		"decision": "ask",
	},
}

test_grants_fires if {
	failing := {note |
		some note, tc in grants_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_grants_quiet if {
	failing := {note |
		some note, tc in grants_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}
