# Tool and input rules: Rules about the action as a whole: the emergency
# stop, malformed input, unknown tools and an unknown autonomy level.
package claw.gate

import data.claw.lib

# METADATA
# title: Emergency stop
# description: The emergency stop is engaged; nothing runs at any autonomy.
# custom:
#   id: estop
#   severity: critical
deny contains r if {
	input.context.estop == true
	r := lib.reason(rego.metadata.rule(), "the emergency stop is engaged")
}

invalid_msgs contains concat("; ", input.errors) if {
	is_array(input.errors)
	count(input.errors) > 0
}

invalid_msgs contains sprintf("unsupported input version %v", [input.version]) if input.version != 1

invalid_msgs contains "input has no version" if not input.version

invalid_msgs contains sprintf("the workspace %q is not a canonical absolute path other than /", [workspace]) if not ws_valid

invalid_msgs contains sprintf("the path %q is not canonical", [p]) if {
	some p in all_paths
	not canonical(p)
}

canonical(p) if {
	startswith(p, "/")
	not non_canonical(p)
}

non_canonical(p) if contains(p, "//")

non_canonical(p) if contains(p, "/./")

non_canonical(p) if contains(p, "/../")

non_canonical(p) if endswith(p, "/.")

non_canonical(p) if endswith(p, "/..")

non_canonical(p) if {
	p != "/"
	endswith(p, "/")
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
deny contains r if {
	some msg in invalid_msgs
	r := lib.reason(rego.metadata.rule(), msg)
}

# METADATA
# title: Unknown tool
# description: The action names a tool the gate does not know; unknown tools never run.
# custom:
#   id: tool.unknown
#   severity: critical
deny contains r if {
	not kind_known
	r := lib.reason(rego.metadata.rule(), sprintf("unknown tool %v", [tool_name]))
}

# Negations go through helper rules: a call with an undefined argument
# under "not" makes the whole rule undefined instead of true.
kind_known if input.kind in known_kinds

tool_name := input.action.tool if {
	is_string(input.action.tool)
} else := "(none)"

# METADATA
# title: Unknown autonomy level
# description: The autonomy is not readonly, supervised or full.
# custom:
#   id: autonomy.invalid
#   severity: critical
deny contains r if {
	not autonomy in {"readonly", "supervised", "full"}
	r := lib.reason(rego.metadata.rule(), sprintf("unknown autonomy %q (want readonly, supervised or full)", [autonomy]))
}
