# Tool and input rules: rules about the action as a whole: the emergency
# stop, malformed input, unknown tools and an unknown autonomy level.
#
# input_ok is one cheap check that all of them pass; only when it fails is
# the family of rules below (the set input_denials) evaluated.
package claw.gate

import data.claw.lib

input_ok if {
	input.version == 1
	kind_known
	autonomy_known
	not input.context.estop
	ws_valid
	not input.errors[0]
	not noncanonical_path
}

noncanonical_path if {
	has_paths
	some p in all_paths
	not canonical(p)
}

deny contains r if {
	not input_ok
	some r in input_denials
}

# METADATA
# title: Emergency stop
# description: The emergency stop is engaged; nothing runs at any autonomy.
# custom:
#   id: estop
#   severity: critical
input_denials contains r if {
	input.context.estop == true
	r := lib.reason(rego.metadata.rule(), "the emergency stop is engaged")
}

# canonical(p): p is absolute, with no empty, "." or ".." element and no
# trailing slash.
canonical(p) if regex.match(`^/$|^(/([^/.][^/]*|\.[^/.][^/]*|\.\.[^/]+))+$`, p)

invalid_msgs contains concat("; ", input.errors) if {
	is_array(input.errors)
	count(input.errors) > 0
}

invalid_msgs contains sprintf("input errors must be a list, not %v", [input.errors]) if {
	input.errors != null
	not is_array(input.errors)
}

invalid_msgs contains sprintf("unsupported input version %v", [input.version]) if input.version != 1

invalid_msgs contains "input has no version" if not input.version

invalid_msgs contains sprintf("the workspace %v is not a canonical absolute path other than /", [workspace_shown]) if {
	not ws_valid
}

workspace_shown := input.context.workspace if {
	input.context.workspace != null
} else := "(none)"

invalid_msgs contains sprintf("the path %q is not canonical", [p]) if {
	some p in all_paths
	not canonical(p)
}

# METADATA
# title: Invalid input
# description: >-
#   Go reported problems while building the input (bad argument types, NUL
#   bytes, unresolvable /proc forms), or the input is not what the policy
#   was written for.
# custom:
#   id: input.invalid
#   severity: critical
input_denials contains r if {
	some msg in invalid_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: Unknown tool
# description: The action names a tool the gate does not know; unknown tools never run.
# custom:
#   id: tool.unknown
#   severity: critical
input_denials contains r if {
	not kind_known
	r := lib.reason(rego.metadata.rule(), sprintf("unknown tool %v", [tool_name]))
}

tool_name := input.action.tool if {
	is_string(input.action.tool)
} else := "(none)"

# METADATA
# title: Unknown autonomy level
# description: The autonomy is not readonly, supervised or full.
# custom:
#   id: autonomy.invalid
#   severity: critical
input_denials contains r if {
	not autonomy_known
	r := lib.reason(rego.metadata.rule(), sprintf("unknown autonomy %q (want readonly, supervised or full)", [autonomy_label]))
}
