# Destructive patterns: Commands that destroy the system, its data or its
# availability, in any spelling the shell analysis resolves. Every rule
# here is critical: no autonomy, passphrase or user policy turns it into
# an allow.
package claw.gate

import data.claw.lib

# Every destructive rule adds to the set destructive, which is only
# evaluated when the action could match one of them at all: it runs a
# command some rule looks at (the destroy family of program_families),
# writes something, is a fork bomb, or pipes a download into a shell.
# Most actions skip the whole family.
deny contains r if {
	might_destroy
	some r in destructive
}

might_destroy if input.writes[0] = _

might_destroy if {
	input.kind == "shell"
	"destroy" in command_families
}

might_destroy if {
	input.kind == "shell"
	some _ in writes
}

might_destroy if {
	input.kind == "shell"
	input.parsed.fork_bomb == true
}

might_destroy if {
	input.kind == "shell"
	mark_kinds.download_to_shell
}

# The rules on commands add to destructive_commands under their own name
# (destructive_commands.rm_root contains r ...), and destroy_rules names
# the rules each program calls for: only the rules of the commands that
# run are entered, and only when a command of the destroy family runs. A
# write alone, the commoner case, enters the rules on writes alone.
destructive contains r if {
	"destroy" in command_families
	some n in command_names
	some k in destroy_rules[n]
	some r in destructive_commands[k]
}

# mkfs.ext4 and every other mkfs.<type>: a prefix the table cannot list.
destructive contains r if {
	"destroy" in command_families
	some n in command_names
	startswith(n, "mkfs.")
	some r in destructive_commands.mkfs
}

# destroy_rules names, for every program a rule of destructive_commands
# looks at, the rules that do. A rule on another program must list it
# here (and in program_families).
destroy_rules := {
	"chattr": ["recursive_chmod"],
	"chgrp": ["recursive_chmod"],
	"chmod": ["recursive_chmod", "chmod_system"],
	"chown": ["recursive_chmod"],
	"crontab": ["crontab_remove"],
	"dd": ["dd_device"],
	"find": ["find_delete"],
	"halt": ["power"],
	"init": ["power"],
	"kexec": ["power"],
	"kill": ["kill_all"],
	"killall": ["kill_all"],
	"killall5": ["kill_all"],
	"loginctl": ["power", "kill_all"],
	"mkdosfs": ["mkfs"],
	"mke2fs": ["mkfs"],
	"mkexfatfs": ["mkfs"],
	"mkfs": ["mkfs"],
	"mkntfs": ["mkfs"],
	"mkswap": ["mkfs"],
	"mv": ["move_critical"],
	"pkill": ["kill_all"],
	"poweroff": ["power"],
	"reboot": ["power"],
	"rm": ["rm_root"],
	"rsync": ["move_critical"],
	"setfacl": ["recursive_chmod"],
	"shutdown": ["power"],
	"skill": ["kill_all"],
	"systemctl": ["power"],
	"telinit": ["power"],
	"wipefs": ["mkfs"],
}

# ---------------------------------------------------------------------------
# Critical directories: the root, every top-level directory, the system
# directories below them, the home directory and its ancestors, and the
# ancestors of the workspace.

system_dirs := {
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64",
	"/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run", "/sbin",
	"/snap", "/srv", "/sys", "/tmp", "/usr", "/var",
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64",
	"/usr/libexec", "/usr/local", "/usr/local/bin", "/usr/local/lib",
	"/usr/share", "/usr/include", "/usr/src", "/var/lib", "/var/log",
	"/var/cache", "/var/spool", "/var/mail", "/var/backups", "/var/www",
	"/etc/systemd", "/etc/ssh", "/etc/ssl", "/etc/pam.d", "/etc/sudoers.d",
}

# system_file_prefixes: writing anything below these changes the system.
system_file_prefixes := [
	"/etc/", "/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/",
	"/libx32/", "/boot/", "/var/lib/", "/var/spool/cron/",
]

critical_dir("/")

critical_dir(t) if regex.match(`^/[^/]+$`, t)

critical_dir(t) if t in system_dirs

critical_dir(t) if {
	home != ""
	lib.under(home, t)
}

critical_dir(t) if {
	ws_valid
	lib.is_ancestor(t, workspace)
}

# critical_target(p): p, or the directory a pattern in p expands in, is a
# critical directory.
critical_target(p) if critical_dir(lib.glob_base(p))

