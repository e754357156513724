package receipts

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Files in a receipt directory.
const (
	lockName       = "LOCK"
	logIDName      = "LOGID" // the log's id, fixed when the log is created
	checkpointName = "checkpoint"
	segmentSuffix  = ".jsonl"
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

// Entry identifies a durable receipt.
type Entry struct {
	Seq     uint64
	Hash    Hash
	TS      string
	Segment string
	Offset  int64
}

// Ref names the action a receipt belongs to.
type Ref struct {
	ActionID     string
	Conversation string
	Channel      string
	User         string
	// AutonomousRun is the autonomous run that took the action, if any.
	AutonomousRun string
	Run, Step     string // the workflow run and step, when a workflow acts
	// ParentAction is the delegate action whose sub-agent took the action.
	ParentAction string
}

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
	signer  *Signer

	st state // owned by the goroutine that is committing

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
	kind  reqKind
	body  Body
	next  *Signer
	done  chan struct{}
	entry Entry
	err   error
}

type state struct {
	loaded   bool
	logID    string
	seg      int
	f        *os.File
	size     int64
	seq      uint64
	prev     Hash
	rng      *compact.Range
	since    int
	lastCkpt time.Time
	lastTS   time.Time
	retired  map[string]bool
	curKID   string
	recovery *Recovery
}

var rangeFactory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// LeafHash is the RFC 6962 leaf hash of a receipt body.
func LeafHash(body []byte) []byte { return rfc6962.DefaultHasher.HashLeaf(body) }

// SegmentName is the file name of segment n (1-based).
func SegmentName(n int) string { return fmt.Sprintf("%06d%s", n, segmentSuffix) }

// Segments lists the segment files of dir in order.
func Segments(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if _, ok := segmentNumber(e.Name()); ok && e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func segmentNumber(name string) (int, bool) {
	s, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(s) != 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// LatestCheckpoint returns the newest signed checkpoint note written in dir.
func LatestCheckpoint(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, checkpointName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxCheckpointBytes))
}

// Open opens (creating if needed) the receipt log in dir, signing new
// receipts with signer. A torn last line left by a crash is truncated and
// a recovery receipt records the hash of the removed bytes.
func Open(dir string, signer *Signer, opts Options) (*Log, error) {
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
func (l *Log) Signer() *Signer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.signer
}

// Append writes b as the next receipt and returns once it is durable
// (fsynced). The log fills v, log, seq, ts and prev. If Append returns an
// error the receipt may or may not have been written, and an action it
// describes must not run.
func (l *Log) Append(ctx context.Context, b Body) (Entry, error) {
	switch b.Type {
	case TypeCheckpoint, TypeRecovery, TypeKeyRotated:
		return Entry{}, fmt.Errorf("receipt type %q is written by the log itself", b.Type)
	case TypeDecision, TypeApproval, TypeOutcome:
		if b.ActionID == "" {
			return Entry{}, fmt.Errorf("%s receipt needs an action id", b.Type)
		}
	}
	if !b.Type.Valid() {
		return Entry{}, fmt.Errorf("unknown receipt type %q", b.Type)
	}
	return l.submit(ctx, &request{kind: reqAppend, body: b})
}

// Decision records the gate's decision for an action. The broker calls it
// before the action runs and does not run the action if it fails.
func (l *Log) Decision(ctx context.Context, ref Ref, a Action, d Decision) (Entry, error) {
	return l.Append(ctx, Body{Type: TypeDecision, ActionID: ref.ActionID, Conversation: ref.Conversation,
		Channel: ref.Channel, User: ref.User, AutonomousRun: ref.AutonomousRun, Run: ref.Run, Step: ref.Step, ParentAction: ref.ParentAction, Action: &a, Decision: &d})
}

