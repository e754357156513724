// Package audit verifies, summarises and exports claw's receipt log.
//
// [Verify] streams the log (memory does not grow with its length, apart
// from actions still waiting for an outcome) and checks, for every receipt:
// that it parses, the seq is the next one (missing ranges, duplicates and
// reordering are reported), prev equals the entry hash of the receipt
// before it, the signature verifies with a trusted key (keys handed over by
// a verified key_rotated receipt become trusted; the old key is then
// retired), timestamps do not go backwards, every checkpoint's signed
// Merkle root matches the receipts before it, and every action that ran was
// allowed or approved first. Signatures are checked in parallel on all
// cores. It keeps going after a problem and reports each with its place
// (seq and file:line); the first broken link is called out.
//
// # What verification proves
//
// A VERIFIED log was written by the holder of a trusted key as one unbroken
// chain. Without an anchor it cannot prove the log was not cut short or
// rewritten by someone who holds the key, since the key is on the host: a
// [Anchor] (a checkpoint copied off the host earlier) proves the first
// Size receipts are still there and unchanged. A local copy of the newest
// checkpoint (the "checkpoint" file) catches careless truncation only.
//
// # Reports and exports
//
// [Report.WriteText] prints a CloudTrail validate-logs style report ending
// in VERIFIED or TAMPER-EVIDENT; [Report.WriteJSON] the same as JSON.
// [Summarize] tallies decisions, denials by rule, approvals by approver and
// the most asked actions; [Export] writes JSON lines or CSV for a SIEM.
// Neither verifies: run Verify first when the answer matters.
//
// # Replay
//
// [Replay] re-decides every action of a log under a candidate policy set
// (an engine with other user policies, configuration or grants) from its
// decision receipt: the canonical arguments that receipt body version 2
// keeps (secrets redacted), the autonomy, channel and conversation it was
// decided in. It reports each change of decision with the rule ids before
// and after, counts by change, and lists what could not be re-decided
// (version 1 receipts, arguments too large to keep, arguments a secret was
// redacted from) with the reason. `claw gate replay` exits 1 when an allow
// became a deny or the reverse.
package audit
