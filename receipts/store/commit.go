package store

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/clawsec/claw/receipts"
)

var rangeFactory = &compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}

// submit queues r and waits for its commit (group commit: one write and
// one fsync per batch). When no commit is under way the caller commits the
// queue itself, with no goroutine to start and wake and no wake-up back;
// what queued meanwhile goes on in a committing goroutine, so that a caller
// never commits for others longer than its own batch.
func (l *Log) submit(ctx context.Context, r *request) ([]receipts.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.done = make(chan struct{})
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	l.queue = append(l.queue, r)
	if !l.writing {
		l.writing = true
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		l.lead(batch)
	} else {
		l.mu.Unlock()
	}
	<-r.done
	if r.err != nil {
		return nil, r.err
	}
	return r.entries, nil
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
		l.commitBatch(batch)
		l.mu.Lock()
	}
	l.writing = false
	l.mu.Unlock()
}

// lead commits batch, the queue of an idle log, on the caller's
// goroutine, then leaves what queued meanwhile to a committing goroutine.
// It does so even when the commit panics, so that a caller that recovers
// leaves a log others can still append to.
func (l *Log) lead(batch []*request) {
	defer func() {
		l.mu.Lock()
		if len(l.queue) > 0 {
			go l.drain()
		} else {
			l.writing = false
		}
		l.mu.Unlock()
	}()
	l.commitBatch(batch)
}

// errCommitPanicked is the error of a batch whose commit panicked.
var errCommitPanicked = errors.New("receipt commit failed: internal error")

// commitBatch commits batch and ends the wait of each of its requests,
// with errCommitPanicked when the commit panics (the panic goes on, and
// the log reloads its state from the files before the next commit).
func (l *Log) commitBatch(batch []*request) {
	err := errCommitPanicked
	defer func() {
		if err == errCommitPanicked {
			l.st.loaded = false
		}
		for _, q := range batch {
			if q.err == nil && err != nil {
				q.err = err
			}
			close(q.done)
		}
	}()
	err = l.commit(batch)
}

