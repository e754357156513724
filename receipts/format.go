package receipts

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Version is the newest receipt body version, written as "v" into every
// body that uses a field of it; other bodies are written as [Version1].
// Readers accept both (see [Body.Version]).
const Version = 2

// Version1 is the first body version: a body without the action's
// arguments (Action.Args), a decision's grant (Decision.Grant), a
// channel's user (User), an autonomous run's id (AutonomousRun), a
// workflow's run and step (Run, Step), a delegating action's id
// (ParentAction) or a
// grant_added / grant_revoked receipt.
const Version1 = 1

// MaxLineBytes bounds one receipt line. Longer lines are rejected by the
// writer and reported as malformed by readers.
const MaxLineBytes = 1 << 20

// TimeFormat is the layout of the "ts" field: UTC with microseconds.
const TimeFormat = "2006-01-02T15:04:05.000000Z"

// entryDomain separates receipt hashes and signatures from any other use
// of the same key or hash.
const entryDomain = "claw-receipt-v1\n"

// GenesisPrev is the "prev" of the first receipt of a log.
const GenesisPrev = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// Type is the kind of a receipt.
type Type string

// The receipt types.
const (
	TypeDecision     Type = "decision"
	TypeApproval     Type = "approval"
	TypeOutcome      Type = "outcome"
	TypePolicyLoaded Type = "policy_loaded"
	TypeKeyRotated   Type = "key_rotated"
	TypeCheckpoint   Type = "checkpoint"
	TypeRecovery     Type = "recovery"
	TypeEstop        Type = "estop"
	TypeGrantAdded   Type = "grant_added"   // version 2
	TypeGrantRevoked Type = "grant_revoked" // version 2
)

// Valid reports whether t is one of the defined receipt types.
func (t Type) Valid() bool {
	switch t {
	case TypeDecision, TypeApproval, TypeOutcome, TypePolicyLoaded, TypeKeyRotated,
		TypeCheckpoint, TypeRecovery, TypeEstop, TypeGrantAdded, TypeGrantRevoked:
		return true
	}
	return false
}

// Body is the signed part of a receipt. Its fields are written in this
// order and never contain floats or maps, so the same Body always encodes
// to the same bytes. The writer fills V, Log, Seq, TS and Prev.
type Body struct {
	V            int    `json:"v"`
	Log          string `json:"log"`
	Seq          uint64 `json:"seq"`
	TS           string `json:"ts"`
	Type         Type   `json:"type"`
	ActionID     string `json:"action_id,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	Channel      string `json:"channel,omitempty"`
	// User (version 2) is who the channel acted for (a bridge session, a
	// Discord user id, a FIFO's channel id), as the channel names them.
	User string `json:"user,omitempty"`
	// AutonomousRun (version 2) is the id of the autonomous run whose
	// turn proposed the action (claw agent --autonomous).
	AutonomousRun string `json:"autonomous_run,omitempty"`
	// Run and Step (version 2) name the workflow run (a `claw sop` run)
	// and its step that took the action.
	Run  string `json:"run,omitempty"`
	Step string `json:"step,omitempty"`
	// ParentAction (version 2) is the id of the delegate action whose
	// sub-agent took the action.
	ParentAction string       `json:"parent_action,omitempty"`
	Action       *Action      `json:"action,omitempty"`
	Decision     *Decision    `json:"decision,omitempty"`
	Approval     *Approval    `json:"approval,omitempty"`
	Outcome      *Outcome     `json:"outcome,omitempty"`
	Policy       *Policy      `json:"policy,omitempty"`
	Key          *KeyRotation `json:"key,omitempty"`
	Checkpoint   *Checkpoint  `json:"checkpoint,omitempty"`
	Recovery     *Recovery    `json:"recovery,omitempty"`
	Estop        *Estop       `json:"estop,omitempty"`
	Grant        *Grant       `json:"grant,omitempty"`
	Prev         string       `json:"prev"`
}

// Action summarises what was attempted. Summary must already have secrets
// redacted; ArgsSHA256 is the digest of the original, unredacted arguments
// and ActionSHA256 the digest of the exact action an approval binds to.
type Action struct {
	Tool         string `json:"tool"`
	ArgsSHA256   string `json:"args_sha256,omitempty"`
	ActionSHA256 string `json:"action_sha256,omitempty"`
	Summary      string `json:"summary,omitempty"`
	// Args (version 2) is the canonical action's arguments as compact
	// JSON text with sorted keys, secrets redacted: what `claw gate
	// replay` decides again. Empty when they were too large to keep
	// (ArgsOmitted says why).
	Args string `json:"args,omitempty"`
	// ArgsRedacted (version 2) is set when redaction changed Args, so the
	// recorded form may not decide like the original.
	ArgsRedacted bool `json:"args_redacted,omitempty"`
	// ArgsOmitted (version 2) says why Args is empty ("too_large").
	ArgsOmitted string `json:"args_omitted,omitempty"`
}

