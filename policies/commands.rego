# Command rules: Rules over the shell analysis (input.parsed): unparseable
# input, forbidden commands, rm inside the workspace, privilege
# escalation, network devices, and the marks that need approval.
package claw.gate

import data.claw.lib

# shell_parsed holds when the shell analysis is present and has no error.
shell_parsed if {
	is_object(input.parsed)
	is_array(input.parsed.commands)
	not shell_error
}

shell_error if {
	is_string(input.parsed.error)
	input.parsed.error != ""
}

unparseable_msg := sprintf("the command cannot be analysed: %s", [input.parsed.error]) if {
	shell_error
} else := "the command has no shell analysis"

# METADATA
# title: Unparseable shell command
# description: >-
#   The command could not be parsed or exceeds a bound; what cannot be
#   analysed does not run.
# custom:
#   id: shell.unparseable
#   severity: critical
deny contains r if {
	input.kind == "shell"
	not shell_parsed
	r := lib.reason(rego.metadata.rule(), unparseable_msg)
}

# The rules on marks add to mark_deny and mark_ask, which are only
# evaluated when some command carries a mark.
has_marks if {
	some _ in marks
}

deny contains r if {
	input.kind == "shell"
	has_marks
	some r in mark_deny
}

ask contains r if {
	input.kind == "shell"
	has_marks
	some r in mark_ask
}

# ---------------------------------------------------------------------------
# Dispatch: which families of rules a shell command's programs call for.

# command_names are the names of the commands the shell command runs.
command_names contains c.name if {
	input.kind == "shell"
	some c in cmds
}

# command_families are the families of rules that the programs of a shell
# command call for, found once per decision: by the program's name, by a
# prefix of it, and by the wrappers the analyser unwrapped. A family's
# rules are entered only when it is here; a rule that looks at another
# program must list it in these tables.
command_families contains f if {
	some n in command_names
	some f in program_families[n]
}

command_families contains f if {
	some n in command_names
	strings.any_prefix_match(n, program_prefixes)
	some prefix, fs in program_prefix_families
	startswith(n, prefix)
	some f in fs
}

command_families contains f if {
	input.kind == "shell"
	some c in cmds
	some v in c.via
	some f in wrapper_families[v]
}

