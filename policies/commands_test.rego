package claw.gate_test

sudo(cm) := marked(object.union(cm, {"via": ["sudo"]}), "privilege", "sudo")

commands_fires := {
	"shell.unparseable: parse error": {
		"id": "shell.unparseable",
		"input": at(shp([], {"error": "1:5: reached EOF without closing quote"}), "full"),
		"decision": "deny",
		"risk": "critical",
	},
	"shell.unparseable: bound exceeded": {
		"id": "shell.unparseable",
		"input": at(shp([ls], {"error": "too many commands"}), "full"),
		"decision": "deny",
	},
	"shell.unparseable: no analysis": {
		"id": "shell.unparseable",
		"input": at(object.union(kind("shell"), {"parsed": null}), "full"),
		"decision": "deny",
	},
	"shell.unparseable: commands missing": {
		"id": "shell.unparseable",
		"input": at(object.union(kind("shell"), {"parsed": {"error": ""}}), "full"),
		"decision": "deny",
	},
	"shell.unparseable: critical, never a passphrase": {
		"id": "shell.unparseable",
		"input": at(shp([], {"error": "x"}), "full"),
		"config": {"passphrase_enabled": true, "passphrase_for": ["shell.unparseable"]},
		"decision": "deny",
	},
	"cmd.forbidden: rm outside the workspace": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["rm", "/tmp/x"], [], ["/tmp/x"])]), "full"),
		"config": open_config,
		"decision": "deny",
		"risk": "high",
	},
	"cmd.forbidden: rm of the workspace itself": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["rm", "-rf", "."], ["r", "f"], ["/home/u/ws"])]), "full"),
		"decision": "deny",
	},
	"cmd.forbidden: rm with one path outside": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["rm", "a", "/tmp/b"], [], ["/home/u/ws/a", "/tmp/b"])]), "full"),
		"decision": "deny",
	},
	"cmd.forbidden: rm without paths": {
		"id": "cmd.forbidden",
		"input": at(sh([c({"name": "rm", "argv": ["rm", "-rf"], "opts": ["r", "f"], "via": ["xargs"]})]), "full"),
		"decision": "deny",
	},
	"cmd.forbidden: dd": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["dd", "if=a", "of=b"], [], [])]), "full"),
		"decision": "deny",
	},
	"cmd.forbidden: dotted variant": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["mkfs.ext4", "img"], [], ["/home/u/ws/img"])]), "full"),
		"decision": "deny",
	},
	"cmd.forbidden: nested in a pipeline": {
		"id": "cmd.forbidden",
		"input": at(sh([ls, object.union(cmd(["shutdown", "now"], [], []), {"via": ["bash -c"], "depth": 1})]), "full"),
		"decision": "deny",
	},
	"cmd.forbidden: user-listed command": {
		"id": "cmd.forbidden",
		"input": at(sh([curl]), "full"),
		"config": {"forbidden_commands": ["curl"]},
		"decision": "deny",
	},
	"cmd.forbidden: listed command can be passphrased": {
		"id": "cmd.forbidden",
		"input": at(sh([curl]), "full"),
		"config": {"forbidden_commands": ["curl"], "passphrase_enabled": true, "passphrase_for": ["cmd.forbidden"]},
		"decision": "passphrase",
	},
	"cmd.rm.workspace: rm -rf ./build": {
		"id": "cmd.rm.workspace",
		"input": sh([rm_build]),
		"decision": "ask",
		"risk": "medium",
	},
	"shell.outside_server: tmux default-shell": {
		"id": "shell.outside_server",
		"input": at(sh([cmd(["tmux", "set", "-g", "default-shell", "./x"], ["g"], [])]), "full"),
		"decision": "ask",
	},
	"cmd.rm.workspace: full autonomy allows it": {
		"id": "cmd.rm.workspace",
		"input": at(sh([rm_build]), "full"),
		"decision": "allow",
	},
	"cmd.rm.workspace: recursive pattern in the workspace": {
		"id": "cmd.rm.workspace",
		"input": sh([cmd(["rm", "-rf", "*.o"], ["r", "f"], ["/home/u/ws/*.o"])]),
		"decision": "ask",
	},
	"cmd.rm.workspace: find -delete": {
		"id": "cmd.rm.workspace",
		"input": sh([cmd(["find", "build", "-name", "*.o", "-delete"], [], ["/home/u/ws/build"])]),
		"decision": "ask",
	},
	"cmd.rm.workspace: git clean -fd": {
		"id": "cmd.rm.workspace",
		"input": sh([cmd(["git", "clean", "-fd"], ["f", "d"], [])]),
		"decision": "ask",
	},
	"cmd.rm.workspace: readonly denies anyway": {
		"id": "cmd.rm.workspace",
		"input": at(sh([rm_build]), "readonly"),
		"decision": "deny",
	},
	"priv.escalation: sudo": {
		"id": "priv.escalation",
		"input": at(sh([sudo(ls)]), "full"),
		"decision": "deny",
		"risk": "high",
	},
	"priv.escalation: names the wrapped command": {
		"id": "priv.escalation",
		"input": at(sh([marked(cmd(["apt-get", "install", "x"], [], []), "privilege", "doas")]), "full"),
		"decision": "deny",
	},
	"priv.escalation: dynamic wrapped command": {
		"id": "priv.escalation",
		"input": at(sh([marked(c({"argv": ["$X"], "dynamic": true}), "privilege", "pkexec")]), "full"),
		"decision": "deny",
	},
	"priv.escalation.allowed: sudo asks": {
		"id": "priv.escalation.allowed",
		"input": at(sh([sudo(ls)]), "full"),
		"config": {"allow_privilege_escalation": true},
		"decision": "ask",
		"risk": "high",
	},
	"priv.escalation.allowed: supervised asks": {
		"id": "priv.escalation.allowed",
		"input": sh([sudo(ls)]),
		"config": {"allow_privilege_escalation": true},
		"decision": "ask",
	},
	"shell.network_device: mark": {
		"id": "shell.network_device",
		"input": at(sh([marked(cmd(["cat", "x"], [], ["/home/u/ws/x"]), "network_device", "/dev/tcp/1.2.3.4/80")]), "full"),
		"decision": "deny",
		"risk": "high",
	},
	"shell.network_device: analysis network list": {
		"id": "shell.network_device",
		"input": at(shp([ls], {"network": ["/dev/udp/10.0.0.1/53"]}), "full"),
		"decision": "deny",
	},
	"shell.dynamic: analysis dynamic with reasons": {
		"id": "shell.dynamic",
		"input": at(shp([ls], {"dynamic": true, "dynamic_reasons": ["variable as a command name"]}), "full"),
		"decision": "ask",
		"risk": "high",
	},
	"shell.dynamic: analysis dynamic without reasons": {
		"id": "shell.dynamic",
		"input": at(shp([ls], {"dynamic": true, "dynamic_reasons": null}), "full"),
		"decision": "ask",
	},
	"shell.dynamic: dynamic command name": {
		"id": "shell.dynamic",
		"input": at(sh([c({"argv": ["$CMD", "-rf", "/"], "dynamic": true})]), "full"),
		"decision": "ask",
	},
	"shell.dynamic: supervised asks": {
		"id": "shell.dynamic",
		"input": shp([ls], {"dynamic": true}),
		"decision": "ask",
	},
	"shell.inline_code: python -c": {
		"id": "shell.inline_code",
		"input": at(sh([inline]), "full"),
		"decision": "ask",
		"risk": "medium",
	},
	"shell.exec_flag: sort --compress-program": {
		"id": "shell.exec_flag",
		"input": at(sh([marked(cmd(["sort", "--compress-program=sh", "x"], ["compress-program"], ["/home/u/ws/x"]), "exec_flag", "--compress-program")]), "full"),
		"decision": "ask",
		"risk": "medium",
	},
	"shell.stdin_shell: bash reading a pipe": {
		"id": "shell.stdin_shell",
		"input": at(sh([cmd(["echo", "ls"], [], []), object.union(marked(cmd(["bash"], [], []), "stdin_shell", "pipe"), {"stdin": "pipe"})]), "full"),
		"decision": "ask",
		"risk": "medium",
	},
	"shell.dangerous_env: LD_PRELOAD": {
		"id": "shell.dangerous_env",
		"input": at(sh([object.union(marked(ls, "dangerous_env", "LD_PRELOAD"), {"assigns": ["LD_PRELOAD"]})]), "full"),
		"decision": "ask",
		"risk": "medium",
	},
	"shell.reads_env: printenv": {
		"id": "shell.reads_env",
		"input": at(sh([marked(cmd(["printenv"], [], []), "reads_env", "printenv")]), "full"),
		"decision": "ask",
	},
	"shell.reads_env: an allowlisted command asks too": {
		"id": "shell.reads_env",
		"input": at(sh([marked(cmd(["echo"], [], []), "reads_env", "set")]), "full"),
		"decision": "ask",
		"risk": "medium",
	},
	"git.force_push: --force": {
		"id": "git.force_push",
		"input": at(sh([cmd(["git", "push", "--force", "origin", "main"], ["force"], [])]), "full"),
		"decision": "ask",
		"risk": "medium",
	},
	"git.force_push: asks at supervised too": {
		"id": "git.force_push",
		"input": sh([cmd(["git", "push", "-f"], ["f"], [])]),
		"decision": "ask",
		"risk": "medium",
	},
	"shell.exec_flag: allowlisted make asks at supervised": {
		"id": "shell.exec_flag",
		"input": sh([marked(cmd(["make"], [], []), "exec_flag", "make")]),
		"config": {"allowed_commands": ["make"]},
		"decision": "ask",
		"risk": "medium",
	},
	"git.force_push: -f": {
		"id": "git.force_push",
		"input": at(sh([cmd(["git", "push", "-f"], ["f"], [])]), "full"),
		"decision": "ask",
	},
	"git.force_push: +refspec": {
		"id": "git.force_push",
		"input": at(sh([cmd(["git", "push", "origin", "+main"], [], [])]), "full"),
		"decision": "ask",
	},
	"git.force_push: delete refspec": {
		"id": "git.force_push",
		"input": at(sh([cmd(["git", "push", "origin", ":main"], [], [])]), "full"),
		"decision": "ask",
	},
}

