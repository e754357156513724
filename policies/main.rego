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
# Configuration (data.claw.config), over fail-closed defaults. The config is
# read as one object: referring to data as a whole from this package would
# make every rule depend on itself. Booleans count only when they are
# exactly true (or, for workspace_only, exactly false).

# Each setting is read on its own, over its default: a whole-object merge
# would be built again for every decision.

default workspace_only := true

workspace_only := false if data.claw.config.workspace_only == false

passphrase_enabled if data.claw.config.passphrase_enabled == true

allow_privilege_escalation if data.claw.config.allow_privilege_escalation == true

default forbidden_paths := []

forbidden_paths := data.claw.config.forbidden_paths

default read_paths := []

read_paths := data.claw.config.read_paths

default forbidden_commands := ["rm", "shutdown", "reboot", "mkfs", "dd"]

forbidden_commands := data.claw.config.forbidden_commands

default allowed_commands := []

allowed_commands := data.claw.config.allowed_commands

default allowed_domains := []

allowed_domains := data.claw.config.allowed_domains

default allowed_registries := []

allowed_registries := data.claw.config.allowed_registries

default workspace_exec_allow := []

workspace_exec_allow := data.claw.config.workspace_exec_allow

default passphrase_for := []

passphrase_for := data.claw.config.passphrase_for

# ---------------------------------------------------------------------------
# Input accessors. Rules test input.kind and input.context.autonomy
# directly: OPA indexes such comparisons, so rules for other kinds are not
# even entered. A negated call goes through a helper rule, because a call
# with an undefined argument under "not" makes the whole rule undefined
# instead of true.

kind_known if input.kind in {"shell", "file_read", "file_write", "edit_file", "file_list", "http", "time", "memory_search", "ask_user", "yield_to_user", "tool", "plugin", "delegate"}

autonomy_known if input.context.autonomy in {"readonly", "supervised", "full"}

kind_label := input.kind if {
	is_string(input.kind)
} else := "action"

autonomy_label := input.context.autonomy if {
	is_string(input.context.autonomy)
} else := ""

# ws_valid: the workspace is a canonical absolute path other than "/".
# Without it nothing counts as inside the workspace.
ws_valid if {
	w := input.context.workspace
	is_string(w)
	startswith(w, "/")
	w != "/"
	not endswith(w, "/")
}

workspace := input.context.workspace if {
	ws_valid
} else := ""

ws_slash := concat("", [input.context.workspace, "/"]) if ws_valid

# inside_workspace(p): p is the workspace or lies below it.
inside_workspace(p) if startswith(concat("", [p, "/"]), ws_slash)

home := input.context.home if {
	is_string(input.context.home)
	startswith(input.context.home, "/")
} else := ""

cwd := input.context.cwd if {
	is_string(input.context.cwd)
} else := ""

cmds := input.parsed.commands if {
	input.kind == "shell"
	is_array(input.parsed.commands)
} else := []

redirects := input.parsed.redirects if {
	input.kind == "shell"
	is_array(input.parsed.redirects)
} else := []

