package runtime

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/broker"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/receipts"
)

// ReceiptFilter selects receipts: by time, and by the tool and decision of
// an action's decision receipt (then every receipt of those actions).
type ReceiptFilter struct {
	From, To       time.Time // zero: open
	Tool, Decision string    // "": any
}

// WalkReceipts calls fn with every well-formed receipt of the log in dir
// that f selects, in order, and returns how many lines were malformed (a
// torn last line is not counted).
func WalkReceipts(ctx context.Context, dir string, f ReceiptFilter, fn func(receipts.Record) error) (bad int, err error) {
	byAction := f.Tool != "" || f.Decision != ""
	picked := map[string]bool{}
	err = receipts.Walk(ctx, dir, func(r receipts.Record) error {
		if r.Err != nil {
			if !r.Torn {
				bad++
			}
			return nil
		}
		b := &r.Line.Decoded
		t, _ := b.Time()
		if (!f.From.IsZero() && t.Before(f.From)) || (!f.To.IsZero() && t.After(f.To)) {
			return nil
		}
		if byAction {
			if b.Type == receipts.TypeDecision {
				ok := (f.Tool == "" || (b.Action != nil && b.Action.Tool == f.Tool)) &&
					(f.Decision == "" || (b.Decision != nil && b.Decision.Result == f.Decision))
				if ok {
					picked[b.ActionID] = true
				}
			}
			if b.ActionID == "" || !picked[b.ActionID] {
				return nil
			}
		}
		return fn(r)
	})
	return bad, err
}

// FixtureBody is a receipt body for claw receipt __append: the fields of
// the JSON object js (none when empty; an unknown one is a usage error),
// of type typ when it is given.
func FixtureBody(typ, js string) (receipts.Body, error) {
	var b receipts.Body
	if js != "" {
		dec := json.NewDecoder(strings.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			return b, Usagef("bad --json body: %v", err)
		}
	}
	if typ != "" {
		b.Type = receipts.Type(typ)
	}
	return b, nil
}

// AppendReceipts appends body n times (at least once) to the log in dir,
// signed by s, with a checkpoint every `every` receipts, and returns the
// last entry.
func AppendReceipts(ctx context.Context, dir string, s *receipts.Signer, body receipts.Body, every, n int) (receipts.Entry, error) {
	l, err := broker.OpenLog(dir, s, broker.LogOptions{CheckpointInterval: -1, CheckpointEvery: every})
	if err != nil {
		return receipts.Entry{}, err
	}
	var last receipts.Entry
	for range max(n, 1) {
		if last, err = l.AppendFixture(ctx, body); err != nil {
			break
		}
	}
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	return last, err
}

// WriteCheckpoint writes a fresh signed checkpoint to the log in dir.
func WriteCheckpoint(ctx context.Context, dir string, s *receipts.Signer) error {
	l, err := broker.OpenLog(dir, s, broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		return err
	}
	_, err = l.Checkpoint(ctx)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrNoVerifyKeys means there is no public key to verify the log with.
var ErrNoVerifyKeys = errors.New("no public keys to verify with")

// VerifyKeys are the keys to verify with: those of keyFiles, or when there
// are none, the trusted keys of the keys directory keyDir (keyDir is
// called only then).
func VerifyKeys(keyFiles []string, keyDir func() (string, error)) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	if len(keyFiles) == 0 {
		dir, err := keyDir()
		if err != nil {
			return nil, err
		}
		if keys, _, err = TrustedReceiptKeys(dir); err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			return nil, ErrNoVerifyKeys
		}
	}
	for _, kf := range keyFiles {
		ks, err := LoadPublicKeyFile(kf)
		if err != nil {
			return nil, err
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}

// VerifyAnchors reads the signed checkpoints kept elsewhere.
func VerifyAnchors(files []string) ([]audit.Anchor, error) {
	var out []audit.Anchor
	for _, af := range files {
		b, err := ReadSmall(af, receipts.MaxCheckpointBytes)
		if err != nil {
			return nil, fmt.Errorf("failed to read anchor: %w", err)
		}
		out = append(out, audit.Anchor{Source: af, Note: b})
	}
	return out, nil
}