# ---------------------------------------------------------------------------

rm_root_msgs contains sprintf("rm -r on %s would destroy a critical directory", [p]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "rm"
	lib.recursive(c)
	some p in c.paths
	critical_target(p)
}

rm_root_msgs contains "rm --no-preserve-root" if {
	input.kind == "shell"
	some c in cmds
	c.name == "rm"
	lib.has_opt(c, "no-preserve-root")
}

# METADATA
# title: Recursive removal of a critical directory
# description: >-
#   rm -r/-R/--recursive on /, /*, a top-level or system directory, the
#   home directory or an ancestor of it, or an ancestor of the workspace;
#   or rm --no-preserve-root.
# custom:
#   id: destructive.rm_root
#   severity: critical
destructive_commands.rm_root contains r if {
	input.kind == "shell"
	some msg in rm_root_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

find_deletes(c) if "-delete" in c.argv

find_deletes(c) if {
	some i, a in c.argv
	a in {"-exec", "-execdir", "-ok", "-okdir"}
	lib.basename(c.argv[i + 1]) in {"rm", "shred", "unlink", "rmdir"}
}

find_roots(c) := c.paths if {
	is_array(c.paths)
	count(c.paths) > 0
} else := [cwd]

# METADATA
# title: find deleting a critical directory
# description: find with -delete or -exec rm started at a critical directory.
# custom:
#   id: destructive.find_delete
#   severity: critical
destructive_commands.find_delete contains r if {
	input.kind == "shell"
	some c in cmds
	c.name == "find"
	find_deletes(c)
	some p in find_roots(c)
	critical_target(p)
	r := lib.reason(rego.metadata.rule(), sprintf("find deleting under %s would destroy a critical directory", [p]))
}

mkfs_names := {"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "wipefs"}

mkfs_command(name) if name in mkfs_names

mkfs_command(name) if startswith(name, "mkfs.")

# METADATA
# title: Filesystem creation
# description: mkfs in any variant (mkfs.ext4, mke2fs, mkswap, wipefs) destroys a filesystem.
# custom:
#   id: destructive.mkfs
#   severity: critical
destructive_commands.mkfs contains r if {
	input.kind == "shell"
	some c in cmds
	mkfs_command(c.name)
	r := lib.reason(rego.metadata.rule(), sprintf("%s destroys the filesystem it is given", [c.name]))
}

# METADATA
# title: dd onto a device
# description: dd of=/dev/... overwrites a device (the safe devices such as /dev/null excepted).
# custom:
#   id: destructive.dd_device
#   severity: critical
destructive_commands.dd_device contains r if {
	input.kind == "shell"
	some c in cmds
	c.name == "dd"
	some op in c.operands
	startswith(op, "of=/dev/")
	not lib.safe_devices[substring(op, 3, -1)]
	r := lib.reason(rego.metadata.rule(), sprintf("dd %s overwrites a device", [op]))
}

block_device_prefixes := [
	"/dev/sd", "/dev/nvme", "/dev/vd", "/dev/hd", "/dev/xvd", "/dev/mmcblk",
	"/dev/loop", "/dev/dm-", "/dev/md", "/dev/mapper/", "/dev/disk/",
	"/dev/sr", "/dev/nbd", "/dev/zd", "/dev/rbd", "/dev/bcache",
	"/dev/mem", "/dev/kmem", "/dev/port",
]

# METADATA
# title: Write to a block or memory device
# description: >-
#   Any write (redirection, tee, cp, ...) to a disk, partition, loop or
#   device-mapper device, or to physical or kernel memory.
# custom:
#   id: destructive.block_device
#   severity: critical
destructive contains r if {
	some p in writes
	strings.any_prefix_match(p, block_device_prefixes)
	r := lib.reason(rego.metadata.rule(), sprintf("writing %s would overwrite a device", [p]))
}

# METADATA
# title: Fork bomb
# description: A function that calls itself in a pipe or in the background.
# custom:
#   id: destructive.fork_bomb
#   severity: critical
destructive contains r if {
	input.kind == "shell"
	input.parsed.fork_bomb == true
	r := lib.reason(rego.metadata.rule(), "the command is a fork bomb")
}

power_names := {"shutdown", "reboot", "halt", "poweroff", "kexec"}

power_verbs := {
	"poweroff", "reboot", "halt", "kexec", "rescue", "emergency",
	"soft-reboot", "suspend", "hibernate", "hybrid-sleep",
	"poweroff.target", "reboot.target", "halt.target", "kexec.target",
	"rescue.target", "emergency.target", "shutdown.target",
	"runlevel0.target", "runlevel1.target", "runlevel6.target",
}

power_read_verbs := {"status", "show", "cat", "list-dependencies", "is-active", "is-enabled", "is-failed", "help"}

power_msgs contains sprintf("%s stops or restarts the machine", [c.name]) if {
	input.kind == "shell"
	some c in cmds
	c.name in power_names
}

power_msgs contains sprintf("%s %s changes the runlevel", [c.name, op]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"init", "telinit"}
	some op in c.operands
	op in {"0", "6", "1", "s", "S"}
}

power_msgs contains sprintf("%s %s stops or restarts the machine", [c.name, op]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"systemctl", "loginctl"}
	not only_reads_state(c)
	some op in c.operands
	op in power_verbs
}

