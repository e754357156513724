# METADATA
# title: claw gate
# description: >-
#   The decision for one proposed action: data.claw.gate.result. The rules
#   in this package (main, tools, paths, commands, destructive, network)
#   add reasons to deny and ask; this file folds in user policies
#   (data.claw.user.<name>), computes the risk, combines everything into
#   allow, ask, passphrase or deny, and plans the sandbox.
package claw.gate

import data.claw.lib

# ---------------------------------------------------------------------------
# Configuration (data.claw.config). Each key falls back to a fail-closed
# default when it is absent or has the wrong type. Keys are read one by one:
# referring to data as a whole from this package would make every rule
# depend on itself.

default workspace_only := true

workspace_only := data.claw.config.workspace_only if is_boolean(data.claw.config.workspace_only)

default forbidden_paths := []

forbidden_paths := data.claw.config.forbidden_paths if is_array(data.claw.config.forbidden_paths)

default read_paths := []

read_paths := data.claw.config.read_paths if is_array(data.claw.config.read_paths)

default forbidden_commands := ["rm", "shutdown", "reboot", "mkfs", "dd"]

forbidden_commands := data.claw.config.forbidden_commands if is_array(data.claw.config.forbidden_commands)

default allowed_commands := []

allowed_commands := data.claw.config.allowed_commands if is_array(data.claw.config.allowed_commands)

default allowed_domains := []

allowed_domains := data.claw.config.allowed_domains if is_array(data.claw.config.allowed_domains)

default passphrase_enabled := false

passphrase_enabled := data.claw.config.passphrase_enabled if is_boolean(data.claw.config.passphrase_enabled)

default passphrase_for := []

passphrase_for := data.claw.config.passphrase_for if is_array(data.claw.config.passphrase_for)

default allow_privilege_escalation := false

allow_privilege_escalation := data.claw.config.allow_privilege_escalation if {
	is_boolean(data.claw.config.allow_privilege_escalation)
}

# ---------------------------------------------------------------------------
# Input accessors, with defaults so that a malformed input still decides.

known_kinds := {"shell", "file_read", "file_write", "edit_file", "file_list", "http", "time", "memory_search", "tool"}

default kind_label := "action"

kind_label := input.kind if is_string(input.kind)

default autonomy := ""

autonomy := input.context.autonomy if is_string(input.context.autonomy)

default workspace := ""

workspace := input.context.workspace if is_string(input.context.workspace)

# ws_valid: the workspace is a canonical absolute path other than "/".
# Without it nothing counts as inside the workspace.
ws_valid if {
	startswith(workspace, "/")
	workspace != "/"
	not endswith(workspace, "/")
}

ws_slash := concat("", [workspace, "/"]) if ws_valid

inside_workspace(p) if {
	ws_valid
	p == workspace
}

inside_workspace(p) if startswith(p, ws_slash)

default home := ""

home := input.context.home if {
	is_string(input.context.home)
	startswith(input.context.home, "/")
}

default cwd := ""

cwd := input.context.cwd if is_string(input.context.cwd)

default cmds := []

cmds := input.parsed.commands if {
	input.kind == "shell"
	is_array(input.parsed.commands)
}

default redirects := []

redirects := input.parsed.redirects if {
	input.kind == "shell"
	is_array(input.parsed.redirects)
}

# marks holds [kind, command name, detail] for every mark of every command.
marks contains [m.kind, object.get(c, "name", ""), object.get(m, "detail", "")] if {
	some c in cmds
	some m in c.marks
}

mark_kinds contains k if some [k, _, _] in marks

# ---------------------------------------------------------------------------
# User policies: modules in package claw.user.<name> may define the sets
# deny, ask and passphrase of reasons ({id, severity, msg}). They can only
# add reasons; nothing here lets them remove one.

valid_reason(x) if {
	is_object(x)
	is_string(x.id)
	x.id != ""
}

user_reason(x) := {
	"id": x.id,
	"severity": user_severity(x),
	"msg": user_msg(x),
}

user_severity(x) := x.severity if {
	x.severity in lib.severity_names
} else := "high"

user_msg(x) := x.msg if {
	is_string(x.msg)
} else := x.id

# user_items holds [set, module, item] for every item of every user
# module's deny, ask and passphrase sets. Each set is referred to by name:
# referring to data.claw.user as a whole would make the gate depend on
# every user rule, tests included.
user_items contains ["deny", name, x] if {
	some name
	some x in data.claw.user[name].deny
}

user_items contains ["ask", name, x] if {
	some name
	some x in data.claw.user[name].ask
}

user_items contains ["passphrase", name, x] if {
	some name
	some x in data.claw.user[name].passphrase
}

