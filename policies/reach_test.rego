package claw.gate_test

# Every reach rule fires on what it names and stays quiet on its benign
# twin, at full autonomy (a denial there is a denial everywhere).

full(cmds) := at(sh(cmds), "full")

via(cm, v) := object.union(cm, {"via": [v]})

granted := {"workspace_exec_allow": [".vscode/settings.json", ".envrc", ".claude"]}

reach_fires := {
	"priv.identity: chmod u+s": {"id": "priv.identity", "input": full([cmd(["chmod", "u+s", "x"], [], ["/home/u/ws/x"])]), "decision": "deny"},
	"priv.identity: chmod =4755": {"id": "priv.identity", "input": full([cmd(["chmod", "=4755", "x"], [], ["/home/u/ws/x"])]), "decision": "deny"},
	"priv.identity: install -m 4755": {"id": "priv.identity", "input": full([cmd(["install", "-m", "4755", "a", "b"], ["m"], ["/home/u/ws/a", "/home/u/ws/b"])]), "decision": "deny"},
	"priv.identity: setcap": {"id": "priv.identity", "input": full([cmd(["setcap", "cap_net_raw+ep", "x"], [], ["/home/u/ws/x"])]), "decision": "deny"},
	"priv.identity: unshare -r": {"id": "priv.identity", "input": full([via(cmd(["bash"], [], []), "unshare")]), "decision": "deny"},
	"priv.identity: docker --privileged": {"id": "priv.identity", "input": full([cmd(["docker", "run", "--privileged", "alpine"], ["privileged"], [])]), "decision": "deny"},
	"priv.identity: chown root": {"id": "priv.identity", "input": full([cmd(["chown", "root:root", "x"], [], ["/home/u/ws/x"])]), "decision": "deny"},
	"persist.config: go env -w": {"id": "persist.config", "input": full([cmd(["go", "env", "-w", "GOFLAGS=-x"], ["w"], [])]), "decision": "deny"},
	"persist.config: npm i -g": {"id": "persist.config", "input": full([cmd(["npm", "i", "-g", "x"], ["g"], [])]), "decision": "deny"},
	"persist.config: pip install --user": {"id": "persist.config", "input": full([cmd(["pip", "install", "--user", "x"], ["user"], [])]), "decision": "deny"},
	"persist.config: python -m pip install --user": {"id": "persist.config", "input": full([cmd(["python3", "-m", "pip", "install", "--user", "x"], ["m", "user"], [])]), "decision": "deny"},
	"persist.config: git config --global": {"id": "persist.config", "input": full([cmd(["git", "config", "--global", "user.name", "x"], ["global"], [])]), "decision": "deny"},
	"persist.config: systemctl --user enable": {"id": "persist.config", "input": full([cmd(["systemctl", "--user", "enable", "x"], ["user"], [])]), "decision": "deny"},
	"persist.config: npm config set": {"id": "persist.config", "input": full([cmd(["npm", "config", "set", "registry", "x"], [], [])]), "decision": "deny"},
	"persist.delayed: at": {"id": "persist.delayed", "input": full([cmd(["at", "now"], [], [])]), "decision": "deny"},
	"persist.delayed: crontab file": {"id": "persist.delayed", "input": full([cmd(["crontab", "jobs"], [], ["/home/u/ws/jobs"])]), "decision": "deny"},
	"persist.delayed: systemd-run": {"id": "persist.delayed", "input": full([via(cmd(["x"], [], []), "systemd-run")]), "decision": "deny"},
	"persist.workspace_exec: git hook": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/.git/hooks/pre-commit"]), "full"), "decision": "deny"},
	"persist.workspace_exec: edit .git/config": {"id": "persist.workspace_exec", "input": at(write("edit_file", ["/home/u/ws/.git/config"]), "full"), "decision": "deny"},
	"persist.workspace_exec: nested .gitattributes": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/src/.gitattributes"]), "full"), "decision": "deny"},
	"persist.workspace_exec: .vscode task": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/.vscode/tasks.json"]), "full"), "decision": "deny"},
	"persist.workspace_exec: .envrc by the shell": {"id": "persist.workspace_exec", "input": full([object.union(cmd(["tee", ".envrc"], [], ["/home/u/ws/.envrc"]), {"writes": ["/home/u/ws/.envrc"]})]), "decision": "deny"},
	"persist.workspace_exec: git config core.hooksPath": {"id": "persist.workspace_exec", "input": full([cmd(["git", "config", "core.hooksPath", "h"], [], [])]), "decision": "deny"},
	"persist.workspace_exec: git config filter": {"id": "persist.workspace_exec", "input": full([cmd(["git", "config", "filter.x.clean", "sh"], [], [])]), "decision": "deny"},
	"persist.workspace_exec: direnv allow": {"id": "persist.workspace_exec", "input": full([cmd(["direnv", "allow"], [], [])]), "decision": "deny"},
	"persist.workspace_exec_allowed: listed file asks at supervised": {"id": "persist.workspace_exec_allowed", "input": at(write("file_write", ["/home/u/ws/.vscode/settings.json"]), "supervised"), "config": granted, "decision": "ask"},
	"persist.workspace_exec_allowed: listed .envrc by the shell asks": {"id": "persist.workspace_exec_allowed", "input": at(sh([object.union(cmd(["tee", ".envrc"], [], ["/home/u/ws/.envrc"]), {"writes": ["/home/u/ws/.envrc"]})]), "supervised"), "config": granted, "decision": "ask"},
	"persist.workspace_exec: sibling of a listed file": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/.vscode/tasks.json"]), "full"), "config": granted, "decision": "deny"},
	"persist.workspace_exec: parent of a listed file": {"id": "persist.workspace_exec", "input": full([object.union(cmd(["mv", "x", ".vscode"], [], ["/home/u/ws/x", "/home/u/ws/.vscode"]), {"writes": ["/home/u/ws/.vscode"]})]), "config": granted, "decision": "deny"},
	"persist.workspace_exec: listed name in a subdirectory": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/sub/.envrc"]), "full"), "config": granted, "decision": "deny"},
	"persist.workspace_exec: git hook beside a listed file": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/.git/hooks/pre-commit"]), "full"), "config": granted, "decision": "deny"},
	"cred.printer: git credential fill": {"id": "cred.printer", "input": full([cmd(["git", "credential", "fill"], [], [])]), "decision": "deny"},
	"cred.printer: gh auth token": {"id": "cred.printer", "input": full([cmd(["gh", "auth", "token"], [], [])]), "decision": "deny"},
	"cred.printer: aws configure get": {"id": "cred.printer", "input": full([cmd(["aws", "configure", "get", "aws_secret_access_key"], [], [])]), "decision": "deny"},
	"cred.printer: kubectl config view --raw": {"id": "cred.printer", "input": full([cmd(["kubectl", "config", "view", "--raw"], ["raw"], [])]), "decision": "deny"},
	"cred.printer: ssh-add -L": {"id": "cred.printer", "input": full([cmd(["ssh-add", "-L"], ["L"], [])]), "decision": "deny"},
	"cred.printer: docker credential helper": {"id": "cred.printer", "input": full([cmd(["docker-credential-pass", "list"], [], [])]), "decision": "deny"},
	"proc.control: killall": {"id": "proc.control", "input": full([cmd(["killall", "node"], [], [])]), "decision": "deny"},
	"proc.control: pkill -f": {"id": "proc.control", "input": full([cmd(["pkill", "-f", "server.py"], ["f"], [])]), "decision": "deny"},
	"proc.control: systemctl stop": {"id": "proc.control", "input": full([cmd(["systemctl", "stop", "nginx"], [], [])]), "decision": "deny"},
	"shell.exec_option: strace -o pipe": {"id": "shell.exec_option", "input": full([via(cmd(["ls"], [], []), "strace -o |")]), "decision": "ask"},
	"shell.exec_option: gcc -wrapper": {"id": "shell.exec_option", "input": full([cmd(["gcc", "-wrapper", "sh,-c,id", "x.c"], ["wrapper"], ["/home/u/ws/x.c"])]), "decision": "ask"},
	"shell.exec_option: split --filter": {"id": "shell.exec_option", "input": full([cmd(["split", "--filter=sh", "f"], ["filter"], ["/home/u/ws/f"])]), "decision": "ask"},
}