only_reads_state(c) if c.operands[0] in power_read_verbs

# METADATA
# title: Shutdown or reboot
# description: >-
#   shutdown, reboot, halt, poweroff, kexec; init or telinit 0, 1 or 6;
#   systemctl poweroff, reboot, halt, kexec, rescue or emergency (also as
#   targets).
# custom:
#   id: destructive.power
#   severity: critical
destructive_commands.power contains r if {
	input.kind == "shell"
	count(command_names & power_commands) > 0
	some msg in power_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# power_commands are the commands the power_msgs rules look at (as
# kill_names are for kill_all_msgs).
power_commands := power_names | {"init", "telinit", "systemctl", "loginctl"}

# METADATA
# title: Recursive ownership or mode change of a critical directory
# description: >-
#   chmod, chown, chgrp, setfacl or chattr -R on /, a system directory,
#   the home directory or an ancestor.
# custom:
#   id: destructive.recursive_chmod
#   severity: critical
destructive_commands.recursive_chmod contains r if {
	input.kind == "shell"
	some c in cmds
	c.name in {"chmod", "chown", "chgrp", "setfacl", "chattr"}
	lib.has_any_opt(c, {"R", "recursive"})
	some p in c.paths
	critical_target(p)
	r := lib.reason(rego.metadata.rule(), sprintf("%s -R on %s would change a critical directory", [c.name, p]))
}

system_path(p) if p == "/"

system_path(p) if strings.any_prefix_match(concat("", [p, "/"]), system_mode_prefixes)

system_mode_prefixes := [
	"/bin/", "/boot/", "/dev/", "/etc/", "/lib/", "/lib32/", "/lib64/",
	"/libx32/", "/opt/", "/proc/", "/root/", "/run/", "/sbin/", "/srv/",
	"/sys/", "/usr/", "/var/",
]

# METADATA
# title: World-writable or setuid mode on a system path
# description: chmod 777, o+w, a+w, +w, setuid or setgid on / or a path below a system directory.
# custom:
#   id: destructive.chmod_system
#   severity: critical
destructive_commands.chmod_system contains r if {
	input.kind == "shell"
	some c in cmds
	c.name == "chmod"
	mode := c.operands[0]
	lib.dangerous_mode(mode)
	some p in c.paths
	system_path(lib.glob_base(p))
	r := lib.reason(rego.metadata.rule(), sprintf("chmod %s on %s opens a system path", [mode, p]))
}

# METADATA
# title: Download or decoded data piped into a shell
# description: The output of a downloader (curl, wget, nc) or decoder (base64 -d, xxd -r) runs as a program.
# custom:
#   id: destructive.download_to_shell
#   severity: critical
destructive contains r if {
	input.kind == "shell"
	some ["download_to_shell", name, d] in marks
	r := lib.reason(rego.metadata.rule(), sprintf("%s runs what %s produces", [label(name), detail(d)]))
}

kill_all_msgs contains "killall5 signals every process" if {
	input.kind == "shell"
	some c in cmds
	c.name == "killall5"
}

# kill -1, kill -9 -01, kill -s KILL -- ' -1': pid -1 is every process.
# A leading -1 followed by pids is the signal HUP; a leading " -1" is not
# an option and so a pid.
kill_all_msgs contains sprintf("%s signals every process", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "kill"
	not kill_lists(c)
	some i, a in c.argv
	pid_minus_one(a)
	kills_everything(c.argv, i, a)
}

kills_everything(_, i, _) if i > 1

kills_everything(argv, 1, _) if count(argv) == 2

kills_everything(_, 1, a) if not startswith(a, "-")

# pid_minus_one(a): the kill builtins of bash and dash and procps kill(1)
# read a as pid -1: decimal with any leading zeros, blanks before it (and,
# for bash, after it). None of them reads hex or octal.
pid_minus_one(a) if regex.match(`^[\t\n\v\f\r ]*-0*1[\t ]*$`, a)

# pid_one(a): a is read as pid 1, init ("1", "01", "+1", " 1").
pid_one(a) if regex.match(`^[\t\n\v\f\r ]*\+?0*1[\t ]*$`, a)

# kill_lists(c): kill -l 1 names signal 1 and signals nothing.
kill_lists(c) if regex.match(`^(-[lL]|--list(=.*)?|--table)$`, c.argv[1])

# kill_value_opts are the options of kill whose value is the next
# argument: "kill -s 1 1234" sends HUP to 1234.
kill_value_opts := {"-s", "-n", "-q", "--signal", "--queue", "--timeout"}

kill_all_msgs contains sprintf("%s signals init (pid 1)", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "kill"
	not kill_lists(c)
	some i, a in c.argv
	i > 0
	pid_one(a)
	not c.argv[i - 1] in kill_value_opts
}

# pkill and killall options, for finding their patterns in argv: flags
# take no value, values are the short options that take one, and long
# are the long options that take one (getopt_long also takes any prefix
# of them).
kill_opt_specs := {
	"pkill": {
		"flags": "cefinoxvwALhV",
		"values": "qgGOPstuUFr",
		"long": [
			"signal", "queue", "pgroup", "group", "older", "parent",
			"session", "terminal", "euid", "uid", "pidfile", "runstates",
			"cgroup", "ns", "nslist",
		],
	},
	"killall": {
		"flags": "eIgilqrvwVh",
		"values": "suoynZ",
		"long": ["signal", "user", "older-than", "younger-than", "ns", "context"],
	},
}

# long_opt(a, names): a is --NAME or --NAME=VALUE for a prefix NAME of
# one of names.
long_opt(a, names) if {
	startswith(a, "--")
	n := split(substring(a, 2, -1), "=")[0]
	n != ""
	some l in names
	startswith(l, n)
}

# takes_next(a, spec): a is an option whose value is the next argument:
# "-u", "-fu", "--euid".
takes_next(a, spec) if {
	not kill_signal_arg(a)
	regex.match(sprintf(`^-[%s]*[%s]$`, [spec.flags, spec.values]), a)
}

takes_next(a, spec) if {
	long_opt(a, spec.long)
	not contains(a, "=")
}

# kill_patterns(c): the patterns (pkill) or names (killall) of c: the
# arguments that are neither options nor option values, and every
# argument after "--".
kill_patterns(c) := [a |
	spec := kill_opt_specs[c.name]
	some j, a in c.argv
	j > 0
	kill_pattern_at(c.argv, j, a, spec)
]

kill_pattern_at(argv, j, a, spec) if {
	not startswith(a, "-")
	not takes_next(argv[j - 1], spec)
}

kill_pattern_at(argv, j, _, _) if {
	some i, x in argv
	x == "--"
	i < j
}

# kill_signal_arg(a): a is a signal given as an option ("-9", "-HUP",
# "-SIGKILL"), which pkill and killall take anywhere: "-USR1" is not -U.
kill_signal_arg(a) if regex.match(`^-[0-9]+$`, a)

kill_signal_arg(a) if regex.match(`^(?i)-(SIG)?(HUP|INT|QUIT|ILL|TRAP|ABRT|IOT|BUS|FPE|KILL|USR1|SEGV|USR2|PIPE|ALRM|TERM|STKFLT|CHLD|CLD|CONT|STOP|TSTP|TTIN|TTOU|URG|XCPU|XFSZ|VTALRM|PROF|WINCH|IO|POLL|PWR|SYS|RTMIN|RTMAX)([+-][0-9]+)?$`, a)

# kill_opt_given(c, short, long): c was given the option -short or
# --long, alone or in a cluster ("-fu root", "-u0").
kill_opt_given(c, short, _) if {
	short != ""
	spec := kill_opt_specs[c.name]
	some a in c.argv
	not kill_signal_arg(a)
	regex.match(sprintf(`^-[%s]*%s`, [spec.flags, short]), a)
}

kill_opt_given(c, _, long) if {
	some a in c.argv
	long_opt(a, [long])
}

# kill_opt_values(c, short, long): the values c gave to -short/--long,
# as the next argument ("-P 1", "-fP 1", "--parent 1") or attached to it
# ("-P1", "--parent=1").
kill_opt_values(c, short, long) := (next_values | attached_values) | long_values if {
	spec := kill_opt_specs[c.name]
	next_values := {c.argv[j + 1] |
		some j, a in c.argv
		j + 1 < count(c.argv)
		takes_next(a, {"flags": spec.flags, "values": short, "long": [long]})
	}
	attached_values := {m[1] |
		some a in c.argv
		not kill_signal_arg(a)
		some m in regex.find_all_string_submatch_n(sprintf(`^-[%s]*%s(.+)$`, [spec.flags, short]), a, 1)
	}
	long_values := {substring(a, indexof(a, "=") + 1, -1) |
		some a in c.argv
		long_opt(a, [long])
		contains(a, "=")
	}
}

# broad_pattern(p): the pkill pattern p (an extended regular expression
# matched anywhere in the process name) may match most processes: it is
# not a plain name (a regex metacharacter; a dot only between two name
# characters, as in server.py), or it is shorter than three characters.
broad_pattern(p, _) if regex.match(`[*+?\[\](){}|^$\\]`, p)

broad_pattern(p, _) if regex.match(`(^|[^0-9A-Za-z_])\.|\.([^0-9A-Za-z_]|$)`, p)

broad_pattern(p, exact) if {
	not exact
	count(p) < 3
}

pkill_exact(c) if {
	kill_opt_given(c, "x", "exact")
} else := false

kill_all_msgs contains sprintf("%s %s may match every process", [c.name, p]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "pkill"
	some p in kill_patterns(c)
	broad_pattern(p, pkill_exact(c))
}

# killall matches names exactly unless -r makes them regular expressions.
kill_all_msgs contains sprintf("%s %s may match every process", [c.name, p]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "killall"
	kill_opt_given(c, "r", "regexp")
	some p in kill_patterns(c)
	broad_pattern(p, false)
}

kill_all_msgs contains "killall with an empty name" if {
	input.kind == "shell"
	some c in cmds
	c.name == "killall"
	"" in kill_patterns(c)
}

# pkill --inverse signals every process that does not match.
kill_all_msgs contains sprintf("%s signals every process that does not match", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "pkill"
	kill_opt_given(c, "v", "inverse")
}

# Without a pattern, pkill signals every process its selection options
# match: every process of a user or group (the agent and claw included),
# older than some seconds, in some run state, cgroup or namespace, or
# every child of init.
wide_selectors := {
	"pkill": [
		["u", "euid"], ["U", "uid"], ["G", "group"], ["O", "older"],
		["r", "runstates"], ["", "cgroup"], ["", "ns"],
	],
	"killall": [
		["u", "user"], ["o", "older-than"], ["y", "younger-than"],
		["n", "ns"], ["Z", "context"],
	],
}

kill_all_msgs contains sprintf("%s signals every process it selects", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"pkill", "killall"}
	count(kill_patterns(c)) == 0
	some [short, long] in wide_selectors[c.name]
	kill_opt_given(c, short, long)
}

