package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/transparency-dev/merkle/compact"

	"github.com/clawsec/claw/receipts"
)

// Files in a receipt directory only the writer uses.
const (
	lockName  = "LOCK"
	logIDName = "LOGID" // the log's id, fixed when the log is created
)

// Defaults for Options.
const (
	DefaultCheckpointEvery    = 256
	DefaultCheckpointInterval = 60 * time.Second
	DefaultSegmentBytes       = 16 << 20
)

// Options tune a Log. The zero value gives the defaults.
type Options struct {
	// LogID names a new log ("claw/<host>/<random>" if empty). An
	// existing log keeps the id it was created with.
	LogID string
	// CheckpointEvery is the number of receipts between checkpoints.
	CheckpointEvery int
	// CheckpointInterval writes a checkpoint this long after the last one
	// if receipts were added since. Negative disables the timer.
	CheckpointInterval time.Duration
	// SegmentBytes starts a new segment once the current one is this large.
	SegmentBytes int64
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// Errors a caller may branch on.
var (
	ErrClosed     = errors.New("receipt log is closed")
	ErrKeyRetired = errors.New("signing key is not the log's current key (rotated away, or a different key)")
	ErrCorrupt    = errors.New("receipt log is corrupt")
)

// Log is an open receipt log. All methods are safe for concurrent use, and
// several processes may append to the same directory: each commit holds an
// exclusive flock on the directory's LOCK file.
type Log struct {
	dir   string
	opts  Options
	lockf *os.File

	logID string // fixed once Open returns

	mu      sync.Mutex
	queue   []*request
	writing bool
	closed  bool
	signer  *receipts.Signer

	st    state         // owned by the goroutine that is committing
	syncs atomic.Uint64 // fdatasyncs of the segment, one per batch written

	stop     chan struct{}
	stopOnce sync.Once
	tick     sync.WaitGroup
}

type reqKind int

const (
	reqAppend reqKind = iota
	reqCheckpoint
	reqRotate
)

type request struct {
	kind    reqKind
	bodies  []receipts.Body // of an append, written consecutively, all or none
	next    *receipts.Signer
	done    chan struct{}
	entries []receipts.Entry
	err     error
}

type state struct {
	loaded   bool
	logID    string
	seg      int
	f        *os.File
	size     int64
	seq      uint64
	prev     receipts.Hash
	rng      *compact.Range
	since    int
	lastCkpt time.Time
	lastTS   time.Time
	retired  map[string]bool
	curKID   string
	recovery *receipts.Recovery
}

// Open opens (creating if needed) the receipt log in dir, signing new
// receipts with signer. A torn last line left by a crash is truncated and
// a recovery receipt records the hash of the removed bytes.
func Open(dir string, signer *receipts.Signer, opts Options) (*Log, error) {
	if signer == nil {
		return nil, errors.New("receipts: nil signer")
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = DefaultCheckpointEvery
	}
	if opts.CheckpointInterval == 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("failed to create receipt directory: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("failed to open receipt lock: %w", err)
	}
	l := &Log{dir: dir, opts: opts, lockf: lf, signer: signer, stop: make(chan struct{})}
	// An empty commit loads the state and writes any recovery receipt.
	if err := l.commit(nil); err != nil {
		l.closeFiles()
		return nil, err
	}
	l.logID = l.st.logID
	if opts.CheckpointInterval > 0 {
		l.tick.Add(1)
		go l.ticker(opts.CheckpointInterval)
	}
	return l, nil
}

func (l *Log) ticker(d time.Duration) {
	defer l.tick.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.Checkpoint(context.Background()) //nolint:errcheck // retried on the next tick
		case <-l.stop:
			return
		}
	}
}

// Dir returns the log directory.
func (l *Log) Dir() string { return l.dir }

// LogID returns the log id written into every receipt.
func (l *Log) LogID() string { return l.logID }

// Signer returns the key currently signing receipts.
func (l *Log) Signer() *receipts.Signer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.signer
}

// Append writes b as the next receipt and returns once it is durable
// (fsynced). The log fills v, log, seq, ts and prev. If Append returns an
// error the receipt may or may not have been written, and an action it
// describes must not run.
func (l *Log) Append(ctx context.Context, b receipts.Body) (receipts.Entry, error) {
	return one(l.AppendAll(ctx, b))
}

// AppendAll writes bs as consecutive receipts, in order, in one batch
// (one write(2) and one fdatasync), and returns their entries once all
// are durable. Each body is checked as [Log.Append] checks it. When one
// is refused or cannot be signed, none is written; any other error is
// Append's: the receipts may or may not have been written (a crash
// during the write may leave the first few), and actions they describe
// must not run.
func (l *Log) AppendAll(ctx context.Context, bs ...receipts.Body) ([]receipts.Entry, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	for i, b := range bs {
		if err := appendable(b); err != nil {
			if len(bs) > 1 {
				err = fmt.Errorf("receipt %d of %d: %w", i+1, len(bs), err)
			}
			return nil, err
		}
	}
	return l.submit(ctx, &request{kind: reqAppend, bodies: slices.Clone(bs)})
}

