package claw.gate_test

import data.claw.gate

open_config := {"workspace_only": false}

paths_fires := {
	"path.outside_workspace: file_read outside": {
		"id": "path.outside_workspace",
		"input": read("file_read", ["/tmp/x"]),
		"decision": "deny",
		"risk": "high",
	},
	"path.outside_workspace: sibling with the workspace as prefix": {
		"id": "path.outside_workspace",
		"input": read("file_read", ["/home/u/ws2/x"]),
		"decision": "deny",
	},
	"path.outside_workspace: file_write outside": {
		"id": "path.outside_workspace",
		"input": at(write("file_write", ["/tmp/x"]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: file_write under read_paths": {
		"id": "path.outside_workspace",
		"input": at(write("file_write", ["/usr/share/x"]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: shell operand": {
		"id": "path.outside_workspace",
		"input": at(cat_outside, "full"),
		"decision": "deny",
	},
	"path.outside_workspace: shell output redirection": {
		"id": "path.outside_workspace",
		"input": at(redirect(sh([cmd(["echo", "hi"], [], [])]), ">", "/tmp/out"), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: shell input redirection": {
		"id": "path.outside_workspace",
		"input": at(redirect(sh([cmd(["wc", "-l"], ["l"], [])]), "<", "/tmp/in"), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: command writes": {
		"id": "path.outside_workspace",
		"input": at(sh([c({"name": "echo", "argv": ["echo"], "writes": ["/tmp/out"]})]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: action writes": {
		"id": "path.outside_workspace",
		"input": at(object.union(sh([cmd(["echo"], [], [])]), {"writes": ["/tmp/out"]}), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: tee under read_paths": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["tee", "/usr/share/x"], [], ["/usr/share/x"])]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: cp destination": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["cp", "a", "/usr/share/b"], [], ["/home/u/ws/a", "/usr/share/b"])]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: cp -t target": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["cp", "-t", "/usr/share", "a"], ["t"], ["/usr/share", "/home/u/ws/a"])]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: mv moves its sources": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["mv", "/usr/share/a", "b"], [], ["/usr/share/a", "/home/u/ws/b"])]), "full"),
		"config": {"allowed_commands": ["mv"]},
		"decision": "deny",
	},
	"path.outside_workspace: sed -i under read_paths": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["sed", "-i", "s/a/b/", "/usr/share/x"], ["i"], ["/usr/share/x"])]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: find -delete under read_paths": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["find", "/usr/share/x", "-delete"], ["delete"], ["/usr/share/x"])]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: dd of= outside": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["dd", "if=a", "of=/tmp/img"], [], [])]), "full"),
		"config": {"forbidden_commands": []},
		"decision": "deny",
	},
	"path.outside_workspace: pattern outside": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["cat", "/tmp/*"], [], ["/tmp/*"])]), "full"),
		"decision": "deny",
	},
	"path.outside_workspace: list the root": {
		"id": "path.outside_workspace",
		"input": read("file_list", ["/"]),
		"decision": "deny",
	},
	"path.forbidden: ssh key": {
		"id": "path.forbidden",
		"input": read("file_read", ["/home/u/.ssh/id_rsa"]),
		"decision": "deny",
		"risk": "high",
	},
	"path.forbidden: the entry itself": {
		"id": "path.forbidden",
		"input": read("file_list", ["/home/u/.ssh"]),
		"decision": "deny",
	},
	"path.forbidden: reads too without workspace_only": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/.aws/credentials"]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: /etc": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/etc/shadow"]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: pattern with one element": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/proc/1234/environ"]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: device pattern": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/dev/sda1"]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: any-depth pattern": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["cat", "/run/docker.sock"], [], ["/run/docker.sock"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: any-depth pattern, deeper": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/var/snap/docker/common/run/docker.sock"]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: inside the workspace": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/ws/secrets/token"]), "full"),
		"decision": "deny",
	},
	"path.forbidden: write redirection": {
		"id": "path.forbidden",
		"input": at(redirect(sh([cmd(["echo", "x"], [], [])]), ">>", "/home/u/.ssh/authorized_keys"), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: recursive grep of an ancestor": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["grep", "-r", "key", "/home/u"], ["r"], ["/home/u"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: cp -a of an ancestor": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["cp", "-a", "/home/u", "backup"], ["a"], ["/home/u", "/home/u/ws/backup"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: tar of an ancestor": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["tar", "czf", "h.tgz", "/home/u"], ["c", "z", "f"], ["/home/u/ws/h.tgz", "/home/u"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: find -exec on an ancestor": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["find", "/home/u", "-exec", "cat", "{}", ";"], ["exec"], ["/home/u"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: recursive chmod reaching a forbidden subdirectory": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["chmod", "-R", "go-rwx", "/home/u/ws"], ["R"], ["/home/u/ws"])]), "full"),
		"decision": "deny",
	},
	"path.forbidden: pattern into a forbidden directory": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["cat", "/home/u/.s*/id_rsa"], [], ["/home/u/.s*/id_rsa"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: pattern inside a forbidden directory": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["cat", "/home/u/.ssh/*"], [], ["/home/u/.ssh/*"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: pattern matching an any-depth entry": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["cat", "/run/*.sock"], [], ["/run/*.sock"])]), "full"),
		"config": open_config,
		"decision": "deny",
	},
	"path.forbidden: entry with glob characters is literal": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/a,b{c}[d]?/x"]), "full"),
		"config": {"workspace_only": false, "forbidden_paths": ["/home/u/a,b{c}[d]?"]},
		"decision": "deny",
	},
	"path.forbidden: glob supplied by Go": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/opt/x/y"]), "full"),
		"config": {"workspace_only": false, "forbidden_paths": ["/opt/x"], "forbidden_glob": "{/opt/x}{,/**}"},
		"decision": "deny",
	},
	"path.forbidden: glob supplied by Go is what counts": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/opt/z"]), "full"),
		"config": {"workspace_only": false, "forbidden_paths": [], "forbidden_glob": "{/opt/z}{,/**}"},
		"decision": "deny",
	},
	"path.forbidden: forbidden root forbids everything": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/ws/a"]), "full"),
		"config": {"forbidden_paths": ["/"]},
		"decision": "deny",
	},
}

paths_quiet := {
	"path.outside_workspace: inside the workspace": {
		"id": "path.outside_workspace",
		"input": read("file_read", ["/home/u/ws/a", "/home/u/ws"]),
		"decision": "allow",
	},
	"path.outside_workspace: read_paths": {
		"id": "path.outside_workspace",
		"input": read("file_read", ["/usr/share/dict/words", "/usr", "/lib/x"]),
		"decision": "allow",
	},
	"path.outside_workspace: safe devices": {
		"id": "path.outside_workspace",
		"input": at(redirect(sh([cmd(["cat", "/dev/urandom"], [], ["/dev/urandom"])]), ">", "/dev/null"), "full"),
		"decision": "allow",
	},
	"path.outside_workspace: descriptor duplication is not a path": {
		"id": "path.outside_workspace",
		"input": at(redirect(sh([cmd(["ls"], [], [])]), ">&", "&2"), "full"),
		"decision": "allow",
	},
	"path.outside_workspace: cp reads its sources": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["cp", "/usr/share/a", "b"], [], ["/usr/share/a", "/home/u/ws/b"])]), "full"),
		"decision": "allow",
	},
	"path.outside_workspace: workspace_only off": {
		"id": "path.outside_workspace",
		"input": at(write("file_write", ["/tmp/x"]), "full"),
		"config": open_config,
		"decision": "allow",
	},
	"path.outside_workspace: relative dd target": {
		"id": "path.outside_workspace",
		"input": at(sh([cmd(["dd", "if=a", "of=b"], [], [])]), "full"),
		"config": {"forbidden_commands": []},
		"decision": "allow",
	},
	"path.outside_workspace: no paths": {
		"id": "path.outside_workspace",
		"input": kind("time"),
		"decision": "allow",
	},
	"path.forbidden: a look-alike of an entry": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/.sshx", "/etcx/a", "/home/u/.ssh-backup"]), "full"),
		"config": open_config,
		"decision": "allow",
	},
	"path.forbidden: pattern does not match another file": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/proc/1234/status", "/proc/1234/x/environ", "/dev/null"]), "full"),
		"config": open_config,
		"decision": "allow",
	},
	"path.forbidden: any-depth pattern needs the exact name": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/run/docker.socket", "/run/xdocker.sock"]), "full"),
		"config": open_config,
		"decision": "allow",
	},
	"path.forbidden: grep in the workspace": {
		"id": "path.forbidden",
		"input": sh([cmd(["grep", "-r", "rm -rf /", "docs"], ["r"], ["/home/u/ws/docs"])]),
		"decision": "allow",
	},
	"path.forbidden: non-recursive command on an ancestor": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["ls", "/home/u"], [], ["/home/u"])]), "full"),
		"config": open_config,
		"decision": "allow",
	},
	"path.forbidden: pattern that cannot reach a forbidden path": {
		"id": "path.forbidden",
		"input": at(sh([cmd(["cat", "/home/u/ws/*.txt"], [], ["/home/u/ws/*.txt"])]), "full"),
		"decision": "allow",
	},
	"path.forbidden: empty glob supplied by Go is ignored": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/.sshx"]), "full"),
		"config": {"workspace_only": false, "forbidden_glob": ""},
		"decision": "allow",
	},
	"path.forbidden: no forbidden paths": {
		"id": "path.forbidden",
		"input": at(read("file_read", ["/home/u/.ssh/id_rsa"]), "full"),
		"config": {"workspace_only": false, "forbidden_paths": []},
		"decision": "allow",
	},
}

# Messages name the path and the entry that forbids it.
test_forbidden_message_names_the_entry if {
	res := decide(read("file_read", ["/proc/77/environ"]), open_config)
	some r in res.reasons
	r.id == "path.forbidden"
	r.msg == "/proc/77/environ is forbidden (forbidden_paths: /proc/*/environ)"
}

test_outside_message_says_read_or_write if {
	res := decide(at(sh([cmd(["cp", "/tmp/a", "/tmp/b"], [], ["/tmp/a", "/tmp/b"])]), "full"), {})
	msgs := {r.msg | some r in res.reasons; r.id == "path.outside_workspace"}
	msgs == {
		"reading /tmp/a outside the workspace is not allowed",
		"writing /tmp/b outside the workspace is not allowed",
	}
}

test_paths_fires if {
	failing := {note |
		some note, tc in paths_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_paths_quiet if {
	failing := {note |
		some note, tc in paths_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}

# The name sets that guard rule families cover every name the rules
# behind them look at.
test_path_writers_cover_command_writes if {
	names := (gate.modifies_operands | gate.copies_to_last) | {"sed", "perl", "ruby", "find", "dd"}
	count(names - gate.path_writers) == 0
}

test_expanding_names_cover_expands if {
	every n in {"mv", "tar", "rsync", "rg", "ag", "7z", "bsdtar", "cp", "find", "rm", "grep", "chmod", "chown", "zip", "diff", "scp", "chattr", "setfacl", "egrep", "fgrep", "chgrp"} {
		n in gate.expanding_names
	}
}

test_destroy_family_covers_destructive_rules if {
	names := {
		"rm", "find", "dd", "chmod", "chown", "chgrp", "setfacl", "chattr",
		"crontab", "sysctl", "mv", "rsync",
	}
	every n in ((names | gate.power_commands) | gate.mkfs_names) | gate.kill_names {
		"destroy" in gate.program_families[n]
	}
	"destroy" in gate.program_prefix_families["mkfs."]
}

# first_forbidden_below finds the first entry, in list order, that starts
# with the directory: the same entry as testing every entry in turn.
test_first_forbidden_below if {
	entries := ["**/docker.sock", "/x/home/u/y", "/home/ü/x", "/a", "/etc/shadow", "/home/u/.ssh", "/home/u/.aws"]
	every d in ["/", "/home/u/", "/home/ü/", "/etc/", "/x/"] {
		got := gate.first_forbidden_below(d) with data.claw.config.forbidden_paths as entries
		got == [x | some x in entries; startswith(x, d)][0]
	}
	gate.first_forbidden_below("/home/u/") == "/home/u/.ssh" with data.claw.config.forbidden_paths as entries
	not gate.first_forbidden_below("/var/") with data.claw.config.forbidden_paths as entries
	not gate.first_forbidden_below("u/") with data.claw.config.forbidden_paths as entries
	not gate.first_forbidden_below("/a\u0000/etc/") with data.claw.config.forbidden_paths as entries
}