// Approval records a human's answer (approved, rejected, timeout).
func (l *Log) Approval(ctx context.Context, ref Ref, a Approval) (Entry, error) {
	return l.Append(ctx, Body{Type: TypeApproval, ActionID: ref.ActionID, Conversation: ref.Conversation,
		Channel: ref.Channel, User: ref.User, AutonomousRun: ref.AutonomousRun, Run: ref.Run, Step: ref.Step, ParentAction: ref.ParentAction, Approval: &a})
}

// Outcome closes an action.
func (l *Log) Outcome(ctx context.Context, ref Ref, o Outcome) (Entry, error) {
	return l.Append(ctx, Body{Type: TypeOutcome, ActionID: ref.ActionID, Conversation: ref.Conversation,
		Channel: ref.Channel, User: ref.User, AutonomousRun: ref.AutonomousRun, Run: ref.Run, Step: ref.Step, ParentAction: ref.ParentAction, Outcome: &o})
}

// Estop records the emergency stop being engaged or cleared.
func (l *Log) Estop(ctx context.Context, e Estop) (Entry, error) {
	return l.Append(ctx, Body{Type: TypeEstop, Estop: &e})
}

// GrantAdded records a grant before it takes effect: whoever adds a
// grant writes this receipt first and stores the grant only if it is
// durable.
func (l *Log) GrantAdded(ctx context.Context, channel string, g Grant) (Entry, error) {
	return l.Append(ctx, Body{Type: TypeGrantAdded, Channel: channel, Grant: &g})
}

// GrantRevoked records a grant being revoked.
func (l *Log) GrantRevoked(ctx context.Context, channel string, g Grant) (Entry, error) {
	return l.Append(ctx, Body{Type: TypeGrantRevoked, Channel: channel, Grant: &g})
}

// PolicyLoaded records the policy in force.
func (l *Log) PolicyLoaded(ctx context.Context, p Policy) (Entry, error) {
	return l.Append(ctx, Body{Type: TypePolicyLoaded, Policy: &p})
}

// Checkpoint writes a signed checkpoint now if receipts were added since
// the last one. It returns the zero Entry if there was nothing to do.
func (l *Log) Checkpoint(ctx context.Context) (Entry, error) {
	return l.submit(ctx, &request{kind: reqCheckpoint})
}

// RotateKey hands the log over to next: it writes a key_rotated receipt
// signed by the current key that carries next's public key and next's
// signature over [RotationMessage]; later receipts are signed by next.
func (l *Log) RotateKey(ctx context.Context, next *Signer) (Entry, error) {
	if next == nil {
		return Entry{}, errors.New("receipts: nil signer")
	}
	return l.submit(ctx, &request{kind: reqRotate, next: next})
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

// submit queues r for the committing goroutine, starting it if idle
// (group commit: one write and one fsync per batch), and waits.
func (l *Log) submit(ctx context.Context, r *request) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	r.done = make(chan struct{})
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Entry{}, ErrClosed
	}
	l.queue = append(l.queue, r)
	if !l.writing {
		l.writing = true
		go l.drain()
	}
	l.mu.Unlock()
	<-r.done
	return r.entry, r.err
}

// drain commits queued requests until the queue is empty. Writers only
// wait for their own request, so they can queue the next one while a batch
// is being synced, and the next batch carries all of them.
func (l *Log) drain() {
	l.mu.Lock()
	for len(l.queue) > 0 {
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		err := l.commit(batch)
		for _, q := range batch {
			if q.err == nil && err != nil {
				q.err = err
			}
			close(q.done)
		}
		l.mu.Lock()
	}
	l.writing = false
	l.mu.Unlock()
}

type built struct {
	req   *request
	entry Entry
}