// Decision is what the gate decided.
type Decision struct {
	Result       string   `json:"result"` // allow, ask, passphrase, deny
	Risk         string   `json:"risk,omitempty"`
	Reasons      []string `json:"reasons,omitempty"` // rule ids
	Autonomy     string   `json:"autonomy,omitempty"`
	PolicyDigest string   `json:"policy_digest,omitempty"`
	Degraded     []string `json:"degraded,omitempty"` // explicit opt-ins in force
	Grant        string   `json:"grant,omitempty"`    // version 2: the grant that turned an ask into an allow
}

// Approval is a human's answer to an ask.
type Approval struct {
	By           string `json:"by"`
	Channel      string `json:"channel,omitempty"`
	Result       string `json:"result"` // approved, rejected, timeout
	ActionSHA256 string `json:"action_sha256,omitempty"`
}

// Outcome closes an action.
type Outcome struct {
	Status       string   `json:"status"` // ok, failed, denied, timeout, killed, estop
	Exit         *int     `json:"exit,omitempty"`
	MS           int64    `json:"ms"`
	OutputSHA256 string   `json:"output_sha256,omitempty"`
	Error        string   `json:"error,omitempty"`
	Sandbox      *Sandbox `json:"sandbox,omitempty"`
	// Egress is every connection the action made through the egress
	// proxy (only for an action that had an egress grant).
	Egress *Egress `json:"egress,omitempty"`
}

// Egress is what went through the egress proxy for one action: each
// connection (at most 256; Dropped counts the rest).
type Egress struct {
	Conns   []EgressConn `json:"conns"`
	Dropped int          `json:"dropped,omitempty"`
}

// EgressConn is one connection to the egress proxy: the destination it
// asked for, the address the proxy connected to, whether it was admitted
// (and why not), the bytes each way, how long it lasted and how it ended
// (eof, idle, cap, end, error). Never a path, query or header.
type EgressConn struct {
	Method   string `json:"method,omitempty"`
	Host     string `json:"host,omitempty"`
	Port     uint16 `json:"port,omitempty"`
	IP       string `json:"ip,omitempty"`
	Admitted bool   `json:"admitted"`
	Reason   string `json:"reason,omitempty"`
	Up       int64  `json:"bytes_up"`
	Down     int64  `json:"bytes_down"`
	MS       int64  `json:"ms"`
	Close    string `json:"close,omitempty"`
}

// Sandbox is the confinement actually applied to an action.
type Sandbox struct {
	LandlockABI int      `json:"landlock_abi"`
	Seccomp     bool     `json:"seccomp"`
	Net         bool     `json:"net,omitempty"`
	Degraded    []string `json:"degraded,omitempty"`
}

// Policy records a policy (re)load.
type Policy struct {
	Digest string   `json:"digest"`
	Files  []string `json:"files,omitempty"`
	Source string   `json:"source,omitempty"`
}

// KeyRotation hands the log over from one signing key to the next. The
// receipt is signed by the old key; NewSig is the new key's signature over
// [RotationMessage], proving possession of it.
type KeyRotation struct {
	OldKID string `json:"old_kid"`
	NewKID string `json:"new_kid"`
	NewKey string `json:"new_key"` // PEM public key
	NewSig string `json:"new_sig"` // base64
}