// appendable refuses what a caller may not append.
func appendable(b receipts.Body) error {
	switch b.Type {
	case receipts.TypeCheckpoint, receipts.TypeRecovery, receipts.TypeKeyRotated:
		return fmt.Errorf("receipt type %q is written by the log itself", b.Type)
	case receipts.TypeDecision, receipts.TypeApproval, receipts.TypeOutcome:
		if b.ActionID == "" {
			return fmt.Errorf("%s receipt needs an action id", b.Type)
		}
	}
	if !b.Type.Valid() {
		return fmt.Errorf("unknown receipt type %q", b.Type)
	}
	return nil
}

// Syncs returns how many times l has fdatasync'ed its segment since
// Open: once per batch it wrote (see [Log.AppendAll]).
func (l *Log) Syncs() uint64 { return l.syncs.Load() }

// Decision records the gate's decision for an action. The broker calls it
// before the action runs and does not run the action if it fails.
func (l *Log) Decision(ctx context.Context, ref receipts.Ref, a receipts.Action, d receipts.Decision) (receipts.Entry, error) {
	return l.Append(ctx, DecisionBody(ref, a, d))
}

// Approval records a human's answer (approved, rejected, timeout).
func (l *Log) Approval(ctx context.Context, ref receipts.Ref, a receipts.Approval) (receipts.Entry, error) {
	b := actionBody(receipts.TypeApproval, ref)
	b.Approval = &a
	return l.Append(ctx, b)
}

// Outcome closes an action.
func (l *Log) Outcome(ctx context.Context, ref receipts.Ref, o receipts.Outcome) (receipts.Entry, error) {
	return l.Append(ctx, OutcomeBody(ref, o))
}

// DecisionBody and OutcomeBody are the bodies [Log.Decision] and
// [Log.Outcome] append, for [Log.AppendAll].
func DecisionBody(ref receipts.Ref, a receipts.Action, d receipts.Decision) receipts.Body {
	b := actionBody(receipts.TypeDecision, ref)
	b.Action, b.Decision = &a, &d
	return b
}

// OutcomeBody: see [DecisionBody].
func OutcomeBody(ref receipts.Ref, o receipts.Outcome) receipts.Body {
	b := actionBody(receipts.TypeOutcome, ref)
	b.Outcome = &o
	return b
}

// actionBody is a receipt of type t about the action ref names.
func actionBody(t receipts.Type, ref receipts.Ref) receipts.Body {
	return receipts.Body{Type: t, ActionID: ref.ActionID, Conversation: ref.Conversation, Channel: ref.Channel, User: ref.User,
		AutonomousRun: ref.AutonomousRun, Run: ref.Run, Step: ref.Step, ParentAction: ref.ParentAction}
}

// Estop records the emergency stop being engaged or cleared.
func (l *Log) Estop(ctx context.Context, e receipts.Estop) (receipts.Entry, error) {
	return l.Append(ctx, receipts.Body{Type: receipts.TypeEstop, Estop: &e})
}

// GrantAdded records a grant before it takes effect: whoever adds a
// grant writes this receipt first and stores the grant only if it is
// durable.
func (l *Log) GrantAdded(ctx context.Context, channel string, g receipts.Grant) (receipts.Entry, error) {
	return l.Append(ctx, receipts.Body{Type: receipts.TypeGrantAdded, Channel: channel, Grant: &g})
}

// GrantRevoked records a grant being revoked.
func (l *Log) GrantRevoked(ctx context.Context, channel string, g receipts.Grant) (receipts.Entry, error) {
	return l.Append(ctx, receipts.Body{Type: receipts.TypeGrantRevoked, Channel: channel, Grant: &g})
}

// PolicyLoaded records the policy in force.
func (l *Log) PolicyLoaded(ctx context.Context, p receipts.Policy) (receipts.Entry, error) {
	return l.Append(ctx, receipts.Body{Type: receipts.TypePolicyLoaded, Policy: &p})
}

// Checkpoint writes a signed checkpoint now if receipts were added since
// the last one. It returns the zero Entry if there was nothing to do.
func (l *Log) Checkpoint(ctx context.Context) (receipts.Entry, error) {
	return one(l.submit(ctx, &request{kind: reqCheckpoint}))
}

// RotateKey hands the log over to next: it writes a key_rotated receipt
// signed by the current key that carries next's public key and next's
// signature over [RotationMessage]; later receipts are signed by next.
func (l *Log) RotateKey(ctx context.Context, next *receipts.Signer) (receipts.Entry, error) {
	if next == nil {
		return receipts.Entry{}, errors.New("receipts: nil signer")
	}
	return one(l.submit(ctx, &request{kind: reqRotate, next: next}))
}

// one is the entry of a request that writes at most one receipt.
func one(es []receipts.Entry, err error) (receipts.Entry, error) {
	if err != nil || len(es) == 0 {
		return receipts.Entry{}, err
	}
	return es[0], nil
}

// Close writes a final checkpoint and closes the log.
func (l *Log) Close() error {
	l.stopOnce.Do(func() { close(l.stop) })
	l.tick.Wait()
	_, cerr := l.Checkpoint(context.Background())
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	for l.writing {
		l.mu.Unlock()
		time.Sleep(time.Millisecond)
		l.mu.Lock()
	}
	l.mu.Unlock()
	l.closeFiles()
	if cerr != nil && !errors.Is(cerr, ErrClosed) {
		return cerr
	}
	return nil
}

func (l *Log) closeFiles() {
	if l.st.f != nil {
		l.st.f.Close()
		l.st.f = nil
	}
	l.lockf.Close()
}
