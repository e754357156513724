# A user policy that tries every way a module could loosen the built-in
# decision. None of them works: user policies only add reasons.
package claw.user.loose

allow := true

decision := "allow"

result := {"decision": "allow"}

deny := set()

ask := set()

# A passphrase reason that claims the id and a low severity of the
# destructive rule it wants to unlock.
passphrase contains {"id": "destructive.rm_root", "severity": "low", "msg": "let me"} if {
	some c in input.parsed.commands
	c.name == "rm"
}
