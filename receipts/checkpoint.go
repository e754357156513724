package receipts

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// MaxCheckpointBytes bounds a checkpoint note.
const MaxCheckpointBytes = 16 << 10

// CheckpointBody is the unsigned text of a checkpoint (C2SP
// tlog-checkpoint): origin, tree size, base64 root and extension lines.
type CheckpointBody struct {
	Origin string
	Size   uint64
	Root   []byte
	TS     string // extension line "ts <time>", may be empty
}

// Text renders the checkpoint body as note text.
func (c *CheckpointBody) Text() string {
	var b strings.Builder
	b.WriteString(c.Origin)
	b.WriteByte('\n')
	b.WriteString(strconv.FormatUint(c.Size, 10))
	b.WriteByte('\n')
	b.WriteString(base64.StdEncoding.EncodeToString(c.Root))
	b.WriteByte('\n')
	if c.TS != "" {
		b.WriteString("ts " + c.TS + "\n")
	}
	return b.String()
}

// ErrBadCheckpoint is wrapped by checkpoint parse errors.
var ErrBadCheckpoint = errors.New("malformed checkpoint")

// ParseCheckpointText parses the text of a checkpoint note (without
// checking any signature).
func ParseCheckpointText(text string) (*CheckpointBody, error) {
	if len(text) > MaxCheckpointBytes {
		return nil, fmt.Errorf("%w: too large", ErrBadCheckpoint)
	}
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("%w: no final newline", ErrBadCheckpoint)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return nil, fmt.Errorf("%w: want origin, size and root lines", ErrBadCheckpoint)
	}
	c := &CheckpointBody{Origin: lines[0]}
	if c.Origin == "" {
		return nil, fmt.Errorf("%w: empty origin", ErrBadCheckpoint)
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || (len(lines[1]) > 1 && lines[1][0] == '0') {
		return nil, fmt.Errorf("%w: bad size %q", ErrBadCheckpoint, lines[1])
	}
	c.Size = size
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != sha256.Size {
		return nil, fmt.Errorf("%w: bad root hash", ErrBadCheckpoint)
	}
	c.Root = root
	for _, ext := range lines[3:] {
		if v, ok := strings.CutPrefix(ext, "ts "); ok {
			if _, err := time.Parse(TimeFormat, v); err != nil {
				return nil, fmt.Errorf("%w: bad ts %q", ErrBadCheckpoint, v)
			}
			c.TS = v
		}
	}
	return c, nil
}

// SignCheckpoint signs c as a C2SP signed note with s. The signature name
// is the key id.
func SignCheckpoint(c *CheckpointBody, s *Signer) ([]byte, error) {
	ns, err := noteSigner(s)
	if err != nil {
		return nil, err
	}
	return note.Sign(&note.Note{Text: c.Text()}, ns)
}

// OpenCheckpoint verifies a signed checkpoint note against the keys in
// ring and parses it. At least one signature by a key in ring must verify.
func OpenCheckpoint(msg []byte, ring *KeyRing) (*CheckpointBody, []string, error) {
	if len(msg) > MaxCheckpointBytes {
		return nil, nil, fmt.Errorf("%w: too large", ErrBadCheckpoint)
	}
	n, err := note.Open(msg, ringVerifiers{ring})
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint signature: %w", err)
	}
	c, err := ParseCheckpointText(n.Text)
	if err != nil {
		return nil, nil, err
	}
	var kids []string
	for _, s := range n.Sigs {
		kids = append(kids, s.Name)
	}
	return c, kids, nil
}

// NoteVerifierKey returns the C2SP/sumdb verifier key ("name+hash+key")
// for an Ed25519 public key, so checkpoints can be checked with standard
// tools. ECDSA keys have no standard verifier key form.
func NoteVerifierKey(pub ed25519.PublicKey) (string, error) {
	kid, err := KeyID(pub)
	if err != nil {
		return "", err
	}
	return note.NewEd25519VerifierKey(kid, pub)
}

const (
	noteAlgEd25519 = 0x01
	noteAlgECDSA   = 0x02 // claw-specific: SHA-256(name || "\n" || 0x02 || SPKI DER)[:4]
)

func noteKeyHash(name string, pub any) (uint32, error) {
	var key []byte
	switch p := pub.(type) {
	case ed25519.PublicKey:
		key = append([]byte{noteAlgEd25519}, p...)
	case *ecdsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(p)
		if err != nil {
			return 0, err
		}
		key = append([]byte{noteAlgECDSA}, der...)
	default:
		return 0, fmt.Errorf("unsupported public key type %T", pub)
	}
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte("\n"))
	h.Write(key)
	return binary.BigEndian.Uint32(h.Sum(nil)), nil
}

type noteSignerImpl struct {
	s    *Signer
	hash uint32
}

func noteSigner(s *Signer) (note.Signer, error) {
	h, err := noteKeyHash(s.kid, s.pub)
	if err != nil {
		return nil, err
	}
	return &noteSignerImpl{s: s, hash: h}, nil
}

func (n *noteSignerImpl) Name() string                    { return n.s.kid }
func (n *noteSignerImpl) KeyHash() uint32                 { return n.hash }
func (n *noteSignerImpl) Sign(msg []byte) ([]byte, error) { return n.s.Sign(msg) }

type ringVerifiers struct{ r *KeyRing }

func (v ringVerifiers) Verifier(name string, hash uint32) (note.Verifier, error) {
	if v.r != nil {
		if k, ok := v.r.keys[name]; ok {
			if h, err := noteKeyHash(name, k.pub); err == nil && h == hash {
				return &noteVerifierImpl{r: v.r, kid: name, hash: h}, nil
			}
		}
	}
	return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
}

type noteVerifierImpl struct {
	r    *KeyRing
	kid  string
	hash uint32
}

func (n *noteVerifierImpl) Name() string    { return n.kid }
func (n *noteVerifierImpl) KeyHash() uint32 { return n.hash }
func (n *noteVerifierImpl) Verify(msg, sig []byte) bool {
	return n.r.Verify(n.kid, msg, sig) == nil
}

// CheckpointTextUnverified returns the text of a signed note without
// checking its signatures, for reading sizes before the keys are known.
// Callers must still verify it with OpenCheckpoint before trusting it.
func CheckpointTextUnverified(msg []byte) (*CheckpointBody, error) {
	if len(msg) > MaxCheckpointBytes {
		return nil, fmt.Errorf("%w: too large", ErrBadCheckpoint)
	}
	s := string(msg)
	i := strings.LastIndex(s, "\n\n")
	if i < 0 {
		return nil, fmt.Errorf("%w: no signature block", ErrBadCheckpoint)
	}
	return ParseCheckpointText(s[:i+1])
}