# marks holds [kind, command name, detail] for every mark of every command.
marks contains [m.kind, object.get(c, "name", ""), object.get(m, "detail", "")] if {
	input.kind == "shell"
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
# every user rule, tests included. One rule for the three sets: the name
# of the set is known before the reference, so OPA looks up only that
# set in each module.
user_items contains [key, name, x] if {
	some key in ["deny", "ask", "passphrase"]
	some name
	some x in data.claw.user[name][key]
}

has_user_items if some _ in user_items

user_reasons(key) := {user_reason(x) |
	some [k, _, x] in user_items
	k == key
	valid_reason(x)
}

user_passphrase := set() if {
	not has_user_items
} else := user_reasons("passphrase")

# The rules on user items add to user_denials, which is only evaluated
# when a user policy produced anything.
deny contains r if {
	has_user_items
	some r in user_denials
}

# METADATA
# title: Malformed user policy reason
# description: >-
#   A user policy put something into deny, ask or passphrase that is not a
#   reason object with a string id. It is treated as a denial.
# custom:
#   id: user.invalid_reason
#   severity: high
user_denials contains r if {
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
user_denials contains r if {
	not passphrase_enabled
	some x in user_passphrase
	r := lib.reason(rego.metadata.rule(), sprintf("%s requires the passphrase, but no passphrase is configured", [x.id]))
}

# ---------------------------------------------------------------------------
# Risk: the maximum of the kind's base risk and the severities of every
# rule reason.

deny_reasons := deny if {
	not has_user_items
} else := deny | user_reasons("deny")

ask_reasons := ask if {
	not has_user_items
} else := ask | user_reasons("ask")

rule_reasons := ((deny_reasons | ask_reasons) | user_passphrase) | supervised_ask

# supervised_ask holds the reasons for reach a human sees at supervised
# autonomy and full autonomy allows: network that sends data or changes
# remote state, recursive deletes in the workspace. Each is medium, so it
# raises the risk; it is not an ask at full.

default base_rank := 2

base_rank := 0 if input.kind == "time"

base_rank := 0 if input.kind == "memory_search"

# ask_user only asks the person a question; the answer is theirs to give.
base_rank := 0 if input.kind == "ask_user"

# yield_to_user only ends an autonomous run's turn: it reaches nothing.
base_rank := 0 if input.kind == "yield_to_user"

# delegate starts a sub-agent whose every action is decided and receipted
# on its own, at an autonomy no wider than this one: by itself it reaches
# nothing but the model's provider, and spends its budget. Medium.
base_rank := 1 if input.kind == "delegate"

# Risk follows reach. A read or a write that stays in the workspace, a
# read under read_paths and a safe device are contained by the sandbox:
# low. Reach beyond them (possible only where workspace_only = false
# permits it) is medium for a read and high for a write.
base_rank := 1 if {
	input.kind in {"file_read", "file_list"}
	some _ in beyond_paths
} else := 0 if {
	input.kind in {"file_read", "file_list"}
}

base_rank := 2 if {
	input.kind in {"file_write", "edit_file"}
	some _ in beyond_paths
} else := 0 if {
	input.kind in {"file_write", "edit_file"}
}

# A GET or HEAD to an allowed host is low; any other method is medium.
base_rank := 0 if {
	input.kind == "http"
	http_method in {"GET", "HEAD"}
	host_allowed
} else := 1 if {
	input.kind == "http"
}

# A shell command is low when its reach stays in the workspace and
# read_paths: every program it runs, known or not, is confined there by
# the sandbox. Reach beyond (a write outside, a read outside read_paths,
# where workspace_only = false permits them) is medium, unless it is a
# read only by commands on allowed_commands (the additive trust list).
# Network, marks and the rest add reasons of their own.
base_rank := 0 if {
	input.kind == "shell"
	shell_parsed
	not shell_beyond
} else := 1 if {
	input.kind == "shell"
}

shell_beyond if {
	some p in beyond_paths
	not trusted_read(p)
}

trusted_read(p) if {
	not writes[p]
	every c in cmds {
		reads_by_allowed(c, p)
	}
}

reads_by_allowed(c, p) if not p in c.paths

reads_by_allowed(c, _) if command_allowed(c)

# beyond_paths are the paths an action reaches outside what the sandbox
# contains: not in the workspace, not a safe device, not a read under
# read_paths.
beyond_paths contains p if {
	some p in outside_paths
	not lib.safe_devices[p]
	not read_in_read_paths(p)
}

read_in_read_paths(p) if {
	not writes[p]
	under_read_paths(p)
}

base_rank := 1 if input.kind == "tool"

# A plugin tool is judged by the reach its manifest declares, like a file
# tool: reads and writes the sandbox contains (the workspace, reads under
# read_paths) are low, since the kernel holds it to them; a read beyond
# them is medium, a write beyond them high.
base_rank := 2 if {
	input.kind == "plugin"
	some p in beyond_paths
	writes[p]
} else := 1 if {
	input.kind == "plugin"
	some _ in beyond_paths
} else := 0 if {
	input.kind == "plugin"
}

command_allowed(c) if c.name in allowed_commands

command_allowed(c) if {
	"*" in allowed_commands
	c.name != ""
}

command_allowed(c) if rm_in_workspace(c)

# A call of a function the script surely defined runs the function's
# body, whose commands are listed and judged on their own.
command_allowed(c) if c.function == true

no_rule_reasons if {
	count(deny_reasons) == 0
	count(ask_reasons) == 0
	count(user_passphrase) == 0
	count(supervised_ask) == 0
}

# rank is the highest of base_rank and the ranks of the rule reasons.
# base_rank is never above high, so a critical or high reason decides it
# alone, without working out the reach of the action.
rank := base_rank if {
	no_rule_reasons
} else := 3 if {
	some r in rule_reasons
	r.severity == "critical"
} else := 2 if {
	some r in rule_reasons
	r.severity == "high"
} else := max(array.concat([base_rank], [lib.severity_rank[r.severity] | some r in rule_reasons]))

risk := ["low", "medium", "high", "critical"][rank]

# ---------------------------------------------------------------------------
# Combining: deny > passphrase > ask > allow.

# readonly allows only low-risk reads with nothing to ask about.
readonly_ok if {
	input.kind in {"file_read", "file_list", "time", "memory_search", "ask_user", "yield_to_user"}
	rank == 0
	count(ask_reasons) == 0
}

# A shell command at readonly runs with a sandbox that grants no write
# (sandbox_write), so one that writes nothing it names, reaches no network
# and stays in the workspace and read_paths only reads.
readonly_ok if {
	input.kind == "shell"
	rank == 0
	count(ask_reasons) == 0
	count(writes) == 0
	count(net_dests) == 0
}

readonly_ok if {
	input.kind == "http"
	http_method in {"GET", "HEAD"}
	rank == 0
	count(ask_reasons) == 0
}

# A readonly denial is never turned into a passphrase prompt.
readonly_blocks if {
	input.context.autonomy == "readonly"
	not readonly_ok
}

# The decision by autonomy alone, after rule denials and passphrase.
default by_autonomy := "deny"

by_autonomy := "allow" if {
	input.context.autonomy == "readonly"
	readonly_ok
}

# supervised runs what stays contained (low risk, nothing to ask) and
# asks for the rest; only rule denials deny, as at full.
by_autonomy := "allow" if {
	input.context.autonomy == "supervised"
	rank == 0
	count(ask_reasons) == 0
} else := "ask" if {
	input.context.autonomy == "supervised"
}

by_autonomy := "allow" if {
	input.context.autonomy == "full"
	count(ask_reasons) == 0
} else := "ask" if {
	input.context.autonomy == "full"
}

# A rule denial becomes a passphrase prompt only when every denying rule
# is listed in passphrase_for and none of them is critical.
deny_to_passphrase if {
	passphrase_enabled
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

# The common case first: nothing denies and no passphrase is configured.
decision := by_autonomy if {
	not data.claw.config.passphrase_enabled == true
	count(deny_reasons) == 0
} else := "deny" if {
	count(deny_reasons) > 0
	not deny_to_passphrase
} else := "passphrase" if {
	count(deny_reasons) > 0
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
	input.context.autonomy in {"readonly", "supervised"}
	decision == "allow"
	r := lib.reason(rego.metadata.rule(), sprintf("low-risk %s allowed at %s autonomy", [kind_label, autonomy_label]))
}

# METADATA
# title: Allowed at full autonomy
# custom:
#   id: allow.full_autonomy
#   severity: low
outcome contains r if {
	input.context.autonomy == "full"
	decision == "allow"
	r := lib.reason(rego.metadata.rule(), sprintf("%s-risk %s allowed at full autonomy", [risk, kind_label]))
}

# METADATA
# title: Reach beyond the sandbox needs approval under supervised autonomy
# custom:
#   id: autonomy.supervised.ask
#   severity: medium
outcome contains r if {
	input.context.autonomy == "supervised"
	decision == "ask"
	count(ask_reasons) == 0
	r := lib.reason(rego.metadata.rule(), sprintf("%s-risk %s needs approval at supervised autonomy", [risk, kind_label]))
}

# METADATA
# title: Readonly autonomy allows only low-risk reads
# custom:
#   id: autonomy.readonly
#   severity: medium
outcome contains r if {
	input.context.autonomy == "readonly"
	decision == "deny"
	count(deny_reasons) == 0
	r := lib.reason(rego.metadata.rule(), sprintf("readonly autonomy allows only low-risk reads, not a %s-risk %s", [risk, kind_label]))
}

# METADATA
# title: Passphrase required
# custom:
#   id: passphrase.required
#   severity: high
outcome contains r if {
	data.claw.config.passphrase_enabled == true
	decision == "passphrase"
	r := lib.reason(rego.metadata.rule(), sprintf("%s-risk %s needs the passphrase (passphrase_for)", [risk, kind_label]))
}

# reasons lists the denials (most severe first), then the passphrase and
# approval reasons, then the outcome.
reasons := sort(outcome) if {
	no_rule_reasons
} else := array.concat(ordered_denials, array.concat(array.concat(sort(user_passphrase), sort(ask_reasons | supervised_ask)), sort(outcome)))

# ordered_denials sorts the denials by severity, most severe first, and
# in sorted order within a severity.
ordered_denials := [] if {
	count(deny_reasons) == 0
} else := [r | some [_, r] in sort([[0 - lib.severity_rank[r.severity], r] | some r in deny_reasons])]

# ---------------------------------------------------------------------------
# Sandbox plan: what the executor may touch if the action runs. A pattern
# path gives the directory it expands in.

workspace_list := [input.context.workspace] if {
	ws_valid
} else := []

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

sandbox_read := workspace_list if {
	not has_paths
} else := workspace_list if {
	count(outside_paths) == 0
} else := sort({lib.glob_base(p) |
	some p in outside_paths
	reads[p]
	read_permitted(p)
} | {p | some p in workspace_list})

default sandbox_write := []

sandbox_write := write_plan if {
	input.kind == "shell"
	input.context.autonomy != "readonly"
}

sandbox_write := write_plan if input.kind == "file_write"

sandbox_write := write_plan if input.kind == "edit_file"

sandbox_write := write_plan if {
	input.kind == "plugin"
	some _ in input.writes
}

write_plan := workspace_list if {
	workspace_only
} else := sort({lib.glob_base(p) |
	some p in outside_paths
	writes[p]
	not forbidden_path(p)
} | {p | some p in workspace_list})

# sandbox_protect lists the workspace paths that run code outside the
# sandbox later (git hooks and configuration, editor, direnv and agent
# configuration): an action that may write the workspace must find them
# read-only, since Landlock cannot carve them out of the granted tree. The
# executor keeps those that exist read-only with a bind mount. They are
# relative to the workspace; Go makes them absolute. One that
# workspace_exec_allow covers, or that holds a path it lists, is left
# writable: the bind mount cannot make one file inside it writable.
default sandbox_protect := []

# It is protect_rel itself when nothing is listed (the common case: one
# comparison instead of two lookups per protected path).
sandbox_protect := protect_rel if {
	ws_valid
	input.kind in {"shell", "file_write", "edit_file"}
	count(workspace_exec_allow) == 0
} else := [p |
	some p in protect_rel
	not protect_lifted(p)
] if {
	ws_valid
	input.kind in {"shell", "file_write", "edit_file"}
}

protect_lifted(p) if exec_granted(p)

protect_lifted(p) if {
	some g in workspace_exec_allow
	path_covers(p, g)
}

protect_rel := [
	".git/hooks", ".git/config", ".git/config.worktree", ".git/info", ".git/modules",
	".gitattributes", ".gitmodules", ".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml",
	".pnpmfile.cjs", ".cargo", ".vscode", ".idea", ".claude", ".mcp.json", ".codex",
	".cursor", ".husky", ".mise.toml", "mise.toml", ".gemini",
]

# The http tool reaches the network; any other action only the hosts its
# plan admits, which come from its destinations (tested first, through
# OPA's index, so an action without any enters no rule here).
default sandbox_net := false

sandbox_net if input.kind == "http"

sandbox_net if {
	input.destinations[0] = _
	count(net_hosts) > 0
}

# ---------------------------------------------------------------------------
# The combined result; grants.rego turns it into the result document Go
# reads (data.claw.gate.result).

# combined is the result before grants; grants.rego makes it the result.
combined := {
	"decision": decision,
	"risk": risk,
	"reasons": reasons,
	"sandbox": {
		"read": sandbox_read,
		"write": sandbox_write,
		"net": sandbox_net,
		"network": {"hosts": sort(net_hosts)},
		"protect": sandbox_protect,
	},
}
