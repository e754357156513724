# Destructive patterns: Commands that destroy the system, its data or its
# availability, in any spelling the shell analysis resolves. Every rule
# here is critical: no autonomy, passphrase or user policy turns it into
# an allow.
package claw.gate

import data.claw.lib

# Every destructive rule adds to the set destructive, which is only
# evaluated when the action could match one of them at all: it runs a
# command some rule looks at, writes something, is a fork bomb, or pipes
# a download into a shell. Most actions skip the whole family.
deny contains r if {
	might_destroy
	some r in destructive
}

watched_commands := {
	"rm", "find", "dd", "chmod", "chown", "chgrp", "crontab", "sysctl",
	"kill", "killall", "killall5", "pkill", "init", "telinit", "systemctl",
	"loginctl", "shutdown", "reboot", "halt", "poweroff", "kexec", "mkfs",
	"mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "wipefs",
}

command_names contains c.name if {
	input.kind == "shell"
	some c in cmds
}

might_destroy if {
	input.kind == "shell"
	shell_might_destroy
}

might_destroy if {
	some _ in input.writes
}

shell_might_destroy if count(command_names & watched_commands) > 0

shell_might_destroy if {
	some n in command_names
	startswith(n, "mkfs.")
}

shell_might_destroy if {
	some _ in writes
}

shell_might_destroy if input.parsed.fork_bomb == true

shell_might_destroy if mark_kinds.download_to_shell

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
destructive contains r if {
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
destructive contains r if {
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
destructive contains r if {
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
destructive contains r if {
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
destructive contains r if {
	input.kind == "shell"
	some msg in power_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: Recursive ownership or mode change of a critical directory
# description: chmod, chown or chgrp -R on /, a system directory, the home directory or an ancestor.
# custom:
#   id: destructive.recursive_chmod
#   severity: critical
destructive contains r if {
	input.kind == "shell"
	some c in cmds
	c.name in {"chmod", "chown", "chgrp"}
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
destructive contains r if {
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

# kill -1, kill -9 -1, kill -s KILL -1, kill -- -1: pid -1 is every
# process. A leading -1 followed by pids is the signal HUP.
kill_all_msgs contains sprintf("%s signals every process", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name == "kill"
	some i, a in c.argv
	a == "-1"
	kills_everything(c.argv, i)
}

kills_everything(_, i) if i > 1

kills_everything(argv, 1) if count(argv) == 2

kill_all_msgs contains sprintf("%s %s matches every process", [c.name, op]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"pkill", "killall"}
	some op in c.operands
	op in {"", ".", ".*", "^", "$", "^.*$", ".+"}
}

# pkill -u USER / killall -u USER without a pattern: every process of the
# user, the agent and claw included.
kill_all_msgs contains sprintf("%s kills every process of a user", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"pkill", "killall"}
	some i, a in c.argv
	a in {"-u", "-U", "--uid", "--euid", "--user"}
	count([x |
		some j, x in c.argv
		j > 0
		not j in {i, i + 1}
		not startswith(x, "-")
	]) == 0
}

kill_all_msgs contains sprintf("%s kills every process of a user", [concat(" ", c.argv)]) if {
	input.kind == "shell"
	some c in cmds
	c.name in {"pkill", "killall"}
	some a in c.argv
	regex.match(`^(-[uU].+|--(e?uid|user)=.*)$`, a)
	count([x |
		some j, x in c.argv
		j > 0
		not startswith(x, "-")
	]) == 0
}

# METADATA
# title: Kill every process
# description: kill to pid -1, killall5, pkill/killall with a pattern matching everything or with only a user.
# custom:
#   id: destructive.kill_all
#   severity: critical
destructive contains r if {
	input.kind == "shell"
	some msg in kill_all_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

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
# description: Creating, truncating (:> /etc/passwd) or replacing a file below /etc, /usr, /boot, /bin, /sbin, /lib or /var/lib.
# custom:
#   id: destructive.system_file_write
#   severity: critical
destructive contains r if {
	some p in writes
	strings.any_prefix_match(p, system_file_prefixes)
	r := lib.reason(rego.metadata.rule(), sprintf("writing %s would change a system file", [p]))
}

# METADATA
# title: Removal of the crontab
# description: crontab -r removes every scheduled job of the user without asking.
# custom:
#   id: destructive.crontab_remove
#   severity: critical
destructive contains r if {
	input.kind == "shell"
	some c in cmds
	c.name == "crontab"
	lib.has_opt(c, "r")
	r := lib.reason(rego.metadata.rule(), "crontab -r removes the whole crontab")
}
