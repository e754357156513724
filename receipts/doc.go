// Package receipts is the format of claw's signed, hash-chained receipt
// log: one receipt for every attempted action (decided, asked, approved,
// rejected, timed out, denied, failed, blocked by the emergency stop),
// durable before the action runs. It parses, walks and checks receipt
// lines, and holds the keys that sign and verify them.
//
// Writing is elsewhere: receipts/store appends to a log (group commit,
// recovery of a torn tail, checkpoints), and only the broker
// (internal/broker) imports it, so every receipt of claw's is written
// by the broker; internal/deptest holds that. The broker calls
// Decision before an action runs (if it fails, the action does not
// run), Approval when a human answers and Outcome afterwards, and
// records the state changes (estop, policy_loaded, grant_added,
// grant_revoked, key_rotated). Verification lives in the audit package.
//
// # Receipt format
//
// A log is a directory of segments 000001.jsonl, 000002.jsonl, … (mode
// 0600 in a 0700 directory). Each line is one receipt:
//
//	{"body":{…},"kid":"<key id>","sig":"<base64 signature>"}
//
// The body ([Body]) is written from a fixed-order struct with no floats or
// maps, so `jq .body` works and no canonicalisation is needed: the
// signature and the hash cover the exact bytes between {"body": and
// ,"kid":. Every body has v, log (the log id, "claw/<host>/<random>"), seq
// (1, 2, 3, … with no gaps), ts (UTC, microseconds), type, and prev.
//
//	entry_hash = SHA-256("claw-receipt-v1\n" || body)
//	sig        = Sign(key, "claw-receipt-v1\n" || body)
//	prev       = "sha256:<hex entry_hash of the previous receipt>"
//
// # Body versions
//
// Version 1 bodies are those above. Version 2 adds, to a decision, the
// canonical action's arguments (action.args: compact JSON text with sorted
// keys and secrets redacted; payloads, what a file_write writes, an
// edit_file's old and new text and an http body, are kept as their
// "sha256:<hex>" digest; with action.args_redacted when redaction
// changed them and action.args_omitted when they were too large to keep)
// and the grant that turned an ask into an allow (decision.grant); to
// any receipt of a channel, the user it acted for (user: a bridge
// session, a Discord user id, a FIFO's channel id); to the receipts
// of an action an autonomous run took, the run's id (autonomous_run); to
// any receipt of a workflow's action, its run and step ids (run, step: a
// `claw sop` run and the id of the step that took the action); to the
// receipts of an action a delegated sub-agent took, the id of the
// delegate action that started it (parent_action); and the
// types grant_added and grant_revoked with a grant object {id, by,
// channel, expires, scope}. The writer stamps each body with the lowest
// version that can hold it ([Body.Version]), so bodies without the new
// fields stay version 1; readers accept both, and a version 1 body that
// carries a version 2 field is malformed.
//
// # Action digests
//
// A decision's action.args_sha256 is SHA-256 over the JSON encoding of
// the action's arguments as the caller gave them (an object; "null" for
// none). action.action_sha256, and the approval.action_sha256 that binds
// a human's answer to it, is SHA-256 over the JSON encoding of
//
//	{"tool":<tool>,"args":<arguments>,"sandbox":<the decision's sandbox plan>}
//
// (Go's encoding/json: object keys sorted, HTML characters escaped), so
// an approval covers the exact action and the reach it runs with. Both
// are written "sha256:<hex>". Logs written before claw's hook recorded
// through the broker have hook decisions (channel claude-code or codex)
// whose action_sha256 covers {"tool","args"} only; a hook decision has no
// approval, so nothing compares it, and such logs verify unchanged.
//
// The first receipt's prev is [GenesisPrev]. Ed25519 signs the message
// itself; ECDSA P-256 signs its SHA-256. The key id is the first 16 bytes
// of SHA-256 over the public key's DER SubjectPublicKeyInfo, in hex.
//
// # Checkpoints
//
// Every CheckpointEvery receipts, every CheckpointInterval and when the
// log is closed (see receipts/store), the writer appends a
// checkpoint receipt: a C2SP signed note (tlog-checkpoint) over the
// RFC 6962 Merkle root of all receipts before it, whose leaves are
// SHA-256(0x00 || body):
//
//	claw/<host>/<random>
//	<size>
//	<base64 root>
//	ts <time>
//
//	— <key id> <base64(key hash || signature)>
//
// For Ed25519 the note key hash is the standard one, so [NoteVerifierKey]
// gives a verifier key other tools accept. The newest note is also written
// to the file "checkpoint". Copied off the host, a checkpoint lets an
// auditor prove later that the log still has those receipts unchanged
// (truncation, rollback and rewriting show up).
//
// # Key management
//
// [GenerateKey] makes Ed25519 (default) or ECDSA P-256 keys.
// [MarshalPrivateKey] writes them as cosign-style encrypted PEM ("ENCRYPTED
// SIGSTORE PRIVATE KEY", scrypt + secretbox) or, without a passphrase, as a
// plain PKCS#8 PEM for services. Rotating the key hands the log to a new key
// with a key_rotated receipt signed by the old key that carries the new
// public key and the new key's signature over [RotationMessage]. A writer
// refuses to sign with any key but the log's current one. KMS keys are not
// supported yet: every scheme is refused ([CheckKMS]) rather than passed to
// sigstore, which would run unknown schemes as plugins from $PATH.
package receipts
