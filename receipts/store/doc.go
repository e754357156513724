// Package store appends to claw's receipt log (the format is the receipts
// package's): it signs each new receipt, chains it to the one before,
// makes it durable and writes the checkpoints.
//
// Only the broker imports this package (internal/deptest holds that,
// with reasoned exceptions for tests and the bench/receiptsgen load
// generator): every other package records through the broker's Log.
//
// # Files
//
// log.go has the API: [Open], [Log.Append], [Log.AppendAll] and the
// typed appends ([Log.Decision], [Log.Approval], [Log.Outcome],
// [Log.Estop], [Log.PolicyLoaded], [Log.GrantAdded],
// [Log.GrantRevoked]), [Log.Checkpoint], [Log.RotateKey] and
// [Log.Close]. commit.go is the group commit; recover.go brings the
// state up to date with the files (another writer's appends, a torn
// tail); files.go creates segments and the log id.
//
// # Durability and concurrency
//
// [Log.Append] returns after the receipt is written with one write(2) and
// fdatasync'ed. Concurrent appends in one process share a write and an
// fsync (group commit). [Log.AppendAll] writes several receipts as
// consecutive lines of one batch, one write and one fdatasync for all of
// them (an action's decision and outcome, with nothing run in between:
// [DecisionBody], [OutcomeBody]); if one of them is refused, too large or
// cannot be signed, none is written. [Log.Syncs] counts the fdatasyncs.
// Several processes may append to the same directory: each commit holds
// an exclusive flock on LOCK and first reads what others appended. A
// crash can leave at most a partial last line, never an acknowledged
// receipt torn; the next writer truncates it and appends a recovery
// receipt with the SHA-256 of the removed bytes.
//
// A writer refuses to sign with any key but the log's current one
// ([ErrKeyRetired]).
package store