// commit writes one batch under the cross-process lock.
func (l *Log) commit(batch []*request) error {
	if err := lockFile(l.lockf); err != nil {
		return fmt.Errorf("failed to lock receipt log: %w", err)
	}
	defer unlockFile(l.lockf) //nolint:errcheck // closing the fd also unlocks
	if err := l.sync(); err != nil {
		l.st.loaded = false
		return err
	}
	st := &l.st
	l.mu.Lock()
	oldSigner := l.signer
	l.mu.Unlock()
	fail := func() {
		st.loaded = false
		l.mu.Lock()
		l.signer = oldSigner
		l.mu.Unlock()
	}
	if st.size >= l.opts.SegmentBytes {
		if err := l.newSegment(st.seg + 1); err != nil {
			st.loaded = false
			return err
		}
	}
	start := st.size
	var buf []byte
	var out []built
	var wroteCheckpoint []byte
	add := func(r *request, b *Body) error {
		line, e, err := l.build(b, start+int64(len(buf)))
		if err != nil {
			return err
		}
		buf = append(buf, line...)
		out = append(out, built{r, e})
		if b.Type == TypeCheckpoint {
			wroteCheckpoint = []byte(b.Checkpoint.Note)
		}
		return nil
	}
	if st.recovery != nil {
		if err := add(nil, &Body{Type: TypeRecovery, Recovery: st.recovery}); err != nil {
			st.loaded = false
			return err
		}
		st.recovery = nil
	}
	forceCkpt := false
	for _, r := range batch {
		switch r.kind {
		case reqAppend:
			b := r.body
			r.err = add(r, &b)
		case reqCheckpoint:
			forceCkpt = true
		case reqRotate:
			r.err = l.rotate(r, add)
		}
	}
	if st.since > 0 && (forceCkpt || st.since >= l.opts.CheckpointEvery ||
		st.size+int64(len(buf)) >= l.opts.SegmentBytes ||
		(l.opts.CheckpointInterval > 0 && l.opts.Now().Sub(st.lastCkpt) >= l.opts.CheckpointInterval)) {
		var ck *request
		for _, r := range batch {
			if r.kind == reqCheckpoint {
				ck = r
				break
			}
		}
		b, err := l.checkpointBody()
		if err == nil {
			err = add(ck, b)
		}
		if err != nil && ck != nil {
			ck.err = err
		}
	}
	if len(buf) == 0 {
		return nil
	}
	if _, err := st.f.Write(buf); err != nil {
		st.f.Truncate(start) //nolint:errcheck // best effort; the next open recovers
		fail()
		return fmt.Errorf("failed to write receipt: %w", err)
	}
	if err := syncData(st.f); err != nil {
		fail()
		return fmt.Errorf("failed to sync receipt log: %w", err)
	}
	st.size += int64(len(buf))
	for _, b := range out {
		if b.req != nil && b.req.err == nil {
			b.req.entry = b.entry
		}
	}
	if wroteCheckpoint != nil {
		if err := atomicfile.WriteFile(filepath.Join(l.dir, checkpointName), wroteCheckpoint, 0o600); err != nil {
			return fmt.Errorf("failed to write checkpoint file: %w", err)
		}
	}
	return nil
}

func (l *Log) rotate(r *request, add func(*request, *Body) error) error {
	st := &l.st
	l.mu.Lock()
	old := l.signer
	l.mu.Unlock()
	if old.kid == r.next.kid {
		return errors.New("new key is the current key")
	}
	prev := st.prev.String()
	sig, err := r.next.Sign(RotationMessage(st.logID, prev, old.kid, r.next.kid))
	if err != nil {
		return fmt.Errorf("failed to sign with the new key: %w", err)
	}
	pub, err := MarshalPublicKey(r.next.pub)
	if err != nil {
		return err
	}
	b := &Body{Type: TypeKeyRotated, Key: &KeyRotation{OldKID: old.kid, NewKID: r.next.kid,
		NewKey: string(pub), NewSig: base64.StdEncoding.EncodeToString(sig)}}
	if err := add(r, b); err != nil {
		return err
	}
	l.mu.Lock()
	l.signer = r.next
	l.mu.Unlock()
	return nil
}

