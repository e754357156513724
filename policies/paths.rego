# Path rules: what the action reads and writes, confinement to the
# workspace, and forbidden paths (reads too).
package claw.gate

import data.claw.lib

# ---------------------------------------------------------------------------
# The paths an action touches. Go made them canonical; the shell analysis
# adds the paths of every command, redirection targets, and the paths that
# file-changing commands modify.

# reads holds every path the action reads or names; writes every path
# it would create, change or remove. Only the shell adds to input's. A
# rule over an input list first tests that it has a first element
# (input.paths[0] = _): OPA's index answers that test, so the rule is not
# entered for an action whose list is empty.
reads contains p if {
	input.paths[0] = _
	some p in input.paths
}

reads contains p if {
	input.kind == "shell"
	some c in cmds
	some p in c.paths
}

reads contains r.target if {
	input.kind == "shell"
	input.parsed.redirects[0] = _
	some r in redirects
	not r.write
	startswith(r.target, "/")
}

writes contains p if {
	input.writes[0] = _
	some p in input.writes
}

writes contains p if {
	input.kind == "shell"
	some c in cmds
	some p in c.writes
}

writes contains r.target if {
	input.kind == "shell"
	input.parsed.redirects[0] = _
	some r in redirects
	r.write == true
	startswith(r.target, "/")
}

writes contains p if {
	input.kind == "shell"
	some c in cmds
	c.name in path_writers
	some p in command_writes(c)
}

writes contains p if {
	input.kind == "shell"
	some c in cmds
	startswith(c.name, "mkfs.")
	some p in c.paths
}

# command_writes(c) are the paths the file-changing command c modifies.
command_writes(c) := c.paths if {
	c.name in modifies_operands
} else := c.paths if {
	c.name in {"sed", "perl", "ruby"}
	lib.has_any_opt(c, {"i", "in-place"})
} else := c.paths if {
	c.name == "find"
	"-delete" in c.argv
} else := c.paths if {
	# cp -t DIR, ln -t DIR, ...: any path may be the target.
	c.name in copies_to_last
	lib.has_any_opt(c, {"t", "target-directory"})
} else := [c.paths[count(c.paths) - 1]] if {
	# cp, ln, install, rsync and scp write their last path.
	c.name in copies_to_last
	is_array(c.paths)
	count(c.paths) > 0
} else := [dd_target(substring(op, 3, -1)) |
	# dd of=FILE, relative to the starting directory when not absolute.
	c.name == "dd"
	some op in c.operands
	startswith(op, "of=")
]

dd_target(t) := t if {
	startswith(t, "/")
} else := concat("", [lib.dir_slash(cwd), t])

# path_writers are the commands command_writes knows.
path_writers := {
	"rm", "rmdir", "unlink", "shred", "touch", "mkdir", "mkfifo", "mknod",
	"chmod", "chown", "chgrp", "chattr", "setfacl", "truncate", "tee", "mv",
	"wipefs", "blkdiscard", "fallocate", "mkswap", "fdisk", "sfdisk",
	"sgdisk", "parted", "patch", "mkfs", "mke2fs",
	"cp", "ln", "install", "rsync", "scp",
	"sed", "perl", "ruby", "find", "dd",
}

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

# The path rules add to path_denials, which is only evaluated when the
# action names paths at all.
deny contains r if {
	has_paths
	some r in path_denials
}

# has_paths guards the path rules: any action names paths in input.paths
# and input.writes; a shell command may name more in its analysis.
has_paths if input.paths[0] = _

has_paths if {
	input.kind == "shell"
	some _ in all_paths
}

has_paths if input.writes[0] = _

# outside_paths are the paths that are not the workspace or below it.
outside_paths contains p if {
	some p in all_paths
	not startswith(concat("", [p, "/"]), ws_slash)
}

# pattern_paths are shell paths that still hold a pattern the shell would
# expand (the gate does not glob).
pattern_paths contains p if {
	input.kind == "shell"
	some c in cmds
	some p in c.paths
	regex.match(`[*?\[]`, p)
}

# ---------------------------------------------------------------------------
# Workspace confinement.

read_prefixes := [concat("", [trim_suffix(d, "/"), "/"]) | some d in read_paths]

under_read_paths(p) if p in read_paths

under_read_paths(p) if strings.any_prefix_match(p, read_prefixes)

outside_msg(p) := sprintf("writing %s outside the workspace is not allowed", [p]) if {
	writes[p]
} else := sprintf("reading %s outside the workspace is not allowed", [p]) if {
	not under_read_paths(p)
}

