package audit

import "time"

// Problem kinds. Any problem makes a report TAMPER-EVIDENT.
const (
	KindMalformed    = "malformed"
	KindBrokenLink   = "broken-link"
	KindBadSignature = "bad-signature"
	KindUnknownKey   = "unknown-key"
	KindRetiredKey   = "retired-key"
	KindMissing      = "missing"
	KindDuplicate    = "duplicate"
	KindOutOfOrder   = "out-of-order"
	KindTimeBack     = "time-backwards"
	KindOtherLog     = "other-log"
	KindCheckpoint   = "checkpoint"
	KindTruncated    = "truncated"
	KindRewritten    = "rewritten"
	KindAnchor       = "anchor"
	KindUnauthorized = "executed-without-allow"
	KindApproval     = "approval-mismatch"
	KindKeyRotation  = "key-rotation"
)

// Warning kinds: reported, but the log still verifies.
const (
	WarnNoOutcome  = "no-outcome"
	WarnRecovery   = "recovery"
	WarnTornTail   = "torn-tail"
	WarnNoDecision = "approval-without-decision"
)

// Problem is one finding, located as precisely as possible.
type Problem struct {
	Kind     string `json:"kind"`
	Seq      uint64 `json:"seq,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Expected string `json:"expected,omitempty"`
	Found    string `json:"found,omitempty"`
	Msg      string `json:"msg"`
}

// SeqRange is an inclusive range of sequence numbers.
type SeqRange struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// TimeRange is a time span; zero times are unbounded or unknown.
type TimeRange struct {
	From time.Time `json:"from,omitzero"`
	To   time.Time `json:"to,omitzero"`
}

// KeyUse says how a key was used in the log.
type KeyUse struct {
	KID      string `json:"kid"`
	Trusted  string `json:"trusted"` // given, rotated, no
	Receipts uint64 `json:"receipts"`
}

// CheckpointResult summarises the in-log checkpoints.
type CheckpointResult struct {
	Verified   int    `json:"verified"`
	Failed     int    `json:"failed"`
	LatestSeq  uint64 `json:"latest_seq,omitempty"`
	LatestSize uint64 `json:"latest_size,omitempty"`
	LatestRoot string `json:"latest_root,omitempty"`
}

// AnchorResult is the result of checking one anchor.
type AnchorResult struct {
	Source string `json:"source"`
	Size   uint64 `json:"size"`
	Root   string `json:"root"`
	Result string `json:"result"` // consistent, truncated, rewritten, bad-signature, other-log, malformed
	Detail string `json:"detail,omitempty"`
}

// Report is the result of Verify.
type Report struct {
	Dir             string           `json:"dir"`
	LogIDs          []string         `json:"log_ids"`
	Keys            []KeyUse         `json:"keys"`
	Requested       TimeRange        `json:"requested"`
	Covered         TimeRange        `json:"covered"`
	Segments        int              `json:"segments"`
	Receipts        uint64           `json:"receipts"`
	Counted         uint64           `json:"counted"`
	FirstSeq        uint64           `json:"first_seq"`
	LastSeq         uint64           `json:"last_seq"`
	TreeSize        uint64           `json:"tree_size"`
	TreeRoot        string           `json:"tree_root"`
	SignaturesOK    uint64           `json:"signatures_ok"`
	Fast            bool             `json:"fast"`
	ByType          map[string]int   `json:"by_type"`
	ByDecision      map[string]int   `json:"by_decision"`
	ByOutcome       map[string]int   `json:"by_outcome"`
	PolicyDigests   []string         `json:"policy_digests,omitempty"`
	Checkpoints     CheckpointResult `json:"checkpoints"`
	Anchors         []AnchorResult   `json:"anchors"`
	ExternalAnchor  bool             `json:"external_anchor"`
	FirstBrokenLink *Problem         `json:"first_broken_link,omitempty"`
	Missing         []SeqRange       `json:"missing,omitempty"`
	Problems        []Problem        `json:"problems"`
	ProblemCount    int              `json:"problem_count"`
	Warnings        []Problem        `json:"warnings"`
	WarningCount    int              `json:"warning_count"`
	Verified        bool             `json:"verified"`
	Verdict         string           `json:"verdict"`
}

// Verdicts.
const (
	Verified      = "VERIFIED"
	TamperEvident = "TAMPER-EVIDENT"
)