func (l *Log) checkpointBody() (*Body, error) {
	st := &l.st
	root, err := st.rng.GetRootHash(nil)
	if err != nil {
		return nil, err
	}
	hashes := st.rng.Hashes()
	rh := make([]string, len(hashes))
	for i, h := range hashes {
		rh[i] = hex.EncodeToString(h)
	}
	ts := l.now()
	cb := &CheckpointBody{Origin: st.logID, Size: st.rng.End(), Root: root, TS: ts.Format(TimeFormat)}
	l.mu.Lock()
	s := l.signer
	l.mu.Unlock()
	n, err := SignCheckpoint(cb, s)
	if err != nil {
		return nil, fmt.Errorf("failed to sign checkpoint: %w", err)
	}
	return &Body{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Size: cb.Size,
		Root: base64.StdEncoding.EncodeToString(root), Range: rh, Note: string(n)}}, nil
}

func (l *Log) now() time.Time {
	t := l.opts.Now().UTC().Truncate(time.Microsecond)
	if t.Before(l.st.lastTS) {
		t = l.st.lastTS
	}
	return t
}

// build fills in, signs and encodes b as the next receipt, and advances
// the in-memory state. It changes nothing if it fails.
func (l *Log) build(b *Body, off int64) ([]byte, Entry, error) {
	st := &l.st
	l.mu.Lock()
	s := l.signer
	l.mu.Unlock()
	if st.retired[s.kid] || (st.curKID != "" && st.curKID != s.kid) {
		return nil, Entry{}, fmt.Errorf("%w: the log is signed by %s, this key is %s", ErrKeyRetired, st.curKID, s.kid)
	}
	ts := l.now()
	b.V = b.Version()
	b.Log = st.logID
	b.Seq = st.seq + 1
	b.TS = ts.Format(TimeFormat)
	b.Prev = st.prev.String()
	body, err := MarshalBody(b)
	if err != nil {
		return nil, Entry{}, err
	}
	if len(body) > MaxLineBytes-1024 {
		return nil, Entry{}, fmt.Errorf("receipt body too large (%d bytes)", len(body))
	}
	sig, err := s.Sign(SignedMessage(body))
	if err != nil {
		return nil, Entry{}, fmt.Errorf("failed to sign receipt: %w", err)
	}
	line := append(EncodeLine(body, s.kid, sig), '\n')
	if err := st.apply(body, b, s.kid, ts); err != nil {
		return nil, Entry{}, err
	}
	return line, Entry{Seq: b.Seq, Hash: st.prev, TS: b.TS, Segment: SegmentName(st.seg), Offset: off}, nil
}

func (st *state) apply(body []byte, b *Body, kid string, ts time.Time) error {
	if err := st.rng.Append(LeafHash(body), nil); err != nil {
		return err
	}
	st.seq = b.Seq
	st.prev = EntryHash(body)
	st.curKID = kid
	if ts.After(st.lastTS) {
		st.lastTS = ts
	}
	switch b.Type {
	case TypeCheckpoint:
		st.since = 0
		st.lastCkpt = ts
	case TypeKeyRotated:
		if b.Key != nil {
			st.retired[b.Key.OldKID] = true
			st.curKID = b.Key.NewKID
		}
		st.since++
	default:
		st.since++
	}
	return nil
}

// sync brings the in-memory state up to date with the files, which other
// processes may have appended to. The caller holds the lock.
func (l *Log) sync() error {
	if !l.st.loaded {
		err := l.load()
		if l.st.lastCkpt.IsZero() {
			l.st.lastCkpt = l.opts.Now()
		}
		return err
	}
	return l.catchUp()
}

func (l *Log) resetState() {
	if l.st.f != nil {
		l.st.f.Close()
	}
	l.st = state{logID: l.opts.LogID, prev: mustGenesis(), rng: rangeFactory.NewEmptyRange(0), retired: map[string]bool{}}
}