reach_quiet := {
	"priv.identity: chmod +x": {"id": "priv.identity", "input": full([cmd(["chmod", "+x", "x"], [], ["/home/u/ws/x"])]), "decision": "allow"},
	"priv.identity: chmod 0755": {"id": "priv.identity", "input": full([cmd(["chmod", "0755", "x"], [], ["/home/u/ws/x"])]), "decision": "allow"},
	"priv.identity: docker ps": {"id": "priv.identity", "input": full([cmd(["docker", "ps"], [], [])]), "decision": "allow"},
	"priv.identity: install -m 0644": {"id": "priv.identity", "input": full([cmd(["install", "-m", "0644", "a", "b"], ["m"], ["/home/u/ws/a", "/home/u/ws/b"])]), "decision": "allow"},
	"persist.config: python -m pip install in a venv": {"id": "persist.config", "input": full([cmd(["python3", "-m", "pip", "install", "x"], ["m"], [])]), "decision": "allow"},
	"persist.config: go env GOPATH": {"id": "persist.config", "input": full([cmd(["go", "env", "GOPATH"], [], [])]), "decision": "allow"},
	"persist.config: git config user.name": {"id": "persist.config", "input": full([cmd(["git", "config", "user.name", "x"], [], [])]), "decision": "allow"},
	"persist.config: systemctl status": {"id": "persist.config", "input": full([cmd(["systemctl", "status", "x"], [], [])]), "decision": "allow"},
	"persist.delayed: crontab -l": {"id": "persist.delayed", "input": full([cmd(["crontab", "-l"], ["l"], [])]), "decision": "allow"},
	"persist.workspace_exec: source file": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/src/main.go"]), "full"), "decision": "allow"},
	"persist.workspace_exec: .gitignore": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/.gitignore"]), "full"), "decision": "allow"},
	"persist.workspace_exec: git config user.email": {"id": "persist.workspace_exec", "input": full([cmd(["git", "config", "user.email", "a@b"], [], [])]), "decision": "allow"},
	"persist.workspace_exec: listed file at full": {"id": "persist.workspace_exec", "input": at(write("file_write", ["/home/u/ws/.vscode/settings.json"]), "full"), "config": granted, "decision": "allow"},
	"persist.workspace_exec: under a listed directory": {"id": "persist.workspace_exec", "input": at(write("edit_file", ["/home/u/ws/.claude/commands/x.md"]), "full"), "config": granted, "decision": "allow"},
	"persist.workspace_exec_allowed: not listed": {"id": "persist.workspace_exec_allowed", "input": at(write("file_write", ["/home/u/ws/src/main.go"]), "supervised"), "config": granted, "decision": "allow"},
	"cred.printer: git status": {"id": "cred.printer", "input": full([cmd(["git", "status"], [], [])]), "decision": "allow"},
	"cred.printer: gh pr list": {"id": "cred.printer", "input": full([cmd(["gh", "pr", "list"], [], [])]), "decision": "allow"},
	"cred.printer: kubectl config view": {"id": "cred.printer", "input": full([cmd(["kubectl", "config", "view"], [], [])]), "decision": "allow"},
	"proc.control: kill a pid": {"id": "proc.control", "input": full([cmd(["kill", "12345"], [], [])]), "decision": "allow"},
	"shell.exec_option: strace to a file": {"id": "shell.exec_option", "input": full([via(cmd(["ls"], [], []), "strace")]), "decision": "allow"},
	"shell.exec_option: plain gcc": {"id": "shell.exec_option", "input": full([cmd(["gcc", "-O2", "-o", "x", "x.c"], ["O2", "o"], ["/home/u/ws/x.c", "/home/u/ws/x"])]), "decision": "allow"},
}