# program_families names, for every program some family looks at, the
# families that do: identity, persist, delayed, cred (credential
# printers), proc (process control), exec_write (workspace files that
# run code) and exec_option (options that run a command) in reach.rego,
# destroy in destructive.rego, force_push and outside_server (the rules
# of program_asks) here. A literal table: one built from the families'
# sets would be built again for every decision.
program_families := {
	"addgroup": ["identity"],
	"adduser": ["identity"],
	"at": ["delayed"],
	"aws": ["cred"],
	"az": ["cred"],
	"batch": ["delayed"],
	"bw": ["cred"],
	"byobu": ["outside_server"],
	"c++": ["exec_option"],
	"capsh": ["identity"],
	"cargo": ["persist"],
	"cc": ["exec_option"],
	"chage": ["identity"],
	"chattr": ["destroy"],
	"chfn": ["identity"],
	"chgrp": ["identity", "destroy"],
	"chkconfig": ["persist"],
	"chmod": ["identity", "destroy"],
	"chown": ["identity", "destroy"],
	"chpasswd": ["identity"],
	"chroot": ["identity"],
	"chsh": ["identity"],
	"clang": ["exec_option"],
	"clang++": ["exec_option"],
	"cmake": ["exec_option"],
	"cpio": ["exec_option"],
	"cpp": ["exec_option"],
	"crontab": ["delayed", "destroy"],
	"csplit": ["exec_option"],
	"dd": ["destroy"],
	"delgroup": ["identity"],
	"deluser": ["identity"],
	"direnv": ["exec_write"],
	"docker": ["identity"],
	"doctl": ["cred"],
	"dpkg": ["exec_option"],
	"find": ["destroy"],
	"firebase": ["cred"],
	"firewall-cmd": ["identity"],
	"fly": ["cred"],
	"flyctl": ["cred"],
	"g++": ["exec_option"],
	"gcc": ["exec_option"],
	"gcloud": ["cred"],
	"gem": ["persist"],
	"gfortran": ["exec_option"],
	"gh": ["cred"],
	"git": ["persist", "cred", "exec_write", "force_push"],
	"glab": ["cred"],
	"go": ["persist"],
	"gopass": ["cred"],
	"gpasswd": ["identity"],
	"groupadd": ["identity"],
	"groupdel": ["identity"],
	"groupmod": ["identity"],
	"halt": ["destroy"],
	"hcloud": ["cred"],
	"heroku": ["cred"],
	"icc": ["exec_option"],
	"init": ["destroy"],
	"insmod": ["identity"],
	"install": ["identity"],
	"ip6tables": ["identity"],
	"iptables": ["identity"],
	"kexec": ["destroy"],
	"keyctl": ["cred"],
	"kill": ["destroy"],
	"killall": ["proc", "destroy"],
	"killall5": ["destroy"],
	"kubectl": ["cred"],
	"latex": ["exec_option"],
	"launchctl": ["persist"],
	"ld": ["exec_option"],
	"ld.bfd": ["exec_option"],
	"ld.gold": ["exec_option"],
	"ld.lld": ["exec_option"],
	"loginctl": ["persist", "destroy"],
	"losetup": ["identity"],
	"lpass": ["cred"],
	"lualatex": ["exec_option"],
	"mkdosfs": ["destroy"],
	"mke2fs": ["destroy"],
	"mkexfatfs": ["destroy"],
	"mkfs": ["destroy"],
	"mkntfs": ["destroy"],
	"mkswap": ["destroy"],
	"modprobe": ["identity"],
	"mount": ["identity"],
	"mv": ["destroy"],
	"mysql": ["exec_option"],
	"nerdctl": ["identity"],
	"netlify": ["cred"],
	"newgidmap": ["identity"],
	"newgrp": ["identity"],
	"newuidmap": ["identity"],
	"nft": ["identity"],
	"npm": ["persist"],
	"nsenter": ["identity"],
	"nvcc": ["exec_option"],
	"op": ["cred"],
	"pass": ["cred"],
	"passwd": ["identity"],
	"pdflatex": ["exec_option"],
	"pip": ["persist"],
	"pip3": ["persist"],
	"pipx": ["persist"],
	"pivot_root": ["identity"],
	"pkill": ["proc", "destroy"],
	"pnpm": ["persist"],
	"podman": ["identity"],
	"poweroff": ["destroy"],
	"psql": ["exec_option"],
	"rc-update": ["persist"],
	"reboot": ["destroy"],
	"rm": ["destroy"],
	"rmmod": ["identity"],
	"rpm": ["exec_option"],
	"rsync": ["exec_option", "destroy"],
	"rustup": ["persist"],
	"screen": ["outside_server"],
	"secret-tool": ["cred"],
	"security": ["cred"],
	"service": ["proc"],
	"setcap": ["identity"],
	"setfacl": ["destroy"],
	"shutdown": ["destroy"],
	"skill": ["destroy"],
	"split": ["exec_option"],
	"sqlite3": ["exec_option"],
	"ssh-add": ["cred"],
	"ssh-keygen": ["exec_option"],
	"swapoff": ["identity"],
	"swapon": ["identity"],
	"sysctl": ["destroy"],
	"systemctl": ["persist", "proc", "destroy"],
	"systemd-run": ["persist", "delayed"],
	"tar": ["exec_option"],
	"tcc": ["exec_option"],
	"tcpdump": ["exec_option"],
	"telinit": ["destroy"],
	"tmux": ["outside_server"],
	"ufw": ["identity"],
	"umount": ["identity"],
	"unshare": ["identity"],
	"update-rc.d": ["persist"],
	"useradd": ["identity"],
	"userdel": ["identity"],
	"usermod": ["identity"],
	"uv": ["persist"],
	"valgrind": ["exec_option"],
	"vault": ["cred"],
	"vercel": ["cred"],
	"vigr": ["identity"],
	"vipw": ["identity"],
	"visudo": ["identity"],
	"wipefs": ["destroy"],
	"xelatex": ["exec_option"],
	"yarn": ["persist"],
	"zig": ["exec_option"],
	"zip": ["exec_option"],
}

# program_prefix_families are the families of programs known by a prefix
# of their name (python3.12, mkfs.ext4, git-credential-store,
# x86_64-linux-gnu-gcc);
# program_prefixes lists the same prefixes, for one test per name.
program_prefix_families := {
	"python": ["persist"],
	"mkfs.": ["destroy"],
	"git-credential-": ["cred"],
	"docker-credential-": ["cred"],
	"x86_64": ["exec_option"],
	"aarch64": ["exec_option"],
	"arm": ["exec_option"],
	"riscv64": ["exec_option"],
	"i686": ["exec_option"],
	"gcc-": ["exec_option"],
	"g++-": ["exec_option"],
	"clang-": ["exec_option"],
	"clang++-": ["exec_option"],
}

program_prefixes := [
	"python", "mkfs.", "git-credential-", "docker-credential-", "x86_64",
	"aarch64", "arm", "riscv64", "i686", "gcc-", "g++-", "clang-", "clang++-",
]

# wrapper_families are the families of the wrappers the analyser records
# in a command's via.
wrapper_families := {
	"unshare": ["identity"],
	"nsenter": ["identity"],
	"chroot": ["identity"],
	"newgrp": ["identity"],
	"capsh": ["identity"],
	"systemd-run": ["delayed"],
	"strace -o |": ["exec_option"],
	"ltrace -o |": ["exec_option"],
}