func mustGenesis() Hash {
	h, err := ParseHash(GenesisPrev)
	if err != nil {
		panic(err)
	}
	return h
}

func (l *Log) load() error {
	l.resetState()
	segs, err := Segments(l.dir)
	if err != nil {
		return fmt.Errorf("failed to list receipt segments: %w", err)
	}
	if len(segs) == 0 {
		if l.st.logID == "" {
			if l.st.logID, err = stableLogID(l.dir); err != nil {
				return err
			}
		}
		if err := l.newSegment(1); err != nil {
			return err
		}
		l.st.loaded = true
		return nil
	}
	// Resume from the newest checkpoint, which carries the compact range.
	for i := len(segs) - 1; i >= 0; i-- {
		n, _ := segmentNumber(segs[i])
		data, err := os.ReadFile(filepath.Join(l.dir, segs[i]))
		if err != nil {
			return fmt.Errorf("failed to read receipt segment: %w", err)
		}
		off, ok := findCheckpoint(data, &l.st)
		if !ok {
			continue
		}
		if err := l.openSegment(n); err != nil {
			return err
		}
		l.st.size = off
		l.st.loaded = true
		return l.catchUp()
	}
	first, _ := segmentNumber(segs[0])
	if err := l.openSegment(first); err != nil {
		return err
	}
	l.st.loaded = true
	if err := l.catchUp(); err != nil {
		return err
	}
	if l.st.logID == "" {
		if l.st.logID, err = stableLogID(l.dir); err != nil {
			return err
		}
	}
	return nil
}

// findCheckpoint finds the last parseable checkpoint line in data, loads
// the state from it and returns the offset just past it.
func findCheckpoint(data []byte, st *state) (int64, bool) {
	needle := []byte(`"type":"checkpoint"`)
	end := len(data)
	for {
		i := bytes.LastIndex(data[:end], needle)
		if i < 0 {
			return 0, false
		}
		ls := bytes.LastIndexByte(data[:i], '\n') + 1
		le := bytes.IndexByte(data[i:], '\n')
		end = ls
		if le < 0 {
			if ls == 0 {
				return 0, false
			}
			continue
		}
		le += i
		pl, err := ParseLine(data[ls:le])
		if err != nil || pl.Decoded.Type != TypeCheckpoint || pl.Decoded.Checkpoint == nil {
			if ls == 0 {
				return 0, false
			}
			continue
		}
		c := pl.Decoded.Checkpoint
		hashes := make([][]byte, len(c.Range))
		bad := false
		for k, h := range c.Range {
			b, err := hex.DecodeString(h)
			if err != nil || len(b) != 32 {
				bad = true
				break
			}
			hashes[k] = b
		}
		rng, err := rangeFactory.NewRange(0, c.Size, hashes)
		if bad || err != nil {
			if ls == 0 {
				return 0, false
			}
			continue
		}
		st.rng = rng
		st.logID = pl.Decoded.Log
		ts, _ := pl.Decoded.Time()
		if err := st.apply(pl.Body, &pl.Decoded, pl.KID, ts); err != nil {
			return 0, false
		}
		return int64(le + 1), true
	}
}

