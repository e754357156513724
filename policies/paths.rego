# Path rules: What the action reads and writes, confinement to the
# workspace, and forbidden paths (reads too).
package claw.gate

import data.claw.lib

# ---------------------------------------------------------------------------
# The paths an action touches. Go made them canonical; the shell analysis
# adds the paths of every command, redirection targets, and the paths that
# file-changing commands modify.

# reads holds every path the action reads or names.
reads contains p if some p in input.paths

reads contains p if {
	some c in cmds
	some p in c.paths
}

reads contains r.target if {
	some r in redirects
	not r.write
	startswith(r.target, "/")
}

# writes holds every path the action would create, change or remove.
writes contains p if some p in input.writes

writes contains p if {
	some c in cmds
	some p in c.writes
}

writes contains r.target if {
	some r in redirects
	r.write == true
	startswith(r.target, "/")
}

writes contains p if {
	some c in cmds
	c.name in modifies_operands
	some p in c.paths
}

writes contains p if {
	some c in cmds
	c.name in {"sed", "perl", "ruby"}
	lib.has_any_opt(c, {"i", "in-place"})
	some p in c.paths
}

writes contains p if {
	some c in cmds
	c.name == "find"
	"-delete" in c.argv
	some p in c.paths
}

# cp, ln, install, rsync and scp write their last path; with -t DIR every
# path may be the target, so all count.
writes contains p if {
	some c in cmds
	c.name in copies_to_last
	not lib.has_any_opt(c, {"t", "target-directory"})
	is_array(c.paths)
	n := count(c.paths)
	n > 0
	p := c.paths[n - 1]
}

writes contains p if {
	some c in cmds
	c.name in copies_to_last
	lib.has_any_opt(c, {"t", "target-directory"})
	some p in c.paths
}

# dd of=FILE, relative to the starting directory when not absolute.
writes contains p if {
	some c in cmds
	c.name == "dd"
	some op in c.operands
	startswith(op, "of=")
	p := dd_target(substring(op, 3, -1))
}

dd_target(t) := t if startswith(t, "/")

dd_target(t) := concat("", [lib.dir_slash(cwd), t]) if not startswith(t, "/")

# modifies_operands are commands that change or remove every path they
# are given.
modifies_operands := {
	"rm", "rmdir", "unlink", "shred", "touch", "mkdir", "mkfifo", "mknod",
	"chmod", "chown", "chgrp", "chattr", "setfacl", "truncate", "tee", "mv",
	"wipefs", "blkdiscard", "fallocate", "mkswap", "fdisk", "sfdisk",
	"sgdisk", "parted", "patch", "mkfs", "mke2fs",
}

# copies_to_last are commands whose last path is the destination.
copies_to_last := {"cp", "ln", "install", "rsync", "scp"}

all_paths := reads | writes

# ---------------------------------------------------------------------------
# Workspace confinement.

read_prefixes := [lib.dir_slash(d) | some d in read_paths]

under_read_paths(p) if p in read_paths

under_read_paths(p) if strings.any_prefix_match(p, read_prefixes)

outside_msgs contains msg if {
	workspace_only
	some p in reads
	not writes[p]
	not inside_workspace(p)
	not lib.safe_devices[p]
	not under_read_paths(p)
	msg := sprintf("reading %s outside the workspace is not allowed", [p])
}

outside_msgs contains msg if {
	workspace_only
	some p in writes
	not inside_workspace(p)
	not lib.safe_devices[p]
	msg := sprintf("writing %s outside the workspace is not allowed", [p])
}

# METADATA
# title: Path outside the workspace
# description: >-
#   With workspace_only, reads must stay in the workspace, read_paths or
#   the safe devices, and writes must stay in the workspace.
# custom:
#   id: path.outside_workspace
#   severity: high
deny contains r if {
	some msg in outside_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# ---------------------------------------------------------------------------
# Forbidden paths. forbidden_paths entries are canonical paths or patterns
# where * matches within one path element and ** across elements. A path
# is forbidden when it is an entry, lies below one, or matches a pattern.
# All entries are compiled into one glob: {e1,e2,...}{,/**}.

glob_escapes := {
	"\\": "\\\\",
	",": "\\,",
	"{": "\\{",
	"}": "\\}",
	"[": "\\[",
	"]": "\\]",
	"?": "\\?",
	"\u0000": ",",
}

forbidden_glob := concat("", ["{", strings.replace_n(glob_escapes, concat("\u0000", forbidden_paths)), "}{,/**}"]) if {
	count(forbidden_paths) > 0
}

forbidden_path(p) if glob.match(forbidden_glob, ["/"], p)

forbidden_path(_) if "/" in forbidden_paths

# forbidden_entry(p) is the first entry that forbids p, for messages.
forbidden_entry(p) := [f | some f in forbidden_paths; entry_matches(f, p)][0]

entry_matches(f, p) if {
	not contains(f, "*")
	lib.under(p, f)
}

entry_matches(f, p) if {
	contains(f, "*")
	glob.match(f, ["/"], p)
}

entry_matches(f, p) if {
	contains(f, "*")
	glob.match(concat("", [f, "/**"]), ["/"], p)
}

# expanding_targets are directories whose whole subtree the action
# reaches: the paths of recursive commands.
expanding_targets contains p if {
	some c in cmds
	expands(c)
	some p in c.paths
}

expands(c) if {
	c.name in {
		"rm", "cp", "scp", "chmod", "chown", "chgrp", "chattr", "setfacl",
		"grep", "egrep", "fgrep", "zip", "ls", "du", "diff",
	}
	lib.recursive(c)
}

expands(c) if {
	c.name == "cp"
	lib.has_any_opt(c, {"a", "archive"})
}

expands(c) if c.name in {"mv", "tar", "rsync", "rg", "ag", "7z", "zstd", "bsdtar"}

expands(c) if {
	c.name == "find"
	some a in c.argv
	a in {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"}
}

forbidden_msgs contains msg if {
	some p in all_paths
	forbidden_path(p)
	msg := sprintf("%s is forbidden (forbidden_paths: %s)", [p, forbidden_entry(p)])
}

forbidden_msgs contains msg if {
	some t in expanding_targets
	not forbidden_path(t)
	strings.any_prefix_match(forbidden_paths, lib.dir_slash(t))
	f := [x | some x in forbidden_paths; startswith(x, lib.dir_slash(t))][0]
	msg := sprintf("%s contains the forbidden path %s", [t, f])
}

# A shell pattern the gate did not expand (/home/u/.s*/id_rsa) is
# forbidden when it may expand to a forbidden path or into one.
forbidden_msgs contains msg if {
	some c in cmds
	some p in c.paths
	lib.has_glob(p)
	some f in forbidden_paths
	pattern_may_reach(p, f)
	msg := sprintf("%s may expand to the forbidden path %s", [p, f])
}

pattern_may_reach(p, f) if {
	startswith(f, lib.dir_slash(lib.glob_base(p)))
	lib.segments_may_match(p, f)
}

pattern_may_reach(p, f) if {
	startswith(f, "**/")
	not contains(substring(f, 3, -1), "/")
	glob.match(lib.basename(p), null, substring(f, 3, -1))
}

# METADATA
# title: Forbidden path
# description: >-
#   The action reads, writes or recursively reaches a path on
#   forbidden_paths (credentials, devices, kernel interfaces, ...).
# custom:
#   id: path.forbidden
#   severity: high
deny contains r if {
	some msg in forbidden_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}