test_reach_fires if {
	failing := {note |
		some note, tc in reach_fires
		not fires_ok(tc)
	}
	no_failures(failing)
}

test_reach_quiet if {
	failing := {note |
		some note, tc in reach_quiet
		not quiet_ok(tc)
	}
	no_failures(failing)
}

# program_families, a literal table for speed, names every program a
# family looks at under that family, and the prefixes are listed twice
# alike.
test_program_families_cover_the_rules if {
	every table in [
		[data.claw.gate.identity_programs, "identity"],
		[data.claw.gate.persist_programs, "persist"],
		[data.claw.gate.credential_programs, "cred"],
		[data.claw.gate.delayed_programs, "delayed"],
		[{n | some n, _ in data.claw.gate.cred_verbs}, "cred"],
		[{n | some n, _ in data.claw.gate.exec_options}, "exec_option"],
		[{"gcc", "cc", "g++", "c++", "clang", "clang++", "cpp", "gfortran", "tcc", "icc", "nvcc", "zig", "ld", "ld.bfd", "ld.gold", "ld.lld", "split", "csplit"}, "exec_option"],
		[{"docker", "podman", "nerdctl", "chmod", "install", "chown", "chgrp"}, "identity"],
		[{"git", "go", "cargo", "npm", "pnpm", "yarn", "pip", "pip3", "uv", "pipx", "gem", "rustup", "systemctl"}, "persist"],
		[{"gh", "glab", "kubectl", "pass", "ssh-add", "git"}, "cred"],
		[{"killall", "pkill", "systemctl", "service"}, "proc"],
		[{"git", "direnv"}, "exec_write"],
	] {
		every n in table[0] {
			table[1] in data.claw.gate.program_families[n]
		}
	}
	every n in data.claw.gate.identity_wrappers {
		"identity" in data.claw.gate.wrapper_families[n]
	}
	{p | some p in data.claw.gate.program_prefixes} == {p | some p, _ in data.claw.gate.program_prefix_families}
}

# A compiler known by its name's prefix calls for the exec-option family.
test_command_families_by_prefix if {
	fams := data.claw.gate.command_families with input as sh([cmd(["aarch64-linux-gnu-gcc"], [], [])])
	"exec_option" in fams
}

# A listed path leaves the sandbox's read-only mounts, and so does a
# protected directory holding one; the other protected paths stay.
test_sandbox_protect_lifts_listed_paths if {
	got := decide(write("file_write", ["/home/u/ws/a"]), granted).sandbox.protect
	every p in [".vscode", ".envrc", ".claude"] {
		not p in got
	}
	every p in [".git/hooks", ".git/config", ".npmrc", ".mcp.json"] {
		p in got
	}
}