// catchUp applies lines past the known end of the current segment and in
// any later segments.
func (l *Log) catchUp() error {
	st := &l.st
	for {
		fi, err := st.f.Stat()
		if err != nil {
			return fmt.Errorf("failed to stat receipt segment: %w", err)
		}
		nextName := filepath.Join(l.dir, SegmentName(st.seg+1))
		_, nerr := os.Stat(nextName)
		hasNext := nerr == nil
		if fi.Size() > st.size {
			data := make([]byte, fi.Size()-st.size)
			if _, err := st.f.ReadAt(data, st.size); err != nil {
				return fmt.Errorf("failed to read receipt segment: %w", err)
			}
			last := bytes.LastIndexByte(data, '\n') + 1
			if err := l.applyLines(data[:last], st.size); err != nil {
				return err
			}
			if last < len(data) {
				torn := data[last:]
				if hasNext {
					return fmt.Errorf("%w: %s ends in a partial line but is not the last segment", ErrCorrupt, SegmentName(st.seg))
				}
				off := st.size + int64(last)
				if err := st.f.Truncate(off); err != nil {
					return fmt.Errorf("failed to truncate torn receipt: %w", err)
				}
				if err := syncData(st.f); err != nil {
					return fmt.Errorf("failed to sync receipt log: %w", err)
				}
				st.recovery = &Recovery{Segment: SegmentName(st.seg), Offset: off, Bytes: int64(len(torn)), SHA256: Digest(torn)}
			}
			st.size += int64(last)
		} else if fi.Size() < st.size {
			return fmt.Errorf("%w: %s shrank under the writer", ErrCorrupt, SegmentName(st.seg))
		}
		if !hasNext {
			return nil
		}
		if err := l.openSegment(st.seg + 1); err != nil {
			return err
		}
	}
}

func (l *Log) applyLines(data []byte, base int64) error {
	st := &l.st
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		line := data[:i]
		pl, err := ParseLine(line)
		if err != nil {
			return fmt.Errorf("%w: %s at byte %d: %v", ErrCorrupt, SegmentName(st.seg), base, err)
		}
		if st.logID == "" {
			st.logID = pl.Decoded.Log
		}
		ts, _ := pl.Decoded.Time()
		if err := st.apply(pl.Body, &pl.Decoded, pl.KID, ts); err != nil {
			return err
		}
		data = data[i+1:]
		base += int64(i + 1)
	}
	return nil
}

func (l *Log) openSegment(n int) error {
	f, err := os.OpenFile(filepath.Join(l.dir, SegmentName(n)), os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("failed to open receipt segment: %w", err)
	}
	if l.st.f != nil {
		l.st.f.Close()
	}
	l.st.f, l.st.seg, l.st.size = f, n, 0
	return nil
}

func (l *Log) newSegment(n int) error {
	f, err := os.OpenFile(filepath.Join(l.dir, SegmentName(n)), os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("failed to create receipt segment: %w", err)
	}
	if err := atomicfile.SyncDir(l.dir); err != nil {
		f.Close()
		return err
	}
	if l.st.f != nil {
		l.st.f.Close()
	}
	l.st.f, l.st.seg, l.st.size = f, n, 0
	return nil
}

// stableLogID returns the id of the log in dir before any receipt carries
// it: the one in the LOGID file, or a new one written there. Creating the
// file exclusively settles a race between two writers opening a new log at
// once: both use the same id.
func stableLogID(dir string) (string, error) {
	path := filepath.Join(dir, logIDName)
	// wait reads the id, giving a writer that has just created the file
	// a moment to finish writing it.
	wait := func() (string, error) {
		for i := 0; i < 100; i++ {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("failed to read the log id: %w", err)
			}
			id := strings.TrimSpace(string(b))
			if id != "" && len(id) <= 256 && !strings.ContainsAny(id, "\n\r\"\\") {
				return id, nil
			}
			time.Sleep(10 * time.Millisecond)
		}
		return "", fmt.Errorf("%s holds no valid log id", path)
	}
	if _, err := os.Stat(path); err == nil {
		return wait()
	}
	id := newLogID()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return wait()
	}
	if err != nil {
		return "", fmt.Errorf("failed to write the log id: %w", err)
	}
	_, werr := f.WriteString(id + "\n")
	if err := f.Sync(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return "", fmt.Errorf("failed to write the log id: %w", werr)
	}
	return id, atomicfile.SyncDir(dir)
}

func newLogID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.Map(func(r rune) rune {
		if r == '/' || r == '\n' || r == ' ' || r == '+' {
			return '-'
		}
		return r
	}, host)
	var b [8]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand never fails on Linux
	return "claw/" + host + "/" + hex.EncodeToString(b[:])
}