user_deny contains user_reason(x) if {
	some ["deny", _, x] in user_items
	valid_reason(x)
}

user_ask contains user_reason(x) if {
	some ["ask", _, x] in user_items
	valid_reason(x)
}

user_passphrase contains user_reason(x) if {
	some ["passphrase", _, x] in user_items
	valid_reason(x)
}

# METADATA
# title: Malformed user policy reason
# description: >-
#   A user policy put something into deny, ask or passphrase that is not a
#   reason object with a string id. It is treated as a denial.
# custom:
#   id: user.invalid_reason
#   severity: high
deny contains r if {
	some [key, name, x] in user_items
	not valid_reason(x)
	r := lib.reason(rego.metadata.rule(), sprintf("user policy %s: %s contains %v, not a reason {id, severity, msg}", [name, key, x]))
}

# METADATA
# title: Passphrase required but not configured
# description: >-
#   A user policy asked for the passphrase but no passphrase is set; the
#   gate cannot be satisfied, so the action is denied.
# custom:
#   id: passphrase.unavailable
#   severity: high
deny contains r if {
	not passphrase_enabled
	some x in user_passphrase
	r := lib.reason(rego.metadata.rule(), sprintf("%s requires the passphrase, but no passphrase is configured", [x.id]))
}

# ---------------------------------------------------------------------------
# Risk: the maximum of the kind's base risk and the severities of every
# rule reason.

deny_reasons := deny | user_deny

ask_reasons := ask | user_ask

rule_reasons := (deny_reasons | ask_reasons) | user_passphrase

default base_rank := 2

base_rank := 0 if input.kind == "time"

base_rank := 0 if input.kind == "memory_search"

base_rank := read_rank if input.kind == "file_read"

base_rank := read_rank if input.kind == "file_list"

base_rank := write_rank if input.kind == "file_write"

base_rank := write_rank if input.kind == "edit_file"

base_rank := http_rank if input.kind == "http"

base_rank := shell_rank if input.kind == "shell"

base_rank := 1 if input.kind == "tool"

# A read is low inside the workspace and medium outside it (where it is
# only permitted by read_paths or workspace_only = false).
read_rank := 1 if {
	some p in all_paths
	not inside_workspace(p)
} else := 0

# A write is medium inside the workspace and high outside it.
write_rank := 2 if {
	some p in all_paths
	not inside_workspace(p)
} else := 1

# A GET or HEAD to an allowed host is low; any other method is medium.
http_rank := 0 if {
	http_method in {"GET", "HEAD"}
	host_allowed
} else := 1

# A shell command is medium when every command it runs is on the
# allowlist, unmarked and static; anything else is high.
shell_rank := 1 if {
	shell_parsed
	not input.parsed.dynamic
	every c in cmds {
		plain_command(c)
	}
} else := 2

plain_command(c) if {
	not c.dynamic
	not lib.has_marks(c)
	command_allowed(c)
}

command_allowed(c) if c.name in allowed_commands

command_allowed(c) if {
	"*" in allowed_commands
	c.name != ""
}

command_allowed(c) if rm_in_workspace(c)

rank := max(array.concat([base_rank], [lib.severity_rank[r.severity] | some r in rule_reasons]))

risk := lib.severity_names[rank]

# ---------------------------------------------------------------------------
# Combining: deny > passphrase > ask > allow.

# readonly allows only low-risk reads with nothing to ask about.
readonly_kind if input.kind in {"file_read", "file_list", "time", "memory_search"}

readonly_kind if {
	input.kind == "http"
	http_method in {"GET", "HEAD"}
}

readonly_ok if {
	readonly_kind
	rank == 0
	count(ask_reasons) == 0
}

# A readonly denial is never turned into a passphrase prompt.
readonly_blocks if {
	autonomy == "readonly"
	not readonly_ok
}

# The decision by autonomy alone, after rule denials and passphrase.
default by_autonomy := "deny"

by_autonomy := "allow" if {
	autonomy == "readonly"
	readonly_ok
}

by_autonomy := "allow" if {
	autonomy == "supervised"
	rank == 0
	count(ask_reasons) == 0
}

by_autonomy := "ask" if {
	autonomy == "supervised"
	rank == 0
	count(ask_reasons) > 0
}

by_autonomy := "ask" if {
	autonomy == "supervised"
	rank == 1
}

by_autonomy := "allow" if {
	autonomy == "full"
	count(ask_reasons) == 0
}

by_autonomy := "ask" if {
	autonomy == "full"
	count(ask_reasons) > 0
}

