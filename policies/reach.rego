# Reach rules: what an action reaches outside its sandbox, or later,
# outside any sandbox: privilege and identity, persistence (programs that
# write their own configuration outside the workspace, services, scheduled
# jobs, workspace files that run code when the user next commits, opens
# the editor or enters the directory), credentials printed by the programs
# that hold them, and processes signalled by name. Each denies at every
# autonomy; none is critical, so passphrase_for can turn one into a
# passphrase prompt.
package claw.gate

import data.claw.lib

# The rules add to reach_denials, which is only evaluated when the action
# runs a program some rule looks at or writes something. The families
# that look at programs add to family_denials under their own name and
# are entered only when the action runs one of their programs
# (program_families): a write alone, the commoner case, enters the
# workspace-file family alone.
deny contains r if {
	reach_watched
	some r in reach_denials
}

# The families the command calls for select their own rules: OPA enters
# family_denials[f] only for a name f it is given.
reach_denials contains r if {
	some f in command_families
	some r in family_denials[f]
}

# reach_watched: the command runs a program of some reach family, or the
# action writes.
reach_watched if {
	input.kind == "shell"
	some f in command_families
	f in {"identity", "persist", "delayed", "cred", "proc", "exec_write"}
}

reach_watched if some _ in writes

# ---------------------------------------------------------------------------
# Privilege and identity.

identity_programs := {
	"nsenter", "unshare", "newgrp", "useradd", "usermod", "userdel",
	"adduser", "deluser", "addgroup", "delgroup", "groupadd", "groupmod",
	"groupdel", "gpasswd", "passwd", "chpasswd", "chage", "chsh", "chfn",
	"visudo", "vipw", "vigr", "mount", "umount", "losetup", "chroot",
	"pivot_root", "insmod", "rmmod", "modprobe", "swapon", "swapoff",
	"setcap", "capsh", "newuidmap", "newgidmap", "iptables", "ip6tables",
	"nft", "ufw", "firewall-cmd",
}

# identity_wrappers are the wrappers that change namespaces, root or
# identity (the analyser unwraps them and records them in via).
identity_wrappers := {"unshare", "nsenter", "chroot", "newgrp", "capsh"}

identity_msgs contains sprintf("%s changes identity, namespaces, mounts or capabilities", [c.name]) if {
	input.kind == "shell"
	some c in cmds
	c.name in identity_programs
}

identity_msgs contains sprintf("%s runs %s in other namespaces, root or identity", [v, label(c.name)]) if {
	input.kind == "shell"
	some c in cmds
	some v in c.via
	v in identity_wrappers
}

# A container started with the host's privileges is root on the host.
identity_msgs contains sprintf("%s %s gives the container the host's privileges", [c.name, a]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"docker", "podman", "nerdctl"}
	some a in c.argv
	container_privilege(a)
}

container_privilege(a) if a in {"--privileged", "--pid=host", "--net=host", "--network=host", "--userns=host", "--ipc=host", "--uts=host", "--cgroupns=host"}

container_privilege(a) if startswith(a, "--cap-add")

container_privilege(a) if startswith(a, "--device")

container_privilege(a) if regex.match(`^--security-opt[= ]?.*(unconfined|label[=:]disable)`, a)

# setid_mode(m): a chmod or install mode that sets the set-user-ID or
# set-group-ID bit, in octal (4755, 02755, =4755, +4000) or symbolic
# (u+s, g+s, +s, ug=rwxs) notation.
setid_mode(m) if regex.match(`^[=+]?0*[2-7][0-7]{3}$`, m)

setid_mode(m) if regex.match(`(^|,)[ugoa]*[+=][rwxXt]*s`, m)

install_mode(c) := m if {
	some i, a in c.argv
	a in {"-m", "--mode"}
	m := c.argv[i + 1]
} else := m if {
	some a in c.argv
	startswith(a, "--mode=")
	m := substring(a, 7, -1)
} else := m if {
	some a in c.argv
	regex.match(`^-[bcCDpsSv]*m.+`, a)
	m := regex.replace(a, `^-[bcCDpsSv]*m`, "")
}

