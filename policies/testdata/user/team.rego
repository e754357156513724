# A sample user policy: it adds a denial, an approval and a passphrase
# gate on top of the built-in policies.
package claw.user.team

import data.claw.lib

# METADATA
# title: No terraform destroy
# custom:
#   id: team.terraform_destroy
#   severity: high
deny contains lib.reason(rego.metadata.rule(), "terraform destroy is not allowed") if {
	some c in input.parsed.commands
	c.name == "terraform"
	"destroy" in c.operands
}

# METADATA
# title: Pushes need approval
# custom:
#   id: team.git_push
#   severity: medium
ask contains lib.reason(rego.metadata.rule(), "pushing needs approval") if {
	some c in input.parsed.commands
	c.name == "git"
	"push" in c.operands
}

# METADATA
# title: Environment files need the passphrase
# custom:
#   id: team.env_file
#   severity: medium
passphrase contains lib.reason(rego.metadata.rule(), sprintf("%s holds secrets", [p])) if {
	input.kind == "file_read"
	some p in input.paths
	endswith(p, "/.env")
}