# A rule denial becomes a passphrase prompt only when every denying rule
# is listed in passphrase_for and none of them is critical.
deny_to_passphrase if {
	passphrase_enabled
	count(deny_reasons) > 0
	every r in deny_reasons {
		r.id in passphrase_for
		r.severity != "critical"
	}
	not readonly_blocks
}

# The passphrase is wanted for a risk level or a reason id listed in
# passphrase_for, or because a user policy asked for it.
passphrase_wanted if risk in passphrase_for

passphrase_wanted if {
	some r in ask_reasons
	r.id in passphrase_for
}

passphrase_wanted if count(user_passphrase) > 0

default decision := "deny"

decision := "deny" if {
	count(deny_reasons) > 0
	not deny_to_passphrase
} else := "passphrase" if {
	deny_to_passphrase
} else := "passphrase" if {
	passphrase_enabled
	passphrase_wanted
	not readonly_blocks
} else := by_autonomy

# ---------------------------------------------------------------------------
# Outcome reasons: why the combination came out as it did when no rule
# reason says it.

# METADATA
# title: Low-risk action allowed
# custom:
#   id: allow.low_risk
#   severity: low
outcome contains r if {
	decision == "allow"
	autonomy != "full"
	r := lib.reason(rego.metadata.rule(), sprintf("low-risk %s allowed at %s autonomy", [kind_label, autonomy]))
}

# METADATA
# title: Allowed at full autonomy
# custom:
#   id: allow.full_autonomy
#   severity: low
outcome contains r if {
	decision == "allow"
	autonomy == "full"
	r := lib.reason(rego.metadata.rule(), sprintf("%s-risk %s allowed at full autonomy", [risk, kind_label]))
}

# METADATA
# title: Medium risk needs approval under supervised autonomy
# custom:
#   id: autonomy.supervised.ask
#   severity: medium
outcome contains r if {
	decision == "ask"
	autonomy == "supervised"
	rank == 1
	r := lib.reason(rego.metadata.rule(), sprintf("medium-risk %s needs approval at supervised autonomy", [kind_label]))
}

# METADATA
# title: High risk denied under supervised autonomy
# custom:
#   id: risk.high
#   severity: high
outcome contains r if {
	decision == "deny"
	count(deny_reasons) == 0
	autonomy == "supervised"
	r := lib.reason(rego.metadata.rule(), sprintf("%s-risk %s is denied at supervised autonomy", [risk, kind_label]))
}

# METADATA
# title: Readonly autonomy allows only low-risk reads
# custom:
#   id: autonomy.readonly
#   severity: medium
outcome contains r if {
	decision == "deny"
	count(deny_reasons) == 0
	autonomy == "readonly"
	r := lib.reason(rego.metadata.rule(), sprintf("readonly autonomy allows only low-risk reads, not a %s-risk %s", [risk, kind_label]))
}

# METADATA
# title: Passphrase required
# custom:
#   id: passphrase.required
#   severity: high
outcome contains r if {
	decision == "passphrase"
	r := lib.reason(rego.metadata.rule(), sprintf("%s-risk %s needs the passphrase (passphrase_for)", [risk, kind_label]))
}

# reasons lists the denials (most severe first), then the passphrase and
# approval reasons, then the outcome.
reasons := array.concat(
	array.concat(by_severity(deny_reasons), sort(user_passphrase)),
	array.concat(sort(ask_reasons), sort(outcome)),
)

by_severity(s) := [r |
	some sev in ["critical", "high", "medium", "low"]
	some r in sort(s)
	r.severity == sev
]

# ---------------------------------------------------------------------------
# Sandbox plan: what the executor may touch if the action runs.

write_kinds := {"shell", "file_write", "edit_file"}

sandbox_read contains workspace if ws_valid

sandbox_read contains lib.glob_base(p) if {
	some p in reads
	not inside_workspace(p)
	read_permitted(p)
}

read_permitted(p) if {
	not forbidden_path(p)
	lib.safe_devices[p]
}

read_permitted(p) if {
	not forbidden_path(p)
	under_read_paths(p)
}

read_permitted(p) if {
	not forbidden_path(p)
	not workspace_only
}

sandbox_write contains workspace if {
	input.kind in write_kinds
	ws_valid
}

sandbox_write contains lib.glob_base(p) if {
	input.kind in write_kinds
	not workspace_only
	some p in writes
	not inside_workspace(p)
	not forbidden_path(p)
}

default sandbox_net := false

sandbox_net if input.kind == "http"

sandbox := {
	"read": sort(sandbox_read),
	"write": sort(sandbox_write),
	"net": sandbox_net,
}

# ---------------------------------------------------------------------------
# The result document Go reads.

result := {
	"decision": decision,
	"risk": risk,
	"reasons": reasons,
	"sandbox": sandbox,
}
