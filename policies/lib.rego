# METADATA
# title: claw policy helpers
# description: >-
#   Helpers shared by the built-in policies and by user policies
#   (import data.claw.lib). Every helper is a pure function of its
#   arguments; none of them reads input or data.
package claw.lib

# reason builds a decision reason from the metadata of the calling rule,
# so a rule id is written once, in its METADATA block:
#
#   deny contains lib.reason(rego.metadata.rule(), "what happened") if { ... }
reason(meta, msg) := {"id": meta.custom.id, "severity": meta.custom.severity, "msg": msg}

# severity_rank orders severities and risk levels.
severity_rank := {"low": 0, "medium": 1, "high": 2, "critical": 3}

# severity_names maps a rank back to its name.
severity_names := ["low", "medium", "high", "critical"]

# dir_slash(d) is d with one trailing slash: every path strictly below d
# starts with it ("/" stays "/").
dir_slash(d) := concat("", [d, "/"]) if {
	not endswith(d, "/")
} else := d

# under(p, d) holds when p is d or lies below it. Both are canonical
# absolute paths.
under(p, d) if p == d

under(p, d) if startswith(p, dir_slash(d))

# under_any(p, dirs) holds when p is, or lies below, one of dirs.
under_any(p, dirs) if p in dirs

under_any(p, dirs) if strings.any_prefix_match(p, [dir_slash(d) | some d in dirs])

# safe_devices are character devices that are never a confinement
# problem: reading or writing them touches no file.
safe_devices := {
	"/dev/null",
	"/dev/zero",
	"/dev/full",
	"/dev/random",
	"/dev/urandom",
	"/dev/stdin",
	"/dev/stdout",
	"/dev/stderr",
	"/dev/tty",
}

# has_glob(p) holds when p still contains a character the shell would
# expand as a pathname pattern (the gate does not glob).
has_glob(p) if contains(p, "*")

has_glob(p) if contains(p, "?")

has_glob(p) if contains(p, "[")

# glob_base(p) is the literal directory a pattern path expands under:
# "/usr/*" gives "/usr", "/*" and "/u*/bin" give "/", "/ws/a*.txt" gives
# "/ws". A path without a pattern is returned as it is.
glob_base(p) := p if {
	not has_glob(p)
} else := b if {
	b := regex.replace(p, `/[^/]*[*?\[].*$`, "")
	b != ""
} else := "/"

# segments_may_match(pattern, p) holds when the shell pattern could match
# p or an ancestor or descendant of it: each path element of the pattern
# matches the element of p at the same depth, as far as both go. An
# element of p that is itself a pattern matches anything.
segments_may_match(pattern, p) if {
	ps := split(pattern, "/")
	fs := split(p, "/")
	n := min([count(ps), count(fs)])
	every i in numbers.range(0, n - 1) {
		segment_matches(ps[i], fs[i])
	}
}

segment_matches(pat, s) if glob.match(pat, null, s)

segment_matches(_, s) if contains(s, "*")

# basename(p) is the last element of a slash-separated path.
basename(p) := regex.replace(p, `^.*/`, "")

# is_ancestor(d, p) holds when d is a proper ancestor directory of p.
is_ancestor(d, p) if {
	d != p
	startswith(p, dir_slash(d))
}

# has_opt(c, o) holds when the parsed command c was given option o
# (short options are split: -rf gives "r" and "f").
has_opt(c, o) if o in c.opts

# has_any_opt(c, opts) holds when c was given one of opts.
has_any_opt(c, opts) if {
	some o in c.opts
	o in opts
}

# has_mark(c, kind) holds when the parsed command c carries a mark of kind.
has_mark(c, kind) if {
	some m in c.marks
	m.kind == kind
}

# has_marks(c) holds when the parsed command c carries any mark.
has_marks(c) if {
	some _ in c.marks
}

# recursive(c) holds when c was given -r, -R or --recursive.
recursive(c) if has_any_opt(c, {"r", "R", "recursive"})

# dangerous_mode(m) holds for chmod modes that make a file writable by
# others ("777", "o+w", "a=rwx", "+w") or setuid/setgid ("4755", "u+s",
# "g+s").
dangerous_mode(m) if regex.match(`^[0-7]*[2367]$`, m)

dangerous_mode(m) if regex.match(`(^|,)([ugoa]*[ao][ugoa]*)?[+=][rwxXstugo]*w`, m)

dangerous_mode(m) if regex.match(`^[0-7]*[2-7][0-7]{3}$`, m)

dangerous_mode(m) if regex.match(`(^|,)[ugoa]*[+=][rwxXt]*s`, m)
