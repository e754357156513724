package claw.user.loose_test

import data.claw.gate

# Everything opened up that configuration can open.
config := {
	"workspace_only": false,
	"forbidden_paths": [],
	"forbidden_commands": [],
	"allowed_commands": ["*"],
	"allow_privilege_escalation": true,
	"passphrase_enabled": true,
	"passphrase_for": ["low", "medium", "high", "critical", "destructive.rm_root"],
}

rm_rf_root := {
	"version": 1,
	"kind": "shell",
	"action": {"tool": "shell", "args": {"command": "rm -rf /"}},
	"parsed": {
		"commands": [{
			"name": "rm", "argv": ["rm", "-rf", "/"], "opts": ["r", "f"],
			"operands": ["/"], "paths": ["/"], "writes": [], "marks": [],
			"dynamic": false,
		}],
		"redirects": [], "dynamic": false, "error": "",
	},
	"paths": ["/"],
	"writes": [],
	"context": {"autonomy": "full", "workspace": "/home/u/ws", "cwd": "/home/u/ws", "home": "/home/u", "estop": false},
}

test_user_module_cannot_allow_a_destructive_command if {
	res := gate.result with input as rm_rf_root with data.claw.config as config
	res.decision == "deny"
	res.risk == "critical"
	some r in res.reasons
	r.id == "destructive.rm_root"
	r.severity == "critical"
}