type built struct {
	req   *request
	entry receipts.Entry
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
	add := func(r *request, b *receipts.Body) error {
		line, e, err := l.build(b, start+int64(len(buf)))
		if err != nil {
			return err
		}
		buf = append(buf, line...)
		out = append(out, built{r, e})
		if b.Type == receipts.TypeCheckpoint {
			wroteCheckpoint = []byte(b.Checkpoint.Note)
		}
		return nil
	}
	if st.recovery != nil {
		if err := add(nil, &receipts.Body{Type: receipts.TypeRecovery, Recovery: st.recovery}); err != nil {
			st.loaded = false
			return err
		}
		st.recovery = nil
	}
	forceCkpt := false
	for _, r := range batch {
		switch r.kind {
		case reqAppend:
			mark, marked := len(buf), len(out)
			r.err = l.addAll(r, add)
			if r.err != nil {
				buf, out = buf[:mark], out[:marked]
			}
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
	l.syncs.Add(1)
	if err := syncData(st.f); err != nil {
		fail()
		return fmt.Errorf("failed to sync receipt log: %w", err)
	}
	st.size += int64(len(buf))
	for _, b := range out {
		if b.req != nil && b.req.err == nil {
			b.req.entries = append(b.req.entries, b.entry)
		}
	}
	if wroteCheckpoint != nil {
		if err := atomicfile.WriteFile(filepath.Join(l.dir, receipts.CheckpointFile), wroteCheckpoint, 0o600); err != nil {
			return fmt.Errorf("failed to write checkpoint file: %w", err)
		}
	}
	return nil
}

// addAll adds the bodies of r, all or none: when one cannot be built,
// the state goes back to what it was before the first, and the caller
// drops what add added for r.
func (l *Log) addAll(r *request, add func(*request, *receipts.Body) error) error {
	if len(r.bodies) == 1 {
		return add(r, &r.bodies[0])
	}
	saved := l.st
	rng, err := rangeFactory.NewRange(saved.rng.Begin(), saved.rng.End(), slices.Clone(saved.rng.Hashes()))
	if err != nil {
		return err
	}
	saved.rng = rng // a copy: Append reuses the array of the hashes
	for i := range r.bodies {
		if err := add(r, &r.bodies[i]); err != nil {
			l.st = saved
			return fmt.Errorf("receipt %d of %d: %w", i+1, len(r.bodies), err)
		}
	}
	return nil
}

func (l *Log) rotate(r *request, add func(*request, *receipts.Body) error) error {
	st := &l.st
	l.mu.Lock()
	old := l.signer
	l.mu.Unlock()
	if old.KeyID() == r.next.KeyID() {
		return errors.New("new key is the current key")
	}
	prev := st.prev.String()
	sig, err := r.next.Sign(receipts.RotationMessage(st.logID, prev, old.KeyID(), r.next.KeyID()))
	if err != nil {
		return fmt.Errorf("failed to sign with the new key: %w", err)
	}
	pub, err := receipts.MarshalPublicKey(r.next.PublicKey())
	if err != nil {
		return err
	}
	b := &receipts.Body{Type: receipts.TypeKeyRotated, Key: &receipts.KeyRotation{OldKID: old.KeyID(), NewKID: r.next.KeyID(),
		NewKey: string(pub), NewSig: base64.StdEncoding.EncodeToString(sig)}}
	if err := add(r, b); err != nil {
		return err
	}
	l.mu.Lock()
	l.signer = r.next
	l.mu.Unlock()
	return nil
}

func (l *Log) checkpointBody() (*receipts.Body, error) {
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
	cb := &receipts.CheckpointBody{Origin: st.logID, Size: st.rng.End(), Root: root, TS: ts.Format(receipts.TimeFormat)}
	l.mu.Lock()
	s := l.signer
	l.mu.Unlock()
	n, err := receipts.SignCheckpoint(cb, s)
	if err != nil {
		return nil, fmt.Errorf("failed to sign checkpoint: %w", err)
	}
	return &receipts.Body{Type: receipts.TypeCheckpoint, Checkpoint: &receipts.Checkpoint{Size: cb.Size,
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
func (l *Log) build(b *receipts.Body, off int64) ([]byte, receipts.Entry, error) {
	st := &l.st
	l.mu.Lock()
	s := l.signer
	l.mu.Unlock()
	if st.retired[s.KeyID()] || (st.curKID != "" && st.curKID != s.KeyID()) {
		return nil, receipts.Entry{}, fmt.Errorf("%w: the log is signed by %s, this key is %s", ErrKeyRetired, st.curKID, s.KeyID())
	}
	ts := l.now()
	b.V = b.Version()
	b.Log = st.logID
	b.Seq = st.seq + 1
	b.TS = ts.Format(receipts.TimeFormat)
	b.Prev = st.prev.String()
	body, err := receipts.MarshalBody(b)
	if err != nil {
		return nil, receipts.Entry{}, err
	}
	if len(body) > receipts.MaxLineBytes-1024 {
		return nil, receipts.Entry{}, fmt.Errorf("receipt body too large (%d bytes)", len(body))
	}
	sig, err := s.Sign(receipts.SignedMessage(body))
	if err != nil {
		return nil, receipts.Entry{}, fmt.Errorf("failed to sign receipt: %w", err)
	}
	line := append(receipts.EncodeLine(body, s.KeyID(), sig), '\n')
	if err := st.apply(body, b, s.KeyID(), ts); err != nil {
		return nil, receipts.Entry{}, err
	}
	return line, receipts.Entry{Seq: b.Seq, Hash: st.prev, TS: b.TS, Segment: receipts.SegmentName(st.seg), Offset: off}, nil
}

func (st *state) apply(body []byte, b *receipts.Body, kid string, ts time.Time) error {
	if err := st.rng.Append(receipts.LeafHash(body), nil); err != nil {
		return err
	}
	st.seq = b.Seq
	st.prev = receipts.EntryHash(body)
	st.curKID = kid
	if ts.After(st.lastTS) {
		st.lastTS = ts
	}
	switch b.Type {
	case receipts.TypeCheckpoint:
		st.since = 0
		st.lastCkpt = ts
	case receipts.TypeKeyRotated:
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