commands_quiet := {
	"shell.reads_env: a command without the mark": {
		"id": "shell.reads_env",
		"input": at(sh([cmd(["echo", "$HOME"], [], [])]), "full"),
		"decision": "allow",
	},
	"shell.unparseable: parsed": {
		"id": "shell.unparseable",
		"input": at(sh([ls]), "full"),
		"decision": "allow",
	},
	"shell.unparseable: null error": {
		"id": "shell.unparseable",
		"input": at(shp([ls], {"error": null}), "full"),
		"decision": "allow",
	},
	"shell.unparseable: not a shell action": {
		"id": "shell.unparseable",
		"input": kind("time"),
		"decision": "allow",
	},
	"cmd.forbidden: rm inside the workspace": {
		"id": "cmd.forbidden",
		"input": sh([rm_build]),
		"decision": "ask",
	},
	"cmd.forbidden: allowed command": {
		"id": "cmd.forbidden",
		"input": sh([ls]),
		"decision": "allow",
	},
	"cmd.forbidden: a name that only starts like a forbidden one": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["rmdir", "a"], [], ["/home/u/ws/a"]), cmd(["ddate"], [], [])]), "full"),
		"decision": "allow",
	},
	"cmd.forbidden: mentioned as an argument": {
		"id": "cmd.forbidden",
		"input": sh([cmd(["grep", "-r", "rm -rf /", "docs"], ["r"], ["/home/u/ws/docs"])]),
		"decision": "allow",
	},
	"cmd.forbidden: nothing forbidden": {
		"id": "cmd.forbidden",
		"input": at(sh([cmd(["rm", "/tmp/x"], [], ["/tmp/x"])]), "full"),
		"config": {"workspace_only": false, "forbidden_commands": []},
		"decision": "allow",
	},
	"shell.outside_server: tmux ls": {
		"id": "shell.outside_server",
		"input": at(sh([cmd(["tmux", "ls"], [], [])]), "full"),
		"decision": "allow",
	},
	"cmd.rm.workspace: rm of one file": {
		"id": "cmd.rm.workspace",
		"input": sh([cmd(["rm", "build/a.o"], [], ["/home/u/ws/build/a.o"])]),
		"decision": "allow",
	},
	"cmd.rm.workspace: rm outside": {
		"id": "cmd.rm.workspace",
		"input": at(sh([cmd(["rm", "/tmp/x"], [], ["/tmp/x"])]), "full"),
		"decision": "deny",
	},
	"cmd.rm.workspace: dynamic rm": {
		"id": "cmd.rm.workspace",
		"input": at(sh([object.union(rm_build, {"dynamic": true})]), "full"),
		"decision": "deny",
	},
	"cmd.rm.workspace: workspace invalid": {
		"id": "cmd.rm.workspace",
		"input": object.union(sh([rm_build]), {"context": {"workspace": ""}}),
		"decision": "deny",
	},
	"priv.escalation: no privilege": {
		"id": "priv.escalation",
		"input": at(sh([ls]), "full"),
		"decision": "allow",
	},
	"priv.escalation: allowed by configuration": {
		"id": "priv.escalation",
		"input": at(sh([sudo(ls)]), "full"),
		"config": {"allow_privilege_escalation": true},
		"decision": "ask",
	},
	"priv.escalation.allowed: not configured": {
		"id": "priv.escalation.allowed",
		"input": at(sh([sudo(ls)]), "full"),
		"decision": "deny",
	},
	"priv.escalation.allowed: no privilege": {
		"id": "priv.escalation.allowed",
		"input": at(sh([ls]), "full"),
		"config": {"allow_privilege_escalation": true},
		"decision": "allow",
	},
	"shell.network_device: none": {
		"id": "shell.network_device",
		"input": at(shp([ls], {"network": null}), "full"),
		"decision": "allow",
	},
	"shell.dynamic: static": {
		"id": "shell.dynamic",
		"input": at(sh([ls]), "full"),
		"decision": "allow",
	},
	"shell.inline_code: python script is not inline": {
		"id": "shell.inline_code",
		"input": at(sh([marked(cmd(["python3", "x.py"], [], ["/home/u/ws/x.py"]), "runs_script", "/home/u/ws/x.py")]), "full"),
		"decision": "allow",
	},
	"shell.exec_flag: plain sort": {
		"id": "shell.exec_flag",
		"input": at(sh([cmd(["sort", "x"], [], ["/home/u/ws/x"])]), "full"),
		"decision": "allow",
	},
	"shell.stdin_shell: pipe into grep": {
		"id": "shell.stdin_shell",
		"input": at(sh([ls, object.union(cmd(["grep", "x"], [], []), {"stdin": "pipe"})]), "full"),
		"decision": "allow",
	},
	"shell.dangerous_env: harmless assignment": {
		"id": "shell.dangerous_env",
		"input": at(sh([object.union(ls, {"assigns": ["LANG"]})]), "full"),
		"decision": "allow",
	},
	"git.force_push: plain push": {
		"id": "git.force_push",
		"input": at(sh([cmd(["git", "push", "origin", "main"], [], [])]), "full"),
		"decision": "allow",
	},
	"git.force_push: force fetch is not a push": {
		"id": "git.force_push",
		"input": at(sh([cmd(["git", "fetch", "-f", "origin", "+main:main"], ["f"], [])]), "full"),
		"decision": "allow",
	},
}

test_privilege_message_names_wrapper_and_command if {
	res := decide(at(sh([sudo(rm_build)]), "full"), {})
	some r in res.reasons
	r.id == "priv.escalation"
	r.msg == "sudo would run rm with elevated privileges"
}

test_dynamic_message_lists_reasons if {
	res := decide(at(shp([ls], {"dynamic": true, "dynamic_reasons": ["a", "b"]}), "full"), {})
	some r in res.reasons
	r.msg == "the command is not static: a; b"
}

test_commands_fires if {
	failing := {note |
		some note, tc in commands_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_commands_quiet if {
	failing := {note |
		some note, tc in commands_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}
