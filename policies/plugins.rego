# Plugin rules: a plugin tool runs only when the broker found it installed
# and unchanged since it was pinned. Its reach (the paths its manifest
# declares) is in input.paths and input.writes and is judged by the path
# rules like any other action's.
package claw.gate

import data.claw.lib

plugin_status := input.plugin.status if {
	input.kind == "plugin"
	is_string(input.plugin.status)
} else := "unresolved"

# METADATA
# title: Plugin changed since it was installed
# description: >-
#   A file of the plugin (its manifest or a program) differs from the
#   SHA-256 pinned at install; it stays disabled until it is installed
#   again.
# custom:
#   id: plugin.changed
#   severity: high
deny contains r if {
	input.kind == "plugin"
	plugin_status == "changed"
	r := lib.reason(rego.metadata.rule(), input.plugin.detail)
}

# METADATA
# title: Plugin or plugin tool not available
# description: >-
#   The plugin is not installed, has no such tool, or was not looked up
#   (a dry run without the plugins directory); nothing runs.
# custom:
#   id: plugin.unavailable
#   severity: high
deny contains r if {
	input.kind == "plugin"
	not plugin_status in {"ok", "changed", "invalid_args"}
	r := lib.reason(rego.metadata.rule(), plugin_detail)
}

# METADATA
# title: Plugin tool arguments do not match its schema
# description: >-
#   The arguments fail the JSON Schema the plugin's manifest gives the
#   tool; the model is told why and nothing runs.
# custom:
#   id: plugin.invalid_args
#   severity: medium
deny contains r if {
	input.kind == "plugin"
	plugin_status == "invalid_args"
	r := lib.reason(rego.metadata.rule(), plugin_detail)
}

plugin_detail := input.plugin.detail if {
	is_string(input.plugin.detail)
	input.plugin.detail != ""
} else := sprintf("plugin %v was not looked up (%v), so it cannot run", [object.get(input.action.args, "plugin", "(none)"), plugin_status])