kill_all_msgs contains sprintf("%s signals every child of init", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "pkill"
	count(kill_patterns(c)) == 0
	some v in kill_opt_values(c, "P", "parent")
	some pid in split(v, ",")
	regex.match(`^[\t\n\v\f\r ]*\+?0*[01]$`, pid)
}

# skill signals every process its expression selects, guessing whether
# a word is a user, a terminal or a command name; only its list and
# no-action forms signal nothing.
kill_all_msgs contains sprintf("%s signals every process its expression selects (use kill or pkill)", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "skill"
	not skill_signals_nothing(c)
}

skill_signals_nothing(c) if count(c.argv) == 1

skill_signals_nothing(c) if regex.match(`^(-[lLVh]|--(list|table|version|help))$`, c.argv[1])

skill_signals_nothing(c) if {
	some a in c.argv
	a in {"-n", "--no-action"}
}

kill_all_msgs contains sprintf("loginctl %s signals every process of a user or session", [op]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "loginctl"
	some op in c.operands
	op in {"terminate-user", "kill-user", "terminate-session", "kill-session"}
}

# METADATA
# title: Kill every process
# description: >-
#   kill to pid -1 or 1 in any spelling, killall5, pkill or killall -r with
#   a pattern that is not a plain name, pkill --inverse, pkill or killall
#   with only a user, group or other wide selection and no pattern, skill,
#   and loginctl terminate-user, kill-user, terminate-session or kill-session.
# custom:
#   id: destructive.kill_all
#   severity: critical
destructive_commands.kill_all contains r if {
	input.kind == "shell"
	count(command_names & kill_names) > 0
	some msg in kill_all_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# kill_names are the commands the kill_all_msgs rules look at: the family
# is evaluated only when one of them runs. A rule for another command must
# add its name here.
kill_names := {"kill", "killall5", "pkill", "killall", "skill", "loginctl"}

kernel_msgs contains sprintf("writing %s changes the running kernel", [p]) if {
	some p in writes
	kernel_path(p)
}

kernel_msgs contains sprintf("%s changes kernel parameters", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "sysctl"
	sysctl_writes(c)
}

kernel_path(p) if p == "/proc/sysrq-trigger"

kernel_path(p) if lib.under(p, "/proc/sys")

kernel_path(p) if lib.under(p, "/sys")

sysctl_writes(c) if lib.has_any_opt(c, {"w", "write", "p", "load", "system"})

sysctl_writes(c) if {
	some op in c.operands
	contains(op, "=")
}

# METADATA
# title: Kernel interface write
# description: Writing /proc/sys, /sys or /proc/sysrq-trigger, or sysctl -w.
# custom:
#   id: destructive.kernel_write
#   severity: critical
destructive contains r if {
	some msg in kernel_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: Write to a system file
# description: >-
#   Creating, truncating (:> /etc/passwd) or replacing a file below /etc,
#   /usr, /boot, /bin, /sbin, /lib or /var/lib, other than in a workspace
#   the configuration puts there (a service's /var/lib/claw/workspace)
#   that is not itself a system directory.
# custom:
#   id: destructive.system_file_write
#   severity: critical
destructive contains r if {
	some p in writes
	strings.any_prefix_match(p, system_file_prefixes)
	not own_workspace_path(p)
	r := lib.reason(rego.metadata.rule(), sprintf("writing %s would change a system file", [p]))
}

# own_workspace_path(p): p is in the workspace, and the workspace is not a
# system directory or a top-level one (a workspace of /etc or /var/lib
# would make the system the agent's).
own_workspace_path(p) if {
	inside_workspace(p)
	not critical_dir(workspace)
}

# METADATA
# title: Removal of the crontab
# description: crontab -r removes every scheduled job of the user without asking.
# custom:
#   id: destructive.crontab_remove
#   severity: critical
destructive_commands.crontab_remove contains r if {
	input.kind == "shell"
	some c in cmds
	c.name == "crontab"
	lib.has_opt(c, "r")
	r := lib.reason(rego.metadata.rule(), "crontab -r removes the whole crontab")
}

# The analyser lists a command's paths with its destination last: the
# last operand, or the value of -t/--target-directory.
last_path(c) := c.paths[count(c.paths) - 1]

moved_critical(c) := {p |
	some i, p in c.paths
	i < count(c.paths) - 1
	critical_target(p)
}

rsync_deletes(c) if {
	some o in c.opts
	startswith(o, "del")
}

move_critical_msgs contains sprintf("mv of %s would take a critical directory away", [p]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "mv"
	some p in moved_critical(c)
}

move_critical_msgs contains sprintf("rsync --delete into %s would remove what the source lacks from a critical directory", [last_path(c)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "rsync"
	rsync_deletes(c)
	count(c.paths) > 0
	critical_target(last_path(c))
}

move_critical_msgs contains sprintf("rsync --remove-source-files from %s would empty a critical directory", [p]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "rsync"
	lib.has_opt(c, "remove-source-files")
	some p in moved_critical(c)
}

# METADATA
# title: Moving or mirroring over a critical directory
# description: >-
#   mv of /, a system directory, the home directory or an ancestor of it
#   or of the workspace (it vanishes from where the system looks for it);
#   rsync --delete into such a directory (everything not in the source is
#   removed); rsync --remove-source-files from one.
# custom:
#   id: destructive.move_critical
#   severity: critical
destructive_commands.move_critical contains r if {
	input.kind == "shell"
	count(command_names & {"mv", "rsync"}) > 0
	some msg in move_critical_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}