identity_msgs contains sprintf("chmod %s sets a set-user-ID or set-group-ID bit", [c.operands[0]]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "chmod"
	setid_mode(c.operands[0])
}

identity_msgs contains sprintf("install -m %s sets a set-user-ID or set-group-ID bit", [m]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "install"
	m := install_mode(c)
	setid_mode(m)
}

identity_msgs contains sprintf("%s %s gives files to root", [c.name, c.operands[0]]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"chown", "chgrp"}
	regex.match(`^(root|0)?([:.](root|0|wheel|sudo|adm|shadow|disk|docker))?$|^(root|0)[:.]`, c.operands[0])
	c.operands[0] != ""
}

# METADATA
# title: Privilege or identity change
# description: >-
#   Set-user-ID or set-group-ID bits in any notation (chmod 4755, =4755,
#   u+s, install -m 4755), file capabilities (setcap), ownership given to
#   root, namespace and root changes (unshare, nsenter, chroot), and
#   account, mount, module and firewall tools. Under no_new_privs such a
#   bit does nothing in the sandbox; it matters when the file runs later,
#   outside it.
# custom:
#   id: priv.identity
#   severity: high
family_denials.identity contains r if {
	some msg in identity_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# ---------------------------------------------------------------------------
# Persistence: programs that write their own configuration, or install
# programs, outside the workspace; services and scheduled jobs.

persist_programs := {"launchctl", "update-rc.d", "chkconfig", "rc-update", "loginctl", "systemd-run"}

delayed_programs := {"at", "batch", "crontab", "systemd-run"}

sub(c) := c.operands[0] if {
	count(c.operands) > 0
} else := ""

sub2(c) := c.operands[1] if {
	count(c.operands) > 1
} else := ""

persist_msgs contains "git config --global, --system or a file outside the workspace changes git for every repository" if {
	input.kind == "shell"
	some c in cmds
	c.name == "git"
	"config" in c.operands
	lib.has_any_opt(c, {"global", "system"})
}

persist_msgs contains sprintf("%s writes the go environment file", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "go"
	sub(c) == "env"
	lib.has_any_opt(c, {"w", "u"})
}

persist_msgs contains sprintf("%s installs programs on the PATH outside the workspace", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	global_install(c.name, c)
}

# global_install(name, c) and pkg_config_write(name, c) take the command's
# name on its own: OPA selects the definitions whose name test matches by
# an index on that argument, where a test of c.name would enter every
# definition for every command.

global_install(name, c) if {
	name == "go"
	sub(c) == "install"
}

global_install(name, c) if {
	name == "cargo"
	sub(c) == "install"
}

global_install(name, c) if {
	name in {"npm", "pnpm"}
	some a in c.argv
	a in {"-g", "--global", "--global=true", "-g=true"}
}

global_install(name, c) if {
	name == "npm"
	some a in c.argv
	a in {"--location=global", "--location=user"}
}

global_install(name, c) if {
	name == "npm"
	sub(c) in {"link", "ln"}
	count(c.operands) == 1
}

global_install(name, c) if {
	name == "yarn"
	sub(c) == "global"
}

global_install(name, c) if {
	name in {"pip", "pip3", "uv"}
	lib.has_opt(c, "user")
}

# python3 -m pip install --user
global_install(name, c) if {
	regex.match(`^python[0-9.]*$`, name)
	some i, a in c.argv
	a == "-m"
	c.argv[i + 1] in {"pip", "pip3"}
	"--user" in c.argv
}

global_install(name, c) if {
	name in {"pipx", "gem"}
	sub(c) in {"install", "inject", "upgrade", "update", "reinstall", "ensurepath"}
}

global_install(name, c) if {
	name == "uv"
	sub(c) == "tool"
	sub2(c) in {"install", "upgrade"}
}

global_install(name, c) if {
	name == "rustup"
	not sub(c) in {"show", "which", "--version", "-V", "doc", "help", "run", ""}
}

persist_msgs contains sprintf("%s changes the configuration it keeps in the home directory", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	pkg_config_write(c.name, c)
}

pkg_config_write(name, c) if {
	name in {"npm", "pnpm", "yarn"}
	sub(c) in {"set", "config"}
	not sub2(c) in {"get", "list", "ls", ""}
}

pkg_config_write(name, c) if {
	name in {"npm", "pnpm"}
	sub(c) in {"set", "adduser", "login", "logout"}
}

pkg_config_write(name, c) if {
	name in {"pip", "pip3"}
	sub(c) == "config"
	sub2(c) in {"set", "unset", "edit"}
}

persist_msgs contains sprintf("%s %s installs or changes a service that runs later", [c.name, concat(" ", c.operands)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "systemctl"
	sub_verb(c) in {"enable", "reenable", "link", "preset", "preset-all", "edit", "set-property", "daemon-reload", "add-wants", "add-requires", "revert", "import-environment", "set-environment"}
}

persist_msgs contains sprintf("%s installs or changes a service that runs later", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"launchctl", "update-rc.d", "chkconfig", "rc-update"}
}

persist_msgs contains "loginctl enable-linger keeps the user's services running after logout" if {
	input.kind == "shell"
	some c in cmds
	c.name == "loginctl"
	sub(c) == "enable-linger"
}

# sub_verb(c) is systemctl's verb: its first operand.
sub_verb(c) := sub(c)

# METADATA
# title: Persistence outside the workspace
# description: >-
#   A program writes configuration or installs programs outside the
#   workspace, where they run later: git config --global, go env -w, npm
#   and pip config set, global installs (npm i -g, pip install --user, go
#   install, cargo install, pipx, gem, rustup), services (systemctl enable,
#   launchctl, loginctl enable-linger).
# custom:
#   id: persist.config
#   severity: high
family_denials.persist contains r if {
	some msg in persist_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

delayed_msgs contains sprintf("%s schedules commands to run later, outside the sandbox", [c.name]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"at", "batch", "systemd-run"}
	not lib.has_any_opt(c, {"l", "V", "version", "help", "h"})
}

delayed_msgs contains sprintf("systemd-run runs %s later or elsewhere, outside the sandbox", [label(c.name)]) if {
	input.kind == "shell"
	some c in cmds
	"systemd-run" in c.via
}

delayed_msgs contains "crontab installs scheduled jobs" if {
	input.kind == "shell"
	some c in cmds
	c.name == "crontab"
	not lib.has_any_opt(c, {"l", "r"})
}

# METADATA
# title: Delayed execution
# description: at, batch, crontab (but -l) and systemd-run schedule commands that run later, outside the sandbox.
# custom:
#   id: persist.delayed
#   severity: high
family_denials.delayed contains r if {
	some msg in delayed_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# ---------------------------------------------------------------------------
# Workspace files that run code outside the sandbox later: git hooks and
# the git configuration (filters, hooksPath, fsmonitor, sshCommand,
# aliases), .gitattributes (which picks filters and diff drivers), direnv,
# package manager and cargo configuration, editor tasks and agent
# configuration.

exec_file_patterns := [
	".git/hooks/**", ".git/config", ".git/config.worktree", ".git/info/attributes",
	".git/modules/**/hooks/**", ".git/modules/**/config", ".git/worktrees/*/config.worktree",
	".gitattributes", "**/.gitattributes", ".gitmodules", ".envrc", "**/.envrc",
	".npmrc", "**/.npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".cargo/config",
	".cargo/config.toml", ".vscode/**", ".idea/**", ".claude/**", ".mcp.json",
	".codex/**", ".cursor/**", ".husky/**", ".mise.toml", "mise.toml", ".gemini/**",
]

# exec_file(p): p is in the workspace and matches one of the patterns, or
# is a directory holding one (.git/hooks, .vscode).
exec_file(p) if {
	startswith(p, ws_slash)
	rel := substring(p, count(ws_slash), -1)
	some f in exec_file_patterns
	glob.match(f, ["/"], rel)
}

exec_file(p) if {
	startswith(p, ws_slash)
	rel := substring(p, count(ws_slash), -1)
	rel in {".git", ".git/hooks", ".git/info", ".vscode", ".idea", ".claude", ".codex", ".cursor", ".husky", ".cargo", ".gemini"}
}

exec_write_msgs contains sprintf("writing %s changes what runs outside the sandbox later (a git hook, filter, editor task, direnv or agent configuration)", [p]) if {
	some p in writes
	exec_file_candidate(p)
	exec_file(p)
	not exec_granted(substring(p, count(ws_slash), -1))
}

# METADATA
# title: Granted workspace file that runs code outside the sandbox
# description: >-
#   A write to a workspace file that runs code outside the sandbox later,
#   which [security] workspace_exec_allow lists: its reach leaves the
#   sandbox, so supervised asks and full allows.
# custom:
#   id: persist.workspace_exec_allowed
#   severity: medium
supervised_ask contains r if {
	# workspace_exec_allow lists something: OPA's index answers this
	# test, so without the setting the rule is not entered.
	data.claw.config.workspace_exec_allow[0] = _
	some p in writes
	exec_file_candidate(p)
	exec_file(p)
	exec_granted(substring(p, count(ws_slash), -1))
	r := lib.reason(rego.metadata.rule(), sprintf("writing %s, which workspace_exec_allow lists, changes what runs outside the sandbox later", [p]))
}

# exec_granted(rel): [security] workspace_exec_allow lists rel, relative
# to the workspace, or a directory holding it: the user lets the agent
# write that file (or tree) although it runs code outside the sandbox. A
# listed path covers what is under it and nothing else: a parent
# directory, a sibling or the same name elsewhere in the workspace stays
# denied.
exec_granted(rel) if {
	some g in workspace_exec_allow
	path_covers(g, rel)
}

path_covers(g, rel) if g == rel

path_covers(g, rel) if startswith(rel, concat("", [g, "/"]))

# exec_file_candidate(p) is a cheap test before the patterns: every one
# names a dot file or directory, or mise.toml.
exec_file_candidate(p) if contains(p, "/.")

exec_file_candidate(p) if endswith(p, "/mise.toml")

exec_write_msgs contains sprintf("git %s sets %s, which runs a program outside the sandbox later", [concat(" ", c.operands), key]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "git"
	sub(c) == "config"
	key := lower(sub2(c))
	git_exec_key(key)
}

exec_write_msgs contains "direnv allow lets the .envrc run whenever the directory is entered" if {
	input.kind == "shell"
	some c in cmds
	c.name == "direnv"
	sub(c) in {"allow", "permit", "grant"}
}

git_exec_key(k) if k in {
	"core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor",
	"core.askpass", "core.gitproxy", "core.alternaterefscommand", "credential.helper",
	"sequence.editor", "diff.external", "gpg.program", "include.path", "init.templatedir",
	"uploadpack.packobjectshook", "interactive.difffilter", "web.browser", "protocol.allow",
}

git_exec_key(k) if regex.match(`^(alias|filter|diff|merge|pager|credential|gpg|browser|man|difftool|mergetool|includeif|remote|url)\..+\.(clean|smudge|process|textconv|command|driver|cmd|program|helper|path|uploadpack|receivepack|proxy|insteadof)$|^alias\.|^pager\.|^protocol\..+\.allow$`, k)

# METADATA
# title: Workspace file that runs code outside the sandbox
# description: >-
#   A write (shell, file_write or edit_file) to a workspace file that runs
#   code later outside any sandbox: .git/hooks, .git/config, .gitattributes,
#   .gitmodules, .envrc, .npmrc, .yarnrc, .cargo/config.toml, .vscode/,
#   .idea/, .claude/, .mcp.json, .codex/, .husky/ and the like; git config
#   of a key that runs a program (core.hooksPath, core.fsmonitor,
#   core.sshCommand, filters, diff drivers, aliases); direnv allow. A path
#   [security] workspace_exec_allow lists (and what is under it) is exempt.
# custom:
#   id: persist.workspace_exec
#   severity: high
reach_denials contains r if {
	some msg in exec_write_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# ---------------------------------------------------------------------------
# Credentials printed by the programs that keep them.

credential_programs := {
	"git", "gh", "glab", "aws", "gcloud", "az", "kubectl", "secret-tool", "pass",
	"gopass", "op", "vault", "keyctl", "ssh-add", "security", "bw", "lpass",
	"doctl", "heroku", "flyctl", "fly", "vercel", "netlify", "firebase", "hcloud",
}

cred_verbs := {
	"git": [["credential", "fill"], ["credential", "approve"], ["credential", "reject"]],
	"gh": [["auth", "token"]],
	"glab": [["auth", "token"]],
	"aws": [
		["configure", "get"], ["configure", "export-credentials"], ["sts", "get-session-token"],
		["sts", "assume-role"], ["sts", "get-federation-token"], ["ecr", "get-login-password"],
		["secretsmanager", "get-secret-value"], ["ssm", "get-parameter"], ["ssm", "get-parameters"],
		["ssm", "get-parameters-by-path"], ["codeartifact", "get-authorization-token"],
	],
	"gcloud": [["auth", "print-access-token"], ["auth", "print-identity-token"], ["auth", "application-default"], ["secrets", "versions"], ["config", "config-helper"]],
	"az": [["account", "get-access-token"], ["keyvault", "secret"], ["acr", "login"]],
	"kubectl": [["create", "token"], ["get", "secret"], ["get", "secrets"], ["describe", "secret"], ["describe", "secrets"]],
	"secret-tool": [["lookup"], ["search"]],
	"gopass": [["show"], ["cat"]],
	"op": [["read"], ["item"], ["inject"], ["run"], ["document"]],
	"vault": [["read"], ["kv"], ["print"], ["token"], ["login"]],
	"keyctl": [["print"], ["pipe"], ["read"]],
	"security": [["find-generic-password"], ["find-internet-password"], ["dump-keychain"]],
	"bw": [["get"], ["list"], ["export"]],
	"lpass": [["show"], ["export"]],
	"heroku": [["auth:token"]],
	"doctl": [["auth", "token"]],
}

cred_msgs contains sprintf("%s prints credentials it keeps", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	some verb in cred_verbs[c.name]
	array.slice(c.operands, 0, count(verb)) == verb
}

cred_msgs contains sprintf("%s prints a token", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"gh", "glab"}
	sub(c) == "auth"
	some a in c.argv
	a in {"-t", "--show-token"}
}

cred_msgs contains "kubectl config view --raw prints cluster credentials" if {
	input.kind == "shell"
	some c in cmds
	c.name == "kubectl"
	array.slice(c.operands, 0, 2) == ["config", "view"]
	some a in c.argv
	a in {"--raw", "--flatten"}
}

cred_msgs contains sprintf("%s prints a password", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "pass"
	not sub(c) in {"ls", "list", "find", "search", "grep", "init", "git", "help", "version", "insert", "generate", "edit", "rm", "mv", "cp"}
}

cred_msgs contains sprintf("%s lists the agent's keys", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "ssh-add"
	lib.has_any_opt(c, {"L", "l"})
}

cred_msgs contains sprintf("git %s is a credential helper", [sub(c)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "git"
	startswith(sub(c), "credential-")
}

cred_msgs contains sprintf("%s is a credential helper", [c.name]) if {
	input.kind == "shell"
	some c in cmds
	regex.match(`^(git|docker)-credential-`, c.name)
}

# METADATA
# title: Credential printer
# description: >-
#   A program prints credentials it keeps: git credential fill, gh auth
#   token, aws configure get, aws sts, gcloud auth print-access-token, az
#   account get-access-token, kubectl config view --raw, kubectl get
#   secret, secret-tool lookup, pass, op read, vault read, keyctl print,
#   ssh-add -L, git-credential-* and docker-credential-* helpers.
# custom:
#   id: cred.printer
#   severity: high
family_denials.cred contains r if {
	some msg in cred_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# ---------------------------------------------------------------------------
# Processes signalled by name or through the service manager.

proc_msgs contains sprintf("%s signals processes by name, whoever started them", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"killall", "pkill"}
}

proc_msgs contains sprintf("systemctl %s stops, starts or signals services", [concat(" ", c.operands)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "systemctl"
	sub_verb(c) in {"start", "stop", "restart", "try-restart", "reload", "reload-or-restart", "try-reload-or-restart", "kill", "disable", "mask", "unmask", "isolate", "freeze", "thaw", "clean", "condrestart", "force-reload"}
}

proc_msgs contains sprintf("service %s stops, starts or signals a service", [concat(" ", c.operands)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "service"
	count(c.operands) > 1
	not c.operands[1] in {"status"}
}

# METADATA
# title: Process control by name
# description: >-
#   killall, pkill and systemctl or service stop, restart, kill, disable
#   or mask signal processes the action did not start. kill of a pid it
#   names is left to the sandbox's pid namespace.
# custom:
#   id: proc.control
#   severity: high
family_denials.proc contains r if {
	some msg in proc_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# ---------------------------------------------------------------------------
# Options that run a command, not modelled by the analyser's handlers.

exec_option_msgs contains sprintf("%s pipes its output into a command", [v]) if {
	input.kind == "shell"
	some c in cmds
	some v in c.via
	v in {"strace -o |", "ltrace -o |"}
}

exec_option_msgs contains sprintf("%s %s runs a program of its own choosing", [c.name, a]) if {
	input.kind == "shell"
	some c in cmds
	compiler(c.name)
	some a in c.argv
	regex.match(`^(-wrapper|-fplugin|-specs|--specs|-B|-fuse-ld=/|-plugin|--plugin|-iplugindir|-no-integrated-cpp|-fprofile-generate=\|)`, a)
}

exec_option_msgs contains sprintf("%s --filter runs a command on every piece", [c.name]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"split", "csplit"}
	some a in c.argv
	startswith(a, "--filter")
}

exec_option_msgs contains sprintf("%s %s runs a command", [c.name, a]) if {
	input.kind == "shell"
	some c in cmds
	some o in exec_options[c.name]
	some a in c.argv
	startswith(a, o)
}

exec_options := {
	"tar": ["--info-script", "--new-volume-script", "-F", "--rsh-command", "--rmt-command"],
	"rsync": ["--rsync-path", "--rsh"],
	"cpio": ["--rsh-command"],
	"ld": ["-plugin", "--plugin"],
	"tcpdump": ["-z"],
	"rpm": ["--eval", "-E"],
	"ssh-keygen": ["-D"],
	"cmake": ["-P"],
	"valgrind": ["--db-command"],
	"zip": ["-TT", "--unzip-command"],
	"sqlite3": ["-cmd"],
	"mysql": ["--pager"],
	"psql": ["--pset=pager"],
	"dpkg": ["--root", "-i"],
	"pdflatex": ["-shell-escape", "--shell-escape"],
	"latex": ["-shell-escape", "--shell-escape"],
	"xelatex": ["-shell-escape", "--shell-escape"],
	"lualatex": ["-shell-escape", "--shell-escape"],
}

compiler(n) if n in {"gcc", "cc", "g++", "c++", "clang", "clang++", "cpp", "gfortran", "tcc", "icc", "nvcc", "zig", "ld", "ld.bfd", "ld.gold", "ld.lld"}

compiler(n) if {
	contains(n, "-")
	cross_compiler(n)
}

cross_compiler(n) if regex.match(`^(x86_64|aarch64|arm|riscv64|i686)[-a-z0-9_]*-(gcc|g\+\+|cc|c\+\+)(-[0-9.]+)?$|^(gcc|g\+\+|clang|clang\+\+)-[0-9.]+$`, n)

# METADATA
# title: Option that runs a command
# description: >-
#   An option makes a program run a command given in its value or chosen
#   by a file (strace -o '|cmd', gcc -wrapper, -fplugin, -specs, -B, split
#   --filter, tar --info-script or -F, rsync --rsync-path, ld -plugin,
#   tcpdump -z, ssh-keygen -D, zip -TT, latex -shell-escape).
# custom:
#   id: shell.exec_option
#   severity: medium
ask contains r if {
	input.kind == "shell"
	"exec_option" in command_families
	some msg in exec_option_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}
