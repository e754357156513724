package claw.user.team_test

import data.claw.gate

config := {
	"workspace_only": true,
	"forbidden_paths": ["/home/u/.ssh"],
	"forbidden_commands": ["rm"],
	"allowed_commands": ["git", "terraform", "ls"],
	"passphrase_enabled": true,
	"passphrase_for": [],
}

context := {"autonomy": "full", "workspace": "/home/u/ws", "cwd": "/home/u/ws", "home": "/home/u", "estop": false}

shell(argv) := {
	"version": 1,
	"kind": "shell",
	"action": {"tool": "shell", "args": {"command": concat(" ", argv)}},
	"parsed": {
		"commands": [{
			"name": argv[0], "argv": argv, "opts": [],
			"operands": array.slice(argv, 1, count(argv)), "paths": [],
			"writes": [], "marks": [], "dynamic": false,
		}],
		"redirects": [], "dynamic": false, "error": "",
	},
	"paths": [],
	"writes": [],
	"context": context,
}

read(path) := {"version": 1, "kind": "file_read", "action": {"tool": "file_read"}, "paths": [path], "writes": [], "context": context}

ids(res) := {r.id | some r in res.reasons}

test_user_deny_applies if {
	res := gate.result with input as shell(["terraform", "destroy"]) with data.claw.config as config
	res.decision == "deny"
	"team.terraform_destroy" in ids(res)
}

test_user_deny_only_where_it_matches if {
	res := gate.result with input as shell(["terraform", "plan"]) with data.claw.config as config
	res.decision == "allow"
}

test_user_ask_raises_an_allow if {
	res := gate.result with input as shell(["git", "push"]) with data.claw.config as config
	res.decision == "ask"
	"team.git_push" in ids(res)
}

test_user_passphrase if {
	res := gate.result with input as read("/home/u/ws/.env") with data.claw.config as config
	res.decision == "passphrase"
	"team.env_file" in ids(res)
}

test_user_passphrase_without_passphrase_denies if {
	res := gate.result with input as read("/home/u/ws/.env")
		with data.claw.config as object.union(config, {"passphrase_enabled": false})
	res.decision == "deny"
	"passphrase.unavailable" in ids(res)
}

test_builtin_rules_still_apply if {
	res := gate.result with input as read("/home/u/.ssh/id_rsa") with data.claw.config as config
	res.decision == "deny"
	"path.forbidden" in ids(res)
}
