# Grants: an approver's "yes" that covers a scoped family of actions for a
# bounded time (data.claw.grants, written by Go from the grant store, with
# expired and revoked grants already left out). A grant only ever turns an
# ask into an allow: the combination in main.rego is computed first, and a
# deny or a passphrase decision is never looked at here.
package claw.gate

import data.claw.lib

default grants := []

grants := data.claw.grants

# ---------------------------------------------------------------------------
# The facts a scope is matched against. Each list is one rule per source of
# the fact, so a new source (say, the network hosts a shell command
# reaches) is one more rule here and every grant's host scope covers it.

# grant_hosts: the network hosts the action reaches.
grant_hosts contains input.url.host if input.kind == "http"

# grant_paths: the canonical paths the action reads or writes.
grant_paths contains p if some p in input.paths

grant_paths contains p if some p in input.writes

# grant_methods: the http request method (an argument constraint).
grant_methods contains http_method if input.kind == "http"

# ---------------------------------------------------------------------------
# What no grant covers: an action the gate could not analyse completely, or
# a shell command that runs code the approver did not see (any mark:
# inline code, exec flags, interpreters reading stdin, ...).

grant_blocked if count(input.errors) > 0

grant_blocked if input.context.estop == true

grant_blocked if {
	input.kind == "shell"
	input.parsed.dynamic == true
}

grant_blocked if {
	input.kind == "shell"
	input.parsed.error != ""
}

grant_blocked if {
	input.kind == "shell"
	count(cmds) == 0
}

grant_blocked if {
	input.kind == "shell"
	some c in cmds
	count(c.marks) > 0
}

grant_blocked if {
	input.kind == "shell"
	some c in cmds
	c.dynamic == true
}

# ---------------------------------------------------------------------------
# Matching one grant's scope. Every fact of the action must lie inside the
# scope; a scope that names no paths (hosts, methods) covers only actions
# without any.

grant_covers(g) if {
	g.scope.tool == input.action.tool
	grant_commands_ok(g.scope)
	grant_field_ok(g.scope.autonomy, input_autonomy)
	grant_field_ok(g.scope.conversation, input_conversation)
	every p in grant_paths {
		some pre in g.scope.paths
		lib.under(p, pre)
	}
	every h in grant_hosts {
		h in g.scope.hosts
	}
	every m in grant_methods {
		m in g.scope.methods
	}
}

input_autonomy := object.get(input.context, "autonomy", "")

input_conversation := object.get(input.context, "conversation", "")

# grant_field_ok: the scope leaves the field open ("") or names the value.
grant_field_ok("", _)

grant_field_ok(want, v) if {
	want == v
	v != ""
}

grant_commands_ok(scope) if {
	input.kind != "shell"
	count(object.get(scope, "commands", [])) == 0
}

# Every command the shell action runs matches one of the scope's commands.
grant_commands_ok(scope) if {
	input.kind == "shell"
	every c in cmds {
		some sc in scope.commands
		grant_command_matches(sc, c, scope.args)
	}
}

grant_command_matches(sc, c, "any") if {
	c.name == sc.program
	sc.subcommand == ""
}

grant_command_matches(sc, c, "any") if {
	c.name == sc.program
	sc.subcommand != ""
	count(c.argv) > 1
	c.argv[1] == sc.subcommand
}

grant_command_matches(sc, c, "none") if {
	c.name == sc.program
	sc.subcommand == ""
	count(c.argv) == 1
}

grant_command_matches(sc, c, "none") if {
	c.name == sc.program
	sc.subcommand != ""
	count(c.argv) == 2
	c.argv[1] == sc.subcommand
}

# ---------------------------------------------------------------------------
# The result: the grants that cover an ask (sorted by id), and the first
# one's reason.

applied_grants := sort([g.id |
	some g in grants
	is_string(g.id)
	grant_covers(g)
])

applied_grant := applied_grants[0]

# result is the combined result, unless it is an ask a grant covers: the
# common cases (no ask, or no grant) cost one comparison each.
result := combined if {
	decision != "ask"
} else := combined if {
	count(grants) == 0
} else := combined if {
	grant_blocked
} else := combined if {
	not applied_grant
} else := object.union(combined, {
	"decision": "allow",
	"reasons": array.concat(reasons, [grant_reason]),
	"grant": applied_grant,
})

# METADATA
# title: Ask covered by a grant
# description: >-
#   An approver granted this family of actions (claw grant list shows the
#   grant): the ask becomes an allow. Denials and passphrases are never
#   covered.
# custom:
#   id: grant.applied
#   severity: low
grant_reason := lib.reason(rego.metadata.rule(), sprintf("grant %s covers this action", [applied_grant]))
