package claw.gate_test

import data.claw.gate

# Commands used across the combination tests.
ls := cmd(["ls", "-la"], ["l", "a"], [])

curl := cmd(["curl", "https://example.com"], [], [])

inline := marked(cmd(["python3", "-c", "print(1)"], ["c"], []), "inline_code", "python3 -c")

rm_build := cmd(["rm", "-rf", "./build"], ["r", "f"], ["/home/u/ws/build"])

cat_outside := sh([cmd(["cat", "/tmp/x"], [], ["/tmp/x"])])

user_reason(id, severity) := {"id": id, "severity": severity, "msg": concat(" ", [id, "says so"])}

main_fires := {
	"allow.low_risk: supervised low-risk read": {
		"id": "allow.low_risk",
		"input": read("file_read", ["/home/u/ws/a"]),
		"decision": "allow",
		"risk": "low",
	},
	"allow.low_risk: readonly time": {
		"id": "allow.low_risk",
		"input": at(kind("time"), "readonly"),
		"decision": "allow",
		"risk": "low",
	},
	"allow.low_risk: readonly ask_user": {
		"id": "allow.low_risk",
		"input": at(kind("ask_user"), "readonly"),
		"decision": "allow",
		"risk": "low",
	},
	"allow.low_risk: readonly yield_to_user": {
		"id": "allow.low_risk",
		"input": at(kind("yield_to_user"), "readonly"),
		"decision": "allow",
		"risk": "low",
	},
	"allow.full_autonomy: high-risk write outside": {
		"id": "allow.full_autonomy",
		"input": at(write("file_write", ["/tmp/a"]), "full"),
		"config": {"workspace_only": false},
		"decision": "allow",
		"risk": "high",
	},
	"allow.full_autonomy: medium shell": {
		"id": "allow.full_autonomy",
		"input": at(pushing, "full"),
		"decision": "allow",
		"risk": "medium",
	},
	"autonomy.supervised.ask: shell sending data": {
		"id": "autonomy.supervised.ask",
		"input": pushing,
		"decision": "ask",
		"risk": "medium",
	},
	"autonomy.supervised.ask: write outside": {
		"id": "autonomy.supervised.ask",
		"input": write("edit_file", ["/tmp/a"]),
		"config": {"workspace_only": false},
		"decision": "ask",
		"risk": "high",
	},
	"autonomy.supervised.ask: shell writing outside": {
		"id": "autonomy.supervised.ask",
		"input": far,
		"config": {"workspace_only": false},
		"decision": "ask",
		"risk": "medium",
	},
	"autonomy.supervised.ask: generic tool": {
		"id": "autonomy.supervised.ask",
		"input": kind("tool"),
		"decision": "ask",
		"risk": "medium",
	},
	"autonomy.supervised.ask: delegate": {
		"id": "autonomy.supervised.ask",
		"input": kind("delegate"),
		"decision": "ask",
		"risk": "medium",
	},
	"allow.full_autonomy: delegate": {
		"id": "allow.full_autonomy",
		"input": at(kind("delegate"), "full"),
		"decision": "allow",
		"risk": "medium",
	},
	"autonomy.readonly: delegate": {
		"id": "autonomy.readonly",
		"input": at(kind("delegate"), "readonly"),
		"decision": "deny",
	},
	"autonomy.readonly: write": {
		"id": "autonomy.readonly",
		"input": at(write("file_write", ["/home/u/ws/a"]), "readonly"),
		"decision": "deny",
		"risk": "low",
	},
	"autonomy.readonly: shell that writes": {
		"id": "autonomy.readonly",
		"input": at(sh([cmd(["touch", "/home/u/ws/a"], [], ["/home/u/ws/a"])]), "readonly"),
		"decision": "deny",
	},
	"autonomy.readonly: shell with network": {
		"id": "autonomy.readonly",
		"input": at(fetching, "readonly"),
		"decision": "deny",
	},
	"autonomy.readonly: http post": {
		"id": "autonomy.readonly",
		"input": at(http({}, "POST"), "readonly"),
		"decision": "deny",
	},
	"autonomy.readonly: medium read outside the workspace": {
		"id": "autonomy.readonly",
		"input": at(read("file_read", ["/tmp/words"]), "readonly"),
		"config": {"workspace_only": false},
		"decision": "deny",
		"risk": "medium",
	},
	"autonomy.readonly: generic tool": {
		"id": "autonomy.readonly",
		"input": at(kind("tool"), "readonly"),
		"decision": "deny",
	},
	"autonomy.readonly: low read with a user ask": {
		"id": "autonomy.readonly",
		"input": at(read("file_read", ["/home/u/ws/a"]), "readonly"),
		"user": {"t": {"ask": {user_reason("user.t.ask", "low")}}},
		"decision": "deny",
	},
	"autonomy.readonly: passphrase never opens readonly": {
		"id": "autonomy.readonly",
		"input": at(write("file_write", ["/home/u/ws/a"]), "readonly"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["medium"]},
		"decision": "deny",
	},
	"passphrase.required: full high risk": {
		"id": "passphrase.required",
		"input": at(write("file_write", ["/tmp/a"]), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["high"], "workspace_only": false},
		"decision": "passphrase",
		"risk": "high",
	},
	"passphrase.required: supervised high risk instead of ask": {
		"id": "passphrase.required",
		"input": write("file_write", ["/tmp/a"]),
		"config": {"passphrase_enabled": true, "passphrase_for": ["high"], "workspace_only": false},
		"decision": "passphrase",
	},
	"passphrase.required: supervised medium instead of ask": {
		"id": "passphrase.required",
		"input": pushing,
		"config": {"passphrase_enabled": true, "passphrase_for": ["medium"]},
		"decision": "passphrase",
	},
	"passphrase.required: ask reason id listed": {
		"id": "passphrase.required",
		"input": at(sh([inline]), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["shell.inline_code"]},
		"decision": "passphrase",
	},
	"passphrase.required: non-critical deny rule listed": {
		"id": "passphrase.required",
		"input": at(cat_outside, "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["path.outside_workspace"]},
		"decision": "passphrase",
	},
	"passphrase.required: user passphrase reason": {
		"id": "passphrase.required",
		"input": read("file_read", ["/home/u/ws/.env"]),
		"config": {"passphrase_enabled": true, "passphrase_for": []},
		"user": {"t": {"passphrase": {user_reason("user.t.env", "medium")}}},
		"decision": "passphrase",
		"risk": "medium",
	},
	"passphrase.required: readonly low read with a user passphrase": {
		"id": "passphrase.required",
		"input": at(read("file_read", ["/home/u/ws/.env"]), "readonly"),
		"config": {"passphrase_enabled": true},
		"user": {"t": {"passphrase": {user_reason("user.t.env", "low")}}},
		"decision": "passphrase",
	},
	"passphrase.unavailable: user passphrase without a passphrase": {
		"id": "passphrase.unavailable",
		"input": read("file_read", ["/home/u/ws/.env"]),
		"config": {"passphrase_enabled": false},
		"user": {"t": {"passphrase": {user_reason("user.t.env", "medium")}}},
		"decision": "deny",
	},
	"user.invalid_reason: a string in deny": {
		"id": "user.invalid_reason",
		"input": kind("time"),
		"user": {"t": {"deny": {"no"}}},
		"decision": "deny",
	},
	"user.invalid_reason: no id in ask": {
		"id": "user.invalid_reason",
		"input": kind("time"),
		"user": {"t": {"ask": {{"msg": "no id"}}}},
		"decision": "deny",
	},
	"user.invalid_reason: empty id in passphrase": {
		"id": "user.invalid_reason",
		"input": kind("time"),
		"user": {"t": {"passphrase": {{"id": ""}}}},
		"decision": "deny",
	},
	"user deny applies": {
		"id": "user.t.deny",
		"input": at(kind("time"), "full"),
		"user": {"t": {"deny": {user_reason("user.t.deny", "medium")}}},
		"decision": "deny",
		"risk": "medium",
	},
	"user ask raises an allow": {
		"id": "user.t.ask",
		"input": at(kind("time"), "full"),
		"user": {"t": {"ask": {user_reason("user.t.ask", "low")}}},
		"decision": "ask",
		"risk": "low",
	},
	"user ask at supervised low risk": {
		"id": "user.t.ask",
		"input": kind("time"),
		"user": {"t": {"ask": {user_reason("user.t.ask", "low")}}},
		"decision": "ask",
	},
	"user reason without severity counts as high": {
		"id": "user.t.nosev",
		"input": at(kind("time"), "full"),
		"user": {"t": {"ask": {{"id": "user.t.nosev"}}}},
		"decision": "ask",
		"risk": "high",
	},
	"user deny cannot undo a destructive deny": {
		"id": "destructive.fork_bomb",
		"input": at(shp([cmd([":"], [], [])], {"fork_bomb": true}), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["destructive.fork_bomb", "critical", "high"]},
		"user": {"t": {
			"allow": true,
			"decision": "allow",
			"deny": set(),
			"passphrase": {user_reason("destructive.fork_bomb", "low")},
		}},
		"decision": "deny",
		"risk": "critical",
	},
	"two user modules both apply": {
		"id": "user.b.deny",
		"input": at(kind("time"), "full"),
		"user": {
			"a": {"ask": {user_reason("user.a.ask", "low")}},
			"b": {"deny": {user_reason("user.b.deny", "high")}},
		},
		"decision": "deny",
	},
}

main_quiet := {
	"allow.low_risk: not at full autonomy": {
		"id": "allow.low_risk",
		"input": at(kind("time"), "full"),
		"decision": "allow",
	},
	"allow.low_risk: not for medium risk": {
		"id": "allow.low_risk",
		"input": pushing,
		"decision": "ask",
	},
	"allow.full_autonomy: not at supervised": {
		"id": "allow.full_autonomy",
		"input": kind("time"),
		"decision": "allow",
	},
	"allow.full_autonomy: not when an ask reason exists": {
		"id": "allow.full_autonomy",
		"input": at(sh([inline]), "full"),
		"decision": "ask",
	},
	"allow.full_autonomy: not when a rule denies": {
		"id": "allow.full_autonomy",
		"input": at(cat_outside, "full"),
		"decision": "deny",
	},
	"autonomy.supervised.ask: not at full": {
		"id": "autonomy.supervised.ask",
		"input": at(pushing, "full"),
		"decision": "allow",
	},
	"autonomy.supervised.ask: not for a low-risk ask": {
		"id": "autonomy.supervised.ask",
		"input": kind("time"),
		"user": {"t": {"ask": {user_reason("user.t.ask", "low")}}},
		"decision": "ask",
	},
	"autonomy.readonly: low read": {
		"id": "autonomy.readonly",
		"input": at(read("file_list", ["/home/u/ws"]), "readonly"),
		"decision": "allow",
	},
	"autonomy.readonly: http get to an allowed host": {
		"id": "autonomy.readonly",
		"input": at(http({}, "GET"), "readonly"),
		"decision": "allow",
	},
	"autonomy.readonly: http head": {
		"id": "autonomy.readonly",
		"input": at(http({}, "HEAD"), "readonly"),
		"decision": "allow",
	},
	"autonomy.readonly: memory search": {
		"id": "autonomy.readonly",
		"input": at(kind("memory_search"), "readonly"),
		"decision": "allow",
	},
	"autonomy.readonly: not when a rule denies": {
		"id": "autonomy.readonly",
		"input": at(read("file_read", ["/etc/shadow"]), "readonly"),
		"decision": "deny",
	},
	"passphrase.required: disabled": {
		"id": "passphrase.required",
		"input": at(sh([curl]), "full"),
		"config": {"passphrase_enabled": false, "passphrase_for": ["high"]},
		"decision": "allow",
	},
	"passphrase.required: risk not listed": {
		"id": "passphrase.required",
		"input": at(sh([curl]), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["medium"]},
		"decision": "allow",
	},
	"passphrase.required: critical deny rule listed": {
		"id": "passphrase.required",
		"input": at(sh([cmd(["rm", "-rf", "/"], ["r", "f"], ["/"])]), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["destructive.rm_root", "cmd.forbidden", "path.forbidden", "path.outside_workspace", "critical"]},
		"decision": "deny",
	},
	"passphrase.required: one deny rule not listed": {
		"id": "passphrase.required",
		"input": at(sh([cmd(["cat", "/tmp/x", "/etc/passwd"], [], ["/tmp/x", "/etc/passwd"])]), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["path.outside_workspace"]},
		"decision": "deny",
	},
	"passphrase.required: deny rule listed but disabled": {
		"id": "passphrase.required",
		"input": at(cat_outside, "full"),
		"config": {"passphrase_enabled": false, "passphrase_for": ["path.outside_workspace"]},
		"decision": "deny",
	},
	"passphrase.required: listed severity does not convert a deny rule": {
		"id": "passphrase.required",
		"input": at(cat_outside, "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["high"]},
		"decision": "deny",
	},
	"passphrase.unavailable: passphrase configured": {
		"id": "passphrase.unavailable",
		"input": read("file_read", ["/home/u/ws/.env"]),
		"config": {"passphrase_enabled": true},
		"user": {"t": {"passphrase": {user_reason("user.t.env", "medium")}}},
		"decision": "passphrase",
	},
	"passphrase.unavailable: no user passphrase": {
		"id": "passphrase.unavailable",
		"input": read("file_read", ["/home/u/ws/.env"]),
		"config": {"passphrase_enabled": false},
		"decision": "allow",
	},
	"user.invalid_reason: valid reasons": {
		"id": "user.invalid_reason",
		"input": at(kind("time"), "full"),
		"user": {"t": {"ask": {user_reason("user.t.ask", "low")}, "other": 1}},
		"decision": "ask",
	},
	"user.invalid_reason: no user policies": {
		"id": "user.invalid_reason",
		"input": kind("time"),
		"decision": "allow",
	},
}

# ---------------------------------------------------------------------------
# Base risk of every kind.

base_risks := {
	"time": {"input": kind("time"), "risk": "low"},
	"memory_search": {"input": kind("memory_search"), "risk": "low"},
	"file_read in the workspace": {"input": read("file_read", ["/home/u/ws/a", "/home/u/ws"]), "risk": "low"},
	"file_read of read_paths": {"input": read("file_read", ["/usr/share/a"]), "risk": "low"},
	"file_read outside without workspace_only": {"input": read("file_read", ["/tmp/a"]), "config": {"workspace_only": false}, "risk": "medium"},
	"file_list in the workspace": {"input": read("file_list", ["/home/u/ws"]), "risk": "low"},
	"file_list of read_paths": {"input": read("file_list", ["/lib"]), "risk": "low"},
	"file_list outside": {"input": read("file_list", ["/tmp"]), "config": {"workspace_only": false}, "risk": "medium"},
	"file_write in the workspace": {"input": write("file_write", ["/home/u/ws/a"]), "risk": "low"},
	"edit_file in the workspace": {"input": write("edit_file", ["/home/u/ws/a"]), "risk": "low"},
	"file_write outside without workspace_only": {"input": write("file_write", ["/tmp/a"]), "config": {"workspace_only": false}, "risk": "high"},
	"edit_file outside without workspace_only": {"input": write("edit_file", ["/tmp/a"]), "config": {"workspace_only": false}, "risk": "high"},
	"http GET to an allowed host": {"input": http({}, "GET"), "risk": "low"},
	"http get in lower case": {"input": http({}, "get"), "risk": "low"},
	"http without a method": {"input": object.union(http({}, ""), {"action": {"args": {"method": null}}}), "risk": "medium"},
	"http method missing": {"input": object.union(http({}, "GET"), {"action": {"args": {}}}), "risk": "low"},
	"http HEAD": {"input": http({}, "HEAD"), "risk": "low"},
	"http POST": {"input": http({}, "POST"), "risk": "medium"},
	"http DELETE": {"input": http({}, "DELETE"), "risk": "medium"},
	"http method not a string": {"input": http({}, 7), "risk": "medium"},
	"shell in the workspace": {"input": sh([ls, cmd(["grep", "-r", "x", "src"], ["r"], ["/home/u/ws/src"])]), "risk": "low"},
	"shell with no commands": {"input": sh([]), "risk": "low"},
	"shell of an unknown program": {"input": sh([cmd(["frobnicate", "x"], [], ["/home/u/ws/x"])]), "risk": "low"},
	"shell sending data": {"input": pushing, "risk": "medium"},
	"shell fetching from an allowed host": {"input": fetching, "risk": "low"},
	"shell with a mark that asks nothing": {"input": sh([marked(cmd(["python3"], [], []), "interpreter", "python3")]), "risk": "low"},
	"shell allowlisted running code": {"input": sh([inline]), "risk": "medium"},
	"shell writing outside": {"input": far, "config": {"workspace_only": false}, "risk": "medium"},
	"shell reading outside by an allowed command": {"input": sh([cmd(["cat", "/tmp/a"], [], ["/tmp/a"])]), "config": {"workspace_only": false}, "risk": "low"},
	"shell reading outside by another command": {"input": sh([cmd(["bat", "/tmp/a"], [], ["/tmp/a"])]), "config": {"workspace_only": false}, "risk": "medium"},
	"shell allowlisted but dynamic": {"input": sh([c({"name": "", "argv": ["$X"], "dynamic": true})]), "risk": "high"},
	"shell analysis dynamic": {"input": shp([ls], {"dynamic": true}), "risk": "high"},
	"shell rm inside the workspace": {"input": sh([rm_build]), "risk": "medium"},
	"shell call of a function surely defined": {"input": sh([ls, c({"name": "helper", "argv": ["helper"], "function": true})]), "risk": "low"},
	"generic tool": {"input": kind("tool"), "risk": "medium"},
}

test_base_risk if {
	failing := {note |
		some note, tc in base_risks
		not base_risk_ok(tc)
	}
	no_failures(failing)
}

base_risk_ok(tc) if {
	res := decide(tc.input, object.get(tc, "config", {}))
	res.risk == tc.risk
}

# The risk is raised by the severity of any reason.
test_risk_is_raised_by_reasons if {
	decide(at(read("file_read", ["/home/u/ws/a"]), "full"), {}).risk == "low"
	res := decide_user(at(read("file_read", ["/home/u/ws/a"]), "full"), {}, {"t": {"ask": {user_reason("user.t.x", "critical")}}})
	res.risk == "critical"
	res.decision == "ask"
}

# ---------------------------------------------------------------------------
# Combination by autonomy: one row per kind of outcome.

combinations := {
	"readonly low read allows": {"input": at(read("file_read", ["/home/u/ws/a"]), "readonly"), "decision": "allow"},
	"readonly medium write denies": {"input": at(write("file_write", ["/home/u/ws/a"]), "readonly"), "decision": "deny"},
	"readonly rm in workspace denies": {"input": at(sh([rm_build]), "readonly"), "decision": "deny"},
	"supervised low allows": {"input": kind("time"), "decision": "allow"},
	"supervised low shell allows": {"input": sh([ls]), "decision": "allow"},
	"supervised medium asks": {"input": pushing, "decision": "ask"},
	"supervised high asks": {"input": write("file_write", ["/tmp/a"]), "config": {"workspace_only": false}, "decision": "ask"},
	"readonly read-only shell allows": {"input": at(sh([ls]), "readonly"), "decision": "allow"},
	"supervised rm in workspace asks": {"input": sh([rm_build]), "decision": "ask"},
	"full low allows": {"input": at(kind("time"), "full"), "decision": "allow"},
	"full medium allows": {"input": at(sh([ls]), "full"), "decision": "allow"},
	"full high allows": {"input": at(sh([curl]), "full"), "decision": "allow"},
	"full ask reason asks": {"input": at(sh([inline]), "full"), "decision": "ask"},
	"full rm in workspace allows": {"input": at(sh([rm_build]), "full"), "decision": "allow"},
	"full deny rule denies": {"input": at(cat_outside, "full"), "decision": "deny"},
	"ask never lowers a deny": {"input": at(sh([inline, cmd(["cat", "/etc/passwd"], [], ["/etc/passwd"])]), "full"), "decision": "deny"},
}

test_combination if {
	failing := {note |
		some note, tc in combinations
		not combination_ok(tc)
	}
	no_failures(failing)
}

combination_ok(tc) if {
	decide(tc.input, object.get(tc, "config", {})).decision == tc.decision
}

# ---------------------------------------------------------------------------
# Reasons: at least one on every result, denials first and most severe
# first.

test_every_case_has_a_reason if {
	failing := {note |
		some note, tc in object.union(base_risks, combinations)
		not check(tc)
	}
	no_failures(failing)
}

test_result_defined_for_any_input[note] if {
	some note, value in {
		"null": null,
		"empty object": {},
		"string": "rm -rf /",
		"number": 7,
		"array": [1, 2],
		"garbage fields": {"kind": 1, "paths": "x", "writes": 2, "parsed": [], "context": "c", "url": 3, "errors": "e"},
		"shell without analysis": object.union(kind("shell"), {"parsed": null}),
	}
	res := decide(value, {})
	res.decision == "deny"
	count(res.reasons) > 0
	res.risk == "critical"
}

test_denials_come_first_most_severe_first if {
	res := decide(at(sh([cmd(["rm", "-rf", "/"], ["r", "f"], ["/"])]), "full"), {})
	res.reasons[0].id == "destructive.rm_root"
	count(res.reasons) > 2
	every i in numbers.range(1, count(res.reasons) - 1) {
		rank[res.reasons[i - 1].severity] >= rank[res.reasons[i].severity]
	}
}

rank := {"low": 0, "medium": 1, "high": 2, "critical": 3}

test_reason_shape if {
	res := decide(sh([rm_build]), {})
	every r in res.reasons {
		object.keys(r) == {"id", "severity", "msg"}
		is_string(r.msg)
		r.msg != ""
	}
}

test_ordering_deny_then_ask_then_outcome if {
	res := decide(object.union(shp([inline, cmd(["cat", "/etc/passwd"], [], ["/etc/passwd"])], {}), {"destinations": [dest("example.com", 443, true)]}), {"passphrase_enabled": false})
	[r.id | some r in res.reasons] == ["path.forbidden", "path.outside_workspace", "net.sends", "shell.inline_code"]
}

test_ordering_ask_then_outcome if {
	res := decide(object.union(shp([inline], {}), {"destinations": [dest("example.com", 443, true)]}), {"passphrase_enabled": false})
	[r.id | some r in res.reasons] == ["net.sends", "shell.inline_code"]
}

test_bad_config_types_fail_closed if {
	res := decide(cat_outside, {"workspace_only": "no", "passphrase_enabled": "yes", "allowed_commands": "cat"})
	res.decision == "deny"
	"path.outside_workspace" in ids(res)
}

test_missing_config_uses_defaults if {
	res := gate.result with input as sh([rm_build]) with data.claw.config as {} with data.claw.user as {}
	res.decision == "ask"
	"cmd.rm.workspace" in ids(res)
	res2 := gate.result with input as http({}, "GET") with data.claw.config as {} with data.claw.user as {}
	"http.domain_not_allowed" in ids(res2)
}

# ---------------------------------------------------------------------------
# Sandbox plan.

sandboxes := {
	"read in the workspace": {
		"input": read("file_read", ["/home/u/ws/a"]),
		"sandbox": {"read": ["/home/u/ws"], "write": [], "net": false},
	},
	"read of read_paths": {
		"input": read("file_read", ["/usr/share/a", "/usr/share/a"]),
		"sandbox": {"read": ["/home/u/ws", "/usr/share/a"], "write": [], "net": false},
	},
	"shell reads outside and writes the workspace": {
		"input": sh([cmd(["cat", "/usr/share/b", "/home/u/ws/c", "/dev/null"], [], ["/usr/share/b", "/home/u/ws/c", "/dev/null"])]),
		"sandbox": {"read": ["/dev/null", "/home/u/ws", "/usr/share/b"], "write": ["/home/u/ws"], "net": false},
	},
	"pattern read gives its directory": {
		"input": sh([cmd(["cat", "/usr/share/*.txt"], [], ["/usr/share/*.txt"])]),
		"sandbox": {"read": ["/home/u/ws", "/usr/share"], "write": ["/home/u/ws"], "net": false},
	},
	"forbidden read is not planned": {
		"input": read("file_read", ["/etc/passwd"]),
		"config": {"workspace_only": false},
		"sandbox": {"read": ["/home/u/ws"], "write": [], "net": false},
	},
	"outside read without workspace_only": {
		"input": read("file_read", ["/tmp/a"]),
		"config": {"workspace_only": false},
		"sandbox": {"read": ["/home/u/ws", "/tmp/a"], "write": [], "net": false},
	},
	"outside write without workspace_only": {
		"input": write("file_write", ["/tmp/a"]),
		"config": {"workspace_only": false},
		"sandbox": {"read": ["/home/u/ws", "/tmp/a"], "write": ["/home/u/ws", "/tmp/a"], "net": false},
	},
	"outside write with workspace_only is not planned": {
		"input": write("file_write", ["/tmp/a"]),
		"sandbox": {"read": ["/home/u/ws"], "write": ["/home/u/ws"], "net": false},
	},
	"edit_file": {
		"input": write("edit_file", ["/home/u/ws/a"]),
		"sandbox": {"read": ["/home/u/ws"], "write": ["/home/u/ws"], "net": false},
	},
	"http has the network": {
		"input": http({}, "GET"),
		"sandbox": {"read": ["/home/u/ws"], "write": [], "net": true},
	},
	"time": {
		"input": kind("time"),
		"sandbox": {"read": ["/home/u/ws"], "write": [], "net": false},
	},
	"generic tool": {
		"input": kind("tool"),
		"sandbox": {"read": ["/home/u/ws"], "write": [], "net": false},
	},
	"invalid workspace plans nothing": {
		"input": object.union(write("file_write", ["/home/u/ws/a"]), {"context": {"workspace": ""}}),
		"sandbox": {"read": [], "write": [], "net": false},
	},
}

test_sandbox if {
	failing := {note |
		some note, tc in sandboxes
		not sandbox_ok(tc)
	}
	no_failures(failing)
}

# A case that names no egress plan expects none.
sandbox_ok(tc) if {
	got := decide(tc.input, object.get(tc, "config", {})).sandbox
	want := object.union({"network": {"hosts": []}, "protect": got.protect}, tc.sandbox)
	got == want
}

test_sandbox_protects_workspace_exec_files if {
	got := decide(write("file_write", ["/home/u/ws/a"]), {}).sandbox.protect
	".git/hooks" in got
	".git/config" in got
	".vscode" in got
	every p in got {
		not startswith(p, "/")
		not contains(p, "..")
	}
	decide(read("file_read", ["/home/u/ws/a"]), {}).sandbox.protect == []
	decide(object.union(write("file_write", ["/home/u/ws/a"]), {"context": {"workspace": ""}}), {}).sandbox.protect == []
}

# ---------------------------------------------------------------------------
# The tables are well formed: notes are unique across files, and every
# case names a rule id.

# The counts and the loops name each table rather than binding them all to
# a local, which a tracing run (opa test -v) would copy at every step.
test_tables_are_well_formed if {
	count(fires) == sum([
		count(tools_fires), count(main_fires), count(paths_fires),
		count(commands_fires), count(destructive_fires), count(network_fires),
		count(grants_fires), count(reach_fires), count(plugins_fires),
	])
	count(quiet) == sum([
		count(tools_quiet), count(main_quiet), count(paths_quiet),
		count(commands_quiet), count(destructive_quiet), count(network_quiet),
		count(grants_quiet), count(reach_quiet), count(plugins_quiet),
	])
	every tc in fires {
		is_string(tc.id)
		tc.id != ""
	}
	every tc in quiet {
		is_string(tc.id)
		tc.id != ""
	}
}

test_main_fires if {
	failing := {note |
		some note, tc in main_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_main_quiet if {
	failing := {note |
		some note, tc in main_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}
