package claw.gate_test

# Grants: a grant covers an ask exactly within its scope, and never a
# deny or a passphrase.

scope(o) := object.union(
	{"tool": "shell", "commands": [], "args": "any", "paths": [], "hosts": [], "methods": [], "autonomy": "", "conversation": ""},
	o,
)

git_status_grant := [{"id": "g-go", "scope": scope({"commands": [{"program": "git", "subcommand": "status"}], "paths": [ws]})}]

git_status := cmd(["git", "status", "."], [], ["/home/u/ws"])

grants_fires := {
	"grant.applied: git status in the workspace": {
		"id": "grant.applied",
		"input": sh([git_status]),
		"grants": git_status_grant,
		"decision": "allow",
		"risk": "medium",
	},
	"grant.applied: workspace write": {
		"id": "grant.applied",
		"input": write("file_write", ["/home/u/ws/a.go"]),
		"grants": [{"id": "g-w", "scope": scope({"tool": "file_write", "args": "", "paths": [ws]})}],
		"decision": "allow",
	},
	"grant.applied: http POST to its host": {
		"id": "grant.applied",
		"input": http({}, "POST"),
		"grants": [{"id": "g-h", "scope": scope({"tool": "http", "args": "", "hosts": ["example.com"], "methods": ["POST"]})}],
		"decision": "allow",
	},
	"grant.applied: scoped to this conversation": {
		"id": "grant.applied",
		"input": object.union(sh([git_status]), {"context": {"conversation": "c1"}}),
		"grants": [{"id": "g-c", "scope": scope({"commands": [{"program": "git", "subcommand": "status"}], "paths": [ws], "conversation": "c1"})}],
		"decision": "allow",
	},
}

grants_quiet := {
	"grant.applied: another subcommand": {
		"id": "grant.applied",
		"input": sh([cmd(["git", "log", "."], [], ["/home/u/ws"])]),
		"grants": git_status_grant,
		"decision": "ask",
	},
	"grant.applied: a second program": {
		"id": "grant.applied",
		"input": sh([git_status, cmd(["cat", "/home/u/ws/x"], [], ["/home/u/ws/x"])]),
		"grants": git_status_grant,
		"decision": "ask",
	},
	"grant.applied: a path outside the scope": {
		"id": "grant.applied",
		"input": sh([cmd(["git", "status", "/usr/x"], [], ["/usr/x"])]),
		"grants": git_status_grant,
	},
	"grant.applied: marked command": {
		"id": "grant.applied",
		"input": sh([marked(git_status, "exec_flag", "git status -c")]),
		"grants": git_status_grant,
	},
	"grant.applied: dynamic command": {
		"id": "grant.applied",
		"input": shp([git_status], {"dynamic": true}),
		"grants": git_status_grant,
	},
	"grant.applied: other conversation": {
		"id": "grant.applied",
		"input": object.union(sh([git_status]), {"context": {"conversation": "c2"}}),
		"grants": [{"id": "g-c", "scope": scope({"commands": [{"program": "git", "subcommand": "status"}], "paths": [ws], "conversation": "c1"})}],
		"decision": "ask",
	},
	"grant.applied: other autonomy": {
		"id": "grant.applied",
		"input": sh([git_status]),
		"grants": [{"id": "g-a", "scope": scope({"commands": [{"program": "git", "subcommand": "status"}], "paths": [ws], "autonomy": "full"})}],
		"decision": "ask",
	},
	"grant.applied: a deny is never covered": {
		"id": "grant.applied",
		"input": at(sh([cmd(["rm", "-rf", "/"], ["r", "f"], ["/"])]), "full"),
		"grants": [{"id": "g-rm", "scope": scope({"commands": [{"program": "rm"}], "paths": ["/"]})}],
		"decision": "deny",
	},
	"grant.applied: a passphrase is never covered": {
		"id": "grant.applied",
		"input": sh([git_status]),
		"config": {"passphrase_enabled": true, "passphrase_for": ["medium", "high"]},
		"grants": git_status_grant,
		"decision": "passphrase",
	},
	"grant.applied: http to another host": {
		"id": "grant.applied",
		"input": http({"host": "api.github.com"}, "POST"),
		"grants": [{"id": "g-h", "scope": scope({"tool": "http", "args": "", "hosts": ["example.com"], "methods": ["POST"]})}],
	},
	"grant.applied: args none with arguments": {
		"id": "grant.applied",
		"input": sh([git_status]),
		"grants": [{"id": "g-n", "scope": scope({"commands": [{"program": "git", "subcommand": "status"}], "args": "none", "paths": [ws]})}],
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