# ---------------------------------------------------------------------------

# label(name) names a command in messages.
label(name) := name if {
	is_string(name)
	name != ""
} else := "a command whose name is not static"

# detail(d) is a mark detail for messages.
detail(d) := d if {
	is_string(d)
} else := ""

# forbidden_cmds are the commands whose name, or its dotted variant
# (mkfs.ext4 for mkfs, python3.12 for python3), is on forbidden_commands.
forbidden_cmds contains c if {
	input.kind == "shell"
	some c in cmds
	c.name in forbidden_commands
}

forbidden_cmds contains c if {
	input.kind == "shell"
	some c in cmds
	i := indexof(c.name, ".")
	i > 0
	substring(c.name, 0, i) in forbidden_commands
}

# rm_in_workspace(c): an rm whose every path lies inside the workspace and
# none is the workspace itself or all of its contents (/ws/*).
rm_in_workspace(c) if {
	c.name == "rm"
	not c.dynamic
	is_array(c.paths)
	count(c.paths) > 0
	every p in c.paths {
		p != input.context.workspace
		p != concat("", [ws_slash, "*"])
		startswith(p, ws_slash)
	}
}

# METADATA
# title: Forbidden command
# description: >-
#   The command's name is on forbidden_commands. rm whose every path is
#   inside the workspace is excepted and needs approval instead
#   (cmd.rm.workspace).
# custom:
#   id: cmd.forbidden
#   severity: high
deny contains r if {
	input.kind == "shell"
	some c in forbidden_cmds
	not rm_in_workspace(c)
	r := lib.reason(rego.metadata.rule(), sprintf("%s is a forbidden command", [c.name]))
}

# METADATA
# title: Recursive delete inside the workspace
# description: >-
#   rm is forbidden, but removing paths inside the workspace (not the
#   workspace itself) is contained. A recursive rm, find -delete or git
#   clean -d can take much work at once: supervised asks, full allows.
# custom:
#   id: cmd.rm.workspace
#   severity: medium
supervised_ask contains r if {
	input.kind == "shell"
	count(command_names & {"rm", "find", "git"}) > 0
	some c in cmds
	recursive_delete(c.name, c)
	r := lib.reason(rego.metadata.rule(), sprintf("%s deletes recursively inside the workspace: %s", [c.name, concat(" ", c.argv)]))
}

# recursive_delete(name, c) takes the command's name on its own, so that
# OPA's index on it selects the one definition that can apply.
recursive_delete(name, c) if {
	name == "rm"
	lib.recursive(c)
	rm_in_workspace(c)
}

recursive_delete(name, c) if {
	name == "find"
	"-delete" in c.argv
}

recursive_delete(name, c) if {
	name == "git"
	c.operands[0] == "clean"
	lib.has_any_opt(c, {"f", "force"})
	not lib.has_any_opt(c, {"n", "dry-run"})
}

