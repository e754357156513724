# Fixtures shared by the tests of package claw.gate: a configuration like
# the one Go builds, and builders for inputs.
#
# Rule tests are tables, one pair per test file: <file>_fires lists
# inputs for which a rule id must be among the reasons, <file>_quiet
# inputs for which it must not. A case may pin the decision and risk, and
# override the configuration and the user policies. policies_test.go
# checks that every rule id has cases of both kinds.
package claw.gate_test

import data.claw.gate

config := {
	"workspace_only": true,
	"forbidden_paths": [
		"/etc", "/sys", "/boot", "/root", "/home/u/.ssh", "/home/u/.aws",
		"/home/u/.gnupg", "/proc/*/environ", "/proc/*/mem", "/dev/sd*",
		"/dev/nvme*", "**/docker.sock", "/home/u/ws/secrets",
	],
	"read_paths": ["/usr", "/bin", "/lib"],
	"forbidden_commands": ["rm", "shutdown", "reboot", "mkfs", "dd"],
	"allowed_commands": ["ls", "cat", "grep", "find", "head", "echo", "git", "python3", "wc", "chmod", "cp", "tee", "touch", "kill", "sed", "tar"],
	"allowed_domains": ["example.com", "*.github.com"],
	"passphrase_enabled": false,
	"passphrase_for": ["high"],
	"allow_privilege_escalation": false,
}

ws := "/home/u/ws"

ctx := {
	"autonomy": "supervised",
	"workspace": ws,
	"cwd": ws,
	"home": "/home/u",
	"channel": "cli",
	"estop": false,
}

base := {
	"version": 1,
	"action": {"tool": "", "args": {}},
	"kind": "",
	"parsed": null,
	"paths": [],
	"writes": [],
	"url": null,
	"errors": [],
	"context": ctx,
}

# at(act, autonomy) is act at another autonomy.
at(act, autonomy) := object.union(act, {"context": {"autonomy": autonomy}})

# kind(k) is an action of kind k with no arguments.
kind(k) := object.union(base, {"kind": k, "action": {"tool": k}})

# read(k, paths) is a file_read or file_list of paths.
read(k, paths) := object.union(base, {"kind": k, "action": {"tool": k}, "paths": paths})

# write(k, paths) is a file_write or edit_file of paths.
write(k, paths) := object.union(base, {"kind": k, "action": {"tool": k}, "paths": paths, "writes": paths})

# http(url, method) is an http action; url is merged into a public https
# URL of example.com.
http(url, method) := object.union(base, {
	"kind": "http",
	"action": {"tool": "http", "args": {"method": method}},
	"url": object.union(
		{"raw": "", "scheme": "https", "host": "example.com", "port": 443, "userinfo": false, "ip": "", "class": "public", "error": ""},
		url,
	),
})

# c(o) is a parsed command: o overrides the fields of an empty one.
c(o) := object.union(
	{
		"name": "", "argv": [], "opts": [], "operands": [], "paths": [],
		"writes": [], "assigns": [], "depth": 0, "via": [], "stdin": "",
		"dynamic": false, "marks": [],
	},
	o,
)

# cmd(argv, opts, paths) is a parsed command from its argv; operands are
# the arguments that do not start with "-".
cmd(argv, opts, paths) := c({
	"name": argv[0],
	"argv": argv,
	"opts": opts,
	"operands": [a | some a in array.slice(argv, 1, count(argv)); not startswith(a, "-")],
	"paths": paths,
})

# marked(cm, kind, detail) is cm with one more mark.
marked(cm, kind, detail) := object.union(cm, {"marks": array.concat(cm.marks, [{"kind": kind, "detail": detail}])})

# sh(cmds) is a shell action running cmds.
sh(cmds) := shp(cmds, {})

# shp(cmds, parsed) is a shell action whose analysis is overridden by parsed.
shp(cmds, parsed) := object.union(base, {
	"kind": "shell",
	"action": {"tool": "shell", "args": {"command": concat("; ", [concat(" ", x.argv) | some x in cmds])}},
	"parsed": object.union(
		{
			"commands": cmds, "redirects": [], "dynamic": false,
			"dynamic_reasons": [], "fork_bomb": false, "network": [],
			"error": "",
		},
		parsed,
	),
	"paths": [p | some x in cmds; some p in x.paths],
})

# redirect(act, op, target) adds an output redirection to a shell action.
redirect(act, op, target) := object.union(act, {"parsed": {"redirects": [{"op": op, "target": target, "write": op != "<"}]}})

# decide evaluates the gate for act under the fixture configuration
# overridden by cfg, without user policies.
decide(act, cfg) := decide_user(act, cfg, {})

# decide_user is decide with user policies: user replaces data.claw.user.
decide_user(act, cfg, user) := res if {
	res := gate.result with input as act
		with data.claw.config as object.union(config, cfg)
		with data.claw.user as user
}

ids(res) := {r.id | some r in res.reasons}

# check(tc) decides a table case and checks its optional expectations,
# and that the result is well formed.
check(tc) := res if {
	res := decide_user(tc.input, object.get(tc, "config", {}), object.get(tc, "user", {})) with data.claw.grants as object.get(tc, "grants", [])
	object.get(tc, "decision", res.decision) == res.decision
	object.get(tc, "risk", res.risk) == res.risk
	res.decision in {"allow", "ask", "passphrase", "deny"}
	res.risk in {"low", "medium", "high", "critical"}
	count(res.reasons) > 0
}

# fires_ok(tc): the case's rule id is among the reasons, with the case's
# severity when it names one.
fires_ok(tc) if {
	some r in check(tc).reasons
	r.id == tc.id
	object.get(tc, "severity", r.severity) == r.severity
}

# quiet_ok(tc): the case's rule id is not among the reasons.
quiet_ok(tc) if not tc.id in ids(check(tc))

# no_failures(failing) holds when the set of failing case notes is empty;
# otherwise it prints them, so the test report names them, and fails.
no_failures(failing) if {
	count(failing) == 0
} else := false if {
	print("failing cases:", sort(failing))
}

# fires and quiet are all the tables of the test files, for the checks
# in main_test.rego and policies_test.go.
fires := object.union_n([
	tools_fires, main_fires, paths_fires, commands_fires,
	destructive_fires, network_fires, grants_fires, reach_fires, plugins_fires,
])

quiet := object.union_n([
	tools_quiet, main_quiet, paths_quiet, commands_quiet,
	destructive_quiet, network_quiet, grants_quiet, reach_quiet, plugins_quiet,
])

# dest is a canonical destination of a shell action.
dest(host, port, sends) := {
	"command": "git", "raw": host, "scheme": "https", "host": host, "port": port,
	"userinfo": false, "class": "public", "how": "url", "sends": sends, "known": true, "error": "",
}

# pushing sends data to an allowed host; fetching only fetches from one.
pushing := object.union(sh([cmd(["git", "push", "https://example.com/r"], [], [])]), {"destinations": [dest("example.com", 443, true)]})

fetching := object.union(sh([cmd(["git", "fetch", "https://example.com/r"], [], [])]), {"destinations": [dest("example.com", 443, false)]})

# far writes outside the workspace (allowed only without workspace_only).
far := sh([cmd(["touch", "/tmp/x"], [], ["/tmp/x"])])