// Checkpoint is a signed tree head written into the log. Size is the
// number of receipts it covers (seq 1..Size), Root their RFC 6962 Merkle
// root, Range the compact range hashes at Size (so a writer can resume
// without re-reading the log), Note the C2SP signed note.
type Checkpoint struct {
	Size  uint64   `json:"size"`
	Root  string   `json:"root"`
	Range []string `json:"range,omitempty"`
	Note  string   `json:"note"`
}

// Recovery records bytes removed from a torn tail when a log was opened.
type Recovery struct {
	Segment string `json:"segment"`
	Offset  int64  `json:"offset"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// Estop records the emergency stop being engaged or cleared.
type Estop struct {
	Active bool   `json:"active"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Grant records a grant being added or revoked (version 2): who, through
// which channel, until when, and its scope in the grant syntax.
type Grant struct {
	ID      string `json:"id"`
	By      string `json:"by"`
	Channel string `json:"channel,omitempty"`
	Expires string `json:"expires,omitempty"` // RFC 3339, UTC
	Scope   string `json:"scope,omitempty"`
}

// Version returns the body version b needs: [Version] when it uses a
// version 2 field, [Version1] otherwise.
func (b *Body) Version() int {
	switch {
	case b.Grant != nil, b.Type == TypeGrantAdded, b.Type == TypeGrantRevoked, b.User != "",
		b.AutonomousRun != "", b.Run != "", b.Step != "", b.ParentAction != "":
		return Version
	case b.Action != nil && (b.Action.Args != "" || b.Action.ArgsRedacted || b.Action.ArgsOmitted != ""):
		return Version
	case b.Decision != nil && b.Decision.Grant != "":
		return Version
	}
	return Version1
}

// Time parses the body's timestamp.
func (b *Body) Time() (time.Time, error) { return time.Parse(TimeFormat, b.TS) }

// MarshalBody encodes b in its fixed field order without HTML escaping.
func MarshalBody(b *Body) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("failed to encode receipt body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Hash is a SHA-256 digest.
type Hash [sha256.Size]byte

// String formats h as "sha256:<hex>", the form used in "prev".
func (h Hash) String() string { return "sha256:" + hex.EncodeToString(h[:]) }

// EntryHash is SHA-256("claw-receipt-v1\n" || body): the value the next
// receipt's "prev" holds.
func EntryHash(body []byte) Hash {
	h := sha256.New()
	h.Write([]byte(entryDomain))
	h.Write(body)
	var out Hash
	h.Sum(out[:0])
	return out
}

// SignedMessage is the exact message a receipt signature covers:
// "claw-receipt-v1\n" followed by the exact bytes of body.
func SignedMessage(body []byte) []byte {
	m := make([]byte, 0, len(entryDomain)+len(body))
	m = append(m, entryDomain...)
	return append(m, body...)
}

// Digest returns "sha256:<hex>" of b, for ArgsSHA256, OutputSHA256 and the like.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return Hash(s).String()
}

// Line is one parsed receipt line.
type Line struct {
	Body    []byte // exact bytes of the "body" value
	KID     string
	Sig     []byte
	Decoded Body
}

// ErrMalformed is wrapped by every parse error of a receipt line.
var ErrMalformed = errors.New("malformed receipt line")

const (
	linePrefix = `{"body":`
	kidSep     = `,"kid":"`
	sigSep     = `","sig":"`
	lineSuffix = `"}`
)

// EncodeLine builds the receipt line for body, key id and signature,
// without the trailing newline.
func EncodeLine(body []byte, kid string, sig []byte) []byte {
	n := base64.StdEncoding.EncodedLen(len(sig))
	out := make([]byte, 0, len(linePrefix)+len(body)+len(kidSep)+len(kid)+len(sigSep)+n+len(lineSuffix)+1)
	out = append(out, linePrefix...)
	out = append(out, body...)
	out = append(out, kidSep...)
	out = append(out, kid...)
	out = append(out, sigSep...)
	out = base64.StdEncoding.AppendEncode(out, sig)
	return append(out, lineSuffix...)
}

// ParseLine parses one receipt line (without its newline). It accepts
// exactly the shape EncodeLine writes: {"body":{…},"kid":"…","sig":"…"}.
// The body must decode into [Body] with a known type and version.
func ParseLine(line []byte) (*Line, error) {
	if len(line) > MaxLineBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxLineBytes)
	}
	if !bytes.HasPrefix(line, []byte(linePrefix)) || !bytes.HasSuffix(line, []byte(lineSuffix)) {
		return nil, fmt.Errorf("%w: not a {\"body\":…,\"kid\":…,\"sig\":…} object", ErrMalformed)
	}
	k := bytes.LastIndex(line, []byte(kidSep))
	if k < len(linePrefix) || k+len(kidSep) > len(line)-len(lineSuffix) {
		return nil, fmt.Errorf("%w: no kid", ErrMalformed)
	}
	rest := line[k+len(kidSep) : len(line)-len(lineSuffix)]
	s := bytes.Index(rest, []byte(sigSep))
	if s < 0 {
		return nil, fmt.Errorf("%w: no sig", ErrMalformed)
	}
	kid, sig64 := rest[:s], rest[s+len(sigSep):]
	if !validKID(kid) {
		return nil, fmt.Errorf("%w: bad kid", ErrMalformed)
	}
	sig, err := base64.StdEncoding.Strict().DecodeString(string(sig64))
	if err != nil || len(sig) == 0 || len(sig) > 512 {
		return nil, fmt.Errorf("%w: bad sig encoding", ErrMalformed)
	}
	body := line[len(linePrefix):k]
	l := &Line{Body: body, KID: string(kid), Sig: sig}
	if err := decodeBody(body, &l.Decoded); err != nil {
		return nil, err
	}
	return l, nil
}