# METADATA
# title: Privilege escalation
# description: >-
#   A command runs through a program that changes its user or
#   capabilities: sudo, su, doas, pkexec, run0, setpriv, sudoedit, gosu,
#   su-exec, setuidgid, capsh, ksu, chpst -u, runuser, gksu, kdesu, pfexec
#   and the like (the analyser marks them). The wrapped command is
#   analysed like any other and named here.
# custom:
#   id: priv.escalation
#   severity: high
mark_deny contains r if {
	not allow_privilege_escalation
	some ["privilege", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s would run %s with elevated privileges", [detail(d), label(name)]))
}

# METADATA
# title: Privilege escalation (allowed by configuration)
# description: >-
#   allow_privilege_escalation is set: escalation is not denied, but every
#   escalated command needs approval.
# custom:
#   id: priv.escalation.allowed
#   severity: high
mark_ask contains r if {
	allow_privilege_escalation
	some ["privilege", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s would run %s with elevated privileges", [detail(d), label(name)]))
}

netdev_msgs contains sprintf("%s uses the network device %s", [label(name), detail(d)]) if {
	input.kind == "shell"
	some ["network_device", name, d] in marks
}

netdev_msgs contains sprintf("the command uses the network device %s", [t]) if {
	input.kind == "shell"
	input.parsed.network[0] = _
	some t in input.parsed.network
}

# METADATA
# title: Shell network device
# description: >-
#   /dev/tcp or /dev/udp opens a network connection from the shell itself,
#   outside any network policy.
# custom:
#   id: shell.network_device
#   severity: high
deny contains r if {
	input.kind == "shell"
	some msg in netdev_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

dynamic_msgs contains sprintf("the command is not static: %s", [concat("; ", input.parsed.dynamic_reasons)]) if {
	input.kind == "shell"
	input.parsed.dynamic == true
	is_array(input.parsed.dynamic_reasons)
	count(input.parsed.dynamic_reasons) > 0
}

dynamic_msgs contains "the command is not static" if {
	input.kind == "shell"
	input.parsed.dynamic == true
	not dynamic_reasons_given
}

dynamic_reasons_given if {
	is_array(input.parsed.dynamic_reasons)
	count(input.parsed.dynamic_reasons) > 0
}

dynamic_msgs contains "a command name is not static" if {
	input.kind == "shell"
	some c in cmds
	c.dynamic == true
}

# METADATA
# title: Dynamic shell command
# description: >-
#   Something could not be resolved statically (a variable or pattern as a
#   command name, a substitution producing a command, eval of a variable).
#   It never gets a plain allow.
# custom:
#   id: shell.dynamic
#   severity: high
ask contains r if {
	input.kind == "shell"
	some msg in dynamic_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: Inline interpreter code
# description: An interpreter is given code inline (python -c, perl -e, node -e, awk system()).
# custom:
#   id: shell.inline_code
#   severity: medium
mark_ask contains r if {
	some ["inline_code", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s runs inline code (%s)", [label(name), detail(d)]))
}

# METADATA
# title: Option that runs a program
# description: >-
#   An option makes the program run another program (sort
#   --compress-program, git -c alias, tar --to-command, rsync -e, ...).
# custom:
#   id: shell.exec_flag
#   severity: medium
mark_ask contains r if {
	some ["exec_flag", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s runs another program through %s", [label(name), detail(d)]))
}

# METADATA
# title: Shell reading its program from standard input
# description: A shell or interpreter reads its program from a pipe, here-doc or here-string.
# custom:
#   id: shell.stdin_shell
#   severity: medium
mark_ask contains r if {
	some ["stdin_shell", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s reads its program from %s", [label(name), detail(d)]))
}

# METADATA
# title: Dangerous environment variable
# description: >-
#   An assignment that changes what runs (PATH, LD_PRELOAD, BASH_ENV,
#   GIT_SSH_COMMAND, PAGER, ...).
# custom:
#   id: shell.dangerous_env
#   severity: medium
mark_ask contains r if {
	some ["dangerous_env", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s is run with %s set", [label(name), detail(d)]))
}

# METADATA
# title: Prints the environment
# description: >-
#   env or printenv without a command, export -p, declare -p, set alone and
#   jq's $ENV print the environment. The sandbox gives a command only an
#   allowlisted environment, but a hook gates commands that run with the
#   agent's own environment, where API keys and tokens live.
# custom:
#   id: shell.reads_env
#   severity: medium
mark_ask contains r if {
	some ["reads_env", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s prints the environment, where secrets often live", [label(name)]))
}

# The rules on one program's approvals add to program_asks under their
# own name (program_asks.force_push contains r ...), which is also their
# family in program_families: a rule is entered only when a command it
# looks at runs, and a command none of them looks at enters none.
ask contains r if {
	input.kind == "shell"
	some f in command_families
	some r in program_asks[f]
}

force_push_opts := {"f", "force", "force-with-lease", "force-if-includes", "mirror", "delete", "d"}

# METADATA
# title: Force push or remote branch deletion
# description: git push with --force, --mirror, --delete, +refspec or :refspec rewrites or removes remote history.
# custom:
#   id: git.force_push
#   severity: medium
program_asks.force_push contains r if {
	input.kind == "shell"
	some c in cmds
	c.name == "git"
	"push" in c.operands
	force_push(c)
	r := lib.reason(rego.metadata.rule(), sprintf("git push rewrites or deletes remote history: %s", [concat(" ", c.argv)]))
}

force_push(c) if lib.has_any_opt(c, force_push_opts)

force_push(c) if {
	some op in c.operands
	regex.match(`^[+:]`, op)
}

# METADATA
# title: Configures a server outside the sandbox
# description: >-
#   tmux and screen hand their commands to a server that may already run
#   outside any sandbox, as the user: setting its options (default-shell,
#   hooks, environment) or sourcing a configuration file into it makes
#   that server run code later, unconfined.
# custom:
#   id: shell.outside_server
#   severity: medium
program_asks.outside_server contains r if {
	input.kind == "shell"
	count(command_names & {"tmux", "screen", "byobu"}) > 0
	some c in cmds
	c.name in {"tmux", "screen", "byobu"}
	some op in c.argv
	op in server_config_verbs
	r := lib.reason(rego.metadata.rule(), sprintf("%s %s configures a server that may run outside the sandbox", [c.name, op]))
}

server_config_verbs := {
	"set", "set-option", "setw", "set-window-option", "source-file", "source",
	"set-environment", "setenv", "set-hook", "-c", "shell", "defshell",
}