# METADATA
# title: Path outside the workspace
# description: >-
#   With workspace_only, reads must stay in the workspace, read_paths or
#   the safe devices, and writes must stay in the workspace.
# custom:
#   id: path.outside_workspace
#   severity: high
path_denials contains r if {
	some p in outside_paths
	workspace_only
	not lib.safe_devices[p]
	r := lib.reason(rego.metadata.rule(), outside_msg(p))
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

# Go may hand the glob over ready-made (policies.ForbiddenGlob) as
# forbidden_glob, which saves building it for every decision; it must be
# built from the same forbidden_paths.
forbidden_glob := data.claw.config.forbidden_glob if {
	is_string(data.claw.config.forbidden_glob)
	data.claw.config.forbidden_glob != ""
} else := "**" if {
	"/" in forbidden_paths
} else := concat("", ["{", strings.replace_n(glob_escapes, concat("\u0000", forbidden_paths)), "}{,/**}"]) if {
	count(forbidden_paths) > 0
}

forbidden_path(p) if glob.match(forbidden_glob, ["/"], p)

# forbidden_entry(p) is the entry that forbids p, for messages: the
# nearest listed ancestor (or p itself), else the first matching pattern.
forbidden_entry(p) := f if {
	parts := split(p, "/")
	f := [a |
		some n in numbers.range(count(parts), 2)
		a := concat("/", array.slice(parts, 0, n))
		a in forbidden_paths
	][0]
} else := f if {
	f := [f |
		some f in forbidden_paths
		contains(f, "*")
		pattern_matches(f, p)
	][0]
} else := "/" if {
	"/" in forbidden_paths
} else := "forbidden_glob"

pattern_matches(f, p) if glob.match(f, ["/"], p)

pattern_matches(f, p) if glob.match(concat("", [f, "/**"]), ["/"], p)

# expanding_targets are directories whose whole subtree the action
# reaches: the paths of recursive commands.
expanding_targets contains p if {
	input.kind == "shell"
	some c in cmds
	c.name in expanding_names
	expands(c)
	some p in c.paths
}

expanding_names := {
	"rm", "cp", "scp", "chmod", "chown", "chgrp", "chattr", "setfacl",
	"grep", "egrep", "fgrep", "zip", "diff", "mv", "tar", "rsync", "rg",
	"ag", "7z", "bsdtar", "find",
}

expands(c) if c.name in {"mv", "tar", "rsync", "rg", "ag", "7z", "bsdtar"}

expands(c) if {
	not c.name in {"cp", "find"}
	lib.recursive(c)
}

expands(c) if {
	c.name == "cp"
	lib.has_any_opt(c, {"r", "R", "recursive", "a", "archive"})
}

expands(c) if {
	c.name == "find"
	some a in c.argv
	a in {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls"}
}

forbidden_msgs contains msg if {
	some p in all_paths
	glob.match(forbidden_glob, ["/"], p)
	msg := sprintf("%s is forbidden (forbidden_paths: %s)", [p, forbidden_entry(p)])
}

forbidden_msgs contains msg if {
	input.kind == "shell"
	some t in expanding_targets
	not forbidden_path(t)
	d := lib.dir_slash(t)
	f := first_forbidden_below(d)
	msg := sprintf("%s contains the forbidden path %s", [t, f])
}

# first_forbidden_below(d) is the first forbidden_paths entry that starts
# with d. It is found with one search in the entries joined by NUL (which
# no entry holds, as for the glob above), not a test of every entry: the
# recursive commands on / or ~ that reach here would test them all.
first_forbidden_below(d) := f if {
	not contains(d, "\u0000")
	i := indexof(forbidden_joined, concat("", ["\u0000", d]))
	i >= 0
	f := split(substring(forbidden_joined, i + 1, -1), "\u0000")[0]
}

forbidden_joined := concat("\u0000", array.concat([""], forbidden_paths))

# A shell pattern the gate did not expand (/home/u/.s*/id_rsa) is
# forbidden when it may expand to a forbidden path or into one. The
# tests are written out here, not called once per forbidden path: a
# pattern is tested against every entry, and a function call for each
# cost two rule entries.
forbidden_msgs contains msg if {
	input.kind == "shell"
	some p in pattern_paths
	d := lib.dir_slash(lib.glob_base(p))
	some f in forbidden_paths
	startswith(f, d)
	lib.segments_may_match(p, f)
	msg := sprintf("%s may expand to the forbidden path %s", [p, f])
}

# A "**/name" entry (docker.sock) is matched by a pattern outside the
# workspace; inside it, the workspace's own files are the sandbox's to
# give (du -sh * is not a reach for a socket).
forbidden_msgs contains msg if {
	input.kind == "shell"
	some p in pattern_paths
	not startswith(p, ws_slash)
	some f in forbidden_paths
	startswith(f, "**/")
	not contains(substring(f, 3, -1), "/")
	glob.match(lib.basename(p), null, substring(f, 3, -1))
	msg := sprintf("%s may expand to the forbidden path %s", [p, f])
}

# METADATA
# title: Forbidden path
# description: >-
#   The action reads, writes or recursively reaches a path on
#   forbidden_paths (credentials, devices, kernel interfaces, ...).
# custom:
#   id: path.forbidden
#   severity: high
path_denials contains r if {
	some msg in forbidden_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}