func decodeBody(body []byte, b *Body) error {
	if len(body) == 0 || body[0] != '{' {
		return fmt.Errorf("%w: body is not an object", ErrMalformed)
	}
	if err := json.Unmarshal(body, b); err != nil {
		return fmt.Errorf("%w: body: %v", ErrMalformed, err)
	}
	if b.V != Version1 && b.V != Version {
		return fmt.Errorf("%w: unsupported version %d", ErrMalformed, b.V)
	}
	if b.V == Version1 && b.Version() != Version1 {
		return fmt.Errorf("%w: version 1 body with version 2 fields", ErrMalformed)
	}
	if !b.Type.Valid() {
		return fmt.Errorf("%w: unknown type %q", ErrMalformed, b.Type)
	}
	if b.Seq == 0 {
		return fmt.Errorf("%w: seq must be at least 1", ErrMalformed)
	}
	if _, err := time.Parse(TimeFormat, b.TS); err != nil {
		return fmt.Errorf("%w: bad ts %q", ErrMalformed, b.TS)
	}
	if _, err := ParseHash(b.Prev); err != nil {
		return fmt.Errorf("%w: bad prev: %v", ErrMalformed, err)
	}
	return nil
}

// ParseHash parses "sha256:<64 hex>".
func ParseHash(s string) (Hash, error) {
	var h Hash
	const p = "sha256:"
	if len(s) != len(p)+2*len(h) || s[:len(p)] != p {
		return h, fmt.Errorf("not a sha256:<hex> digest: %s", strconv.Quote(s))
	}
	if _, err := hex.Decode(h[:], []byte(s[len(p):])); err != nil {
		return h, fmt.Errorf("not a sha256:<hex> digest: %s", strconv.Quote(s))
	}
	return h, nil
}

func validKID(k []byte) bool {
	if len(k) == 0 || len(k) > 128 {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// NewActionID returns a new action id: the UTC time to the second, then 16
// random hex digits, so ids sort by time and never collide in practice.
func NewActionID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("receipts: no randomness: " + err.Error())
	}
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
