package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync/atomic"
	"time"

	"github.com/clawsec/claw/receipts"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// Options control Verify.
type Options struct {
	// Keys are the trusted public keys. Keys handed over by a verified
	// key_rotated receipt become trusted from that receipt on.
	Keys []crypto.PublicKey
	// Anchors are signed checkpoints kept off the host. The log must
	// contain each one's tree as a prefix.
	Anchors []Anchor
	// From and Until limit which receipts are counted and have their
	// signatures checked (zero = unbounded). The hash chain and Merkle
	// tree are always checked end to end.
	From, Until time.Time
	// Fast skips per-receipt signatures; checkpoint signatures, the hash
	// chain and the Merkle roots are still checked.
	Fast bool
	// Workers is the number of signature-checking goroutines
	// (GOMAXPROCS if zero).
	Workers int
	// MaxListed bounds how many problems, missing ranges and open intents
	// are listed (all are counted). 1000 if zero.
	MaxListed int
}

// Anchor is a checkpoint kept elsewhere.
type Anchor struct {
	Source string // where it came from, for the report
	Note   []byte // the signed checkpoint note
}

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

// ErrNoLog is returned when dir holds no receipt segments.
var ErrNoLog = errors.New("no receipt log found")

type sigState uint8

const (
	sigNotChecked sigState = iota
	sigOK
	sigBad
	sigUnknown
)

type rec struct {
	file    string
	line    int
	data    []byte
	torn    bool
	tooLong bool
	pl      *receipts.Line
	err     error
	hash    receipts.Hash
	leaf    []byte
	ts      time.Time
	inRange bool
	sig     sigState
}

type batch struct {
	recs []rec
	done chan struct{}
}

const batchSize = 256

// Verify streams the receipt log in dir and checks every receipt: hash
// chain, sequence numbers, signatures, timestamps, checkpoints, anchors and
// the order of decisions, approvals and outcomes. It keeps going after a
// problem and reports every one. An error means the log could not be read;
// a tampered log is a Report with Verified false.
func Verify(ctx context.Context, dir string, opts Options) (*Report, error) {
	if opts.MaxListed <= 0 {
		opts.MaxListed = 1000
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	segs, err := receipts.Segments(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w in %s", ErrNoLog, dir)
		}
		return nil, fmt.Errorf("failed to list receipt segments: %w", err)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoLog, dir)
	}
	ring, err := receipts.NewKeyRing(opts.Keys...)
	if err != nil {
		return nil, err
	}
	if len(opts.Keys) == 0 {
		return nil, errors.New("no public keys to verify with")
	}
	v := newVerifier(dir, opts, ring)
	v.rep.Segments = len(segs)
	if err := v.loadAnchors(); err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *batch, opts.Workers*2)
	ordered := make(chan *batch, opts.Workers*4)
	readErr := make(chan error, 1)
	go func() {
		defer close(work)
		defer close(ordered)
		readErr <- v.read(ctx, segs, work, ordered)
	}()
	for range opts.Workers {
		go func() {
			for b := range work {
				v.check(b)
				close(b.done)
			}
		}()
	}
	for b := range ordered {
		<-b.done
		for i := range b.recs {
			v.consume(&b.recs[i])
		}
	}
	if err := <-readErr; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v.finish()
	return v.rep, nil
}

type actionState struct {
	decision string
	approved bool
	digest   string
	seq      uint64
}

type verifier struct {
	dir  string
	opts Options
	rep  *Report

	ring    atomic.Pointer[receipts.KeyRing]
	trusted map[string]string // kid -> given|rotated
	retired map[string]uint64 // kid -> seq of its key_rotated receipt
	kidUse  map[string]uint64

	rng     *compact.Range
	started bool
	maxSeq  uint64
	prev    receipts.Hash
	lastTS  time.Time
	logID   string
	actions map[string]*actionState
	digests map[string]bool
	anchors []*anchorState
	bySize  map[uint64][]*anchorState
}

type anchorState struct {
	AnchorResult
	note    []byte
	origin  string
	root    []byte
	reached bool
	local   bool
}

func newVerifier(dir string, opts Options, ring *receipts.KeyRing) *verifier {
	v := &verifier{
		dir:     dir,
		opts:    opts,
		trusted: map[string]string{},
		retired: map[string]uint64{},
		kidUse:  map[string]uint64{},
		rng:     (&compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}).NewEmptyRange(0),
		actions: map[string]*actionState{},
		digests: map[string]bool{},
		bySize:  map[uint64][]*anchorState{},
		rep: &Report{
			Dir:        dir,
			Requested:  TimeRange{From: opts.From, To: opts.Until},
			ByType:     map[string]int{},
			ByDecision: map[string]int{},
			ByOutcome:  map[string]int{},
			Fast:       opts.Fast,
			Problems:   []Problem{},
			Warnings:   []Problem{},
			Anchors:    []AnchorResult{},
		},
	}
	for _, k := range ring.KeyIDs() {
		v.trusted[k] = "given"
	}
	v.ring.Store(ring)
	return v
}

func (v *verifier) loadAnchors() error {
	add := func(src string, note []byte, local bool) {
		a := &anchorState{note: note, local: local}
		a.Source = src
		c, err := receipts.CheckpointTextUnverified(note)
		if err != nil {
			a.Result = "malformed"
			a.Detail = err.Error()
			v.anchors = append(v.anchors, a)
			return
		}
		a.Size, a.root, a.origin = c.Size, c.Root, c.Origin
		a.Root = base64.StdEncoding.EncodeToString(c.Root)
		v.anchors = append(v.anchors, a)
		v.bySize[c.Size] = append(v.bySize[c.Size], a)
	}
	for _, a := range v.opts.Anchors {
		add(a.Source, a.Note, false)
		v.rep.ExternalAnchor = true
	}
	if note, err := receipts.LatestCheckpoint(v.dir); err == nil {
		add("local checkpoint file", note, true)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("failed to read local checkpoint: %w", err)
	}
	return nil
}

// read streams the segments into batches.
func (v *verifier) read(ctx context.Context, segs []string, work, ordered chan<- *batch) error {
	b := &batch{done: make(chan struct{})}
	flush := func() bool {
		if len(b.recs) == 0 {
			return true
		}
		select {
		case work <- b:
		case <-ctx.Done():
			return false
		}
		select {
		case ordered <- b:
		case <-ctx.Done():
			return false
		}
		b = &batch{done: make(chan struct{}), recs: make([]rec, 0, batchSize)}
		return true
	}
	for si, name := range segs {
		f, err := os.Open(filepath.Join(v.dir, name))
		if err != nil {
			return fmt.Errorf("failed to open receipt segment: %w", err)
		}
		br := bufio.NewReaderSize(f, 256<<10)
		for n := 1; ; n++ {
			line, tooLong, err := readLine(br)
			if err == io.EOF && line == nil {
				break
			}
			if err != nil && err != io.EOF {
				f.Close()
				return fmt.Errorf("failed to read %s: %w", name, err)
			}
			r := rec{file: name, line: n, data: line, tooLong: tooLong}
			if err == io.EOF && si == len(segs)-1 {
				r.torn = true
			}
			b.recs = append(b.recs, r)
			if len(b.recs) == batchSize && !flush() {
				f.Close()
				return ctx.Err()
			}
			if err == io.EOF {
				break
			}
		}
		f.Close()
	}
	if !flush() {
		return ctx.Err()
	}
	return nil
}

// readLine reads one line without its newline. A line longer than
// receipts.MaxLineBytes is discarded up to its newline and flagged. At the
// end of a file without a final newline it returns the partial line and
// io.EOF.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > receipts.MaxLineBytes+1 {
				tooLong = true
				buf = nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch err {
		case nil:
			if !tooLong {
				buf = buf[:len(buf)-1]
			} else {
				buf = []byte{}
			}
			return buf, tooLong, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(buf) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			if buf == nil {
				buf = []byte{}
			}
			return buf, tooLong, io.EOF
		default:
			return nil, false, err
		}
	}
}

// check does the per-receipt work that needs no ordering: parse, hash and
// verify the signature.
func (v *verifier) check(b *batch) {
	ring := v.ring.Load()
	for i := range b.recs {
		r := &b.recs[i]
		if r.tooLong {
			r.err = fmt.Errorf("%w: longer than %d bytes", receipts.ErrMalformed, receipts.MaxLineBytes)
			continue
		}
		pl, err := receipts.ParseLine(r.data)
		if err != nil {
			r.err = err
			continue
		}
		r.pl = pl
		r.hash = receipts.EntryHash(pl.Body)
		r.leaf = receipts.LeafHash(pl.Body)
		r.ts, _ = pl.Decoded.Time()
		r.inRange = (v.opts.From.IsZero() || !r.ts.Before(v.opts.From)) && (v.opts.Until.IsZero() || !r.ts.After(v.opts.Until))
		if v.opts.Fast || !r.inRange {
			continue
		}
		r.sig = verifySig(ring, pl)
	}
}

func verifySig(ring *receipts.KeyRing, pl *receipts.Line) sigState {
	if !ring.Has(pl.KID) {
		return sigUnknown
	}
	if ring.Verify(pl.KID, receipts.SignedMessage(pl.Body), pl.Sig) != nil {
		return sigBad
	}
	return sigOK
}

func (v *verifier) problem(p Problem) {
	v.rep.ProblemCount++
	if p.Kind == KindBrokenLink && v.rep.FirstBrokenLink == nil {
		c := p
		v.rep.FirstBrokenLink = &c
	}
	if len(v.rep.Problems) < v.opts.MaxListed {
		v.rep.Problems = append(v.rep.Problems, p)
	}
}

func (v *verifier) warn(p Problem) {
	v.rep.WarningCount++
	if len(v.rep.Warnings) < v.opts.MaxListed {
		v.rep.Warnings = append(v.rep.Warnings, p)
	}
}

func (v *verifier) missing(at Problem, from, to uint64) {
	if len(v.rep.Missing) < v.opts.MaxListed {
		v.rep.Missing = append(v.rep.Missing, SeqRange{from, to})
	}
	msg := fmt.Sprintf("receipt %d is missing", from)
	if to > from {
		msg = fmt.Sprintf("receipts %d-%d are missing", from, to)
	}
	at.Kind, at.Seq, at.Msg = KindMissing, from, msg
	v.problem(at)
}

// consume does the ordered checks for one receipt, one after another:
// log identity, sequence number, hash chain, signature, timestamp, Merkle
// tree (checkpoints and anchors), what its type means, and the counts.
func (v *verifier) consume(r *rec) {
	rep := v.rep
	rep.Receipts++
	at := Problem{File: r.file, Line: r.line}
	if r.torn && r.err != nil {
		w := at
		w.Kind, w.Msg = WarnTornTail, fmt.Sprintf("partial last line (%d bytes), never acknowledged; the next writer truncates it and records a recovery receipt", len(r.data))
		v.warn(w)
		rep.Receipts--
		return
	}
	if r.err != nil {
		p := at
		p.Kind, p.Msg = KindMalformed, r.err.Error()
		v.problem(p)
		return
	}
	b := &r.pl.Decoded
	at.Seq = b.Seq
	v.checkLogID(b, at)
	v.checkSeq(b, at)
	v.checkChain(r, at)
	v.checkSignature(r, at)
	v.checkTime(r, at)
	v.checkTree(r, at)
	v.checkType(r, at)
	if r.inRange {
		v.count(r)
	}
}

// checkLogID checks that the receipt belongs to the log of the first one.
func (v *verifier) checkLogID(b *receipts.Body, at Problem) {
	rep := v.rep
	if v.logID == "" {
		v.logID = b.Log
		rep.LogIDs = append(rep.LogIDs, b.Log)
		return
	}
	if b.Log != v.logID {
		p := at
		p.Kind, p.Expected, p.Found, p.Msg = KindOtherLog, v.logID, b.Log, "receipt belongs to another log"
		v.problem(p)
		if !contains(rep.LogIDs, b.Log) {
			rep.LogIDs = append(rep.LogIDs, b.Log)
		}
	}
}

// checkSeq checks that the sequence number is the next one: missing
// ranges, duplicates and reordering are problems.
func (v *verifier) checkSeq(b *receipts.Body, at Problem) {
	if !v.started {
		v.rep.FirstSeq = b.Seq
		if b.Seq != 1 {
			v.missing(at, 1, b.Seq-1)
		}
	} else {
		switch {
		case b.Seq == v.maxSeq+1:
		case b.Seq > v.maxSeq+1:
			v.missing(at, v.maxSeq+1, b.Seq-1)
		case b.Seq == v.maxSeq:
			p := at
			p.Kind, p.Msg = KindDuplicate, fmt.Sprintf("seq %d appears twice", b.Seq)
			v.problem(p)
		default:
			p := at
			p.Kind, p.Msg = KindOutOfOrder, fmt.Sprintf("seq %d after seq %d (reordered, duplicated or inserted)", b.Seq, v.maxSeq)
			v.problem(p)
		}
	}
	if b.Seq > v.maxSeq {
		v.maxSeq = b.Seq
	}
	v.rep.LastSeq = v.maxSeq
}

// checkChain checks that prev is the entry hash of the receipt before
// (the genesis value for seq 1).
func (v *verifier) checkChain(r *rec, at Problem) {
	b := &r.pl.Decoded
	if v.started || b.Seq == 1 {
		want := v.prev.String()
		if !v.started {
			want = receipts.GenesisPrev
		}
		if b.Prev != want {
			p := at
			p.Kind, p.Expected, p.Found = KindBrokenLink, want, b.Prev
			p.Msg = fmt.Sprintf("prev does not match the entry hash of the receipt before it: the receipt before seq %d was changed, removed or reordered, or this one was inserted", b.Seq)
			v.problem(p)
		}
	}
	v.prev = r.hash
	v.started = true
}

// checkSignature counts the key's use and reports a signature that does
// not verify, an unknown key, or a key used after it was rotated away.
func (v *verifier) checkSignature(r *rec, at Problem) {
	kid := r.pl.KID
	v.kidUse[kid]++
	if r.sig == sigUnknown {
		// A key may have been introduced by a rotation after the worker
		// took its snapshot of the ring.
		if ring := v.ring.Load(); ring.Has(kid) {
			r.sig = verifySig(ring, r.pl)
		}
	}
	p := at
	switch r.sig {
	case sigOK:
		v.rep.SignaturesOK++
		if s, ok := v.retired[kid]; ok && r.pl.Decoded.Seq > s {
			p.Kind, p.Found, p.Msg = KindRetiredKey, kid, fmt.Sprintf("signed by key %s after it was rotated away at seq %d", kid, s)
			v.problem(p)
		}
	case sigBad:
		p.Kind, p.Found, p.Msg = KindBadSignature, kid, fmt.Sprintf("signature does not verify with key %s: the receipt was changed", kid)
		v.problem(p)
	case sigUnknown:
		p.Kind, p.Found, p.Msg = KindUnknownKey, kid, fmt.Sprintf("signed by unknown key %s", kid)
		v.problem(p)
	}
}

// checkTime reports a timestamp earlier than one before it.
func (v *verifier) checkTime(r *rec, at Problem) {
	if !v.lastTS.IsZero() && r.ts.Before(v.lastTS) {
		p := at
		p.Kind, p.Expected, p.Found = KindTimeBack, v.lastTS.Format(receipts.TimeFormat), r.pl.Decoded.TS
		p.Msg = "timestamp goes backwards"
		v.problem(p)
	}
	if r.ts.After(v.lastTS) {
		v.lastTS = r.ts
	}
}

// checkTree adds the receipt to the Merkle tree. A checkpoint commits to
// the tree before its own leaf; an anchor of the tree's new size must
// have its root.
func (v *verifier) checkTree(r *rec, at Problem) {
	b := &r.pl.Decoded
	if b.Type == receipts.TypeCheckpoint {
		v.checkCheckpoint(r, at)
	}
	if err := v.rng.Append(r.leaf, nil); err != nil {
		p := at
		p.Kind, p.Msg = KindCheckpoint, "merkle: "+err.Error()
		v.problem(p)
	}
	as := v.bySize[v.rng.End()]
	if len(as) == 0 {
		return
	}
	root, _ := v.rng.GetRootHash(nil)
	for _, a := range as {
		a.reached = true
		if !bytes.Equal(root, a.root) {
			a.Result = "rewritten"
			a.Detail = fmt.Sprintf("the first %d receipts have root %s, the anchor says %s: receipts up to seq %d were rewritten", a.Size, base64.StdEncoding.EncodeToString(root), a.Root, b.Seq)
		}
	}
}

// checkType checks what the receipt's type means: a key rotation, a
// recovery (a warning), a policy digest, and the order of decisions,
// approvals and outcomes.
func (v *verifier) checkType(r *rec, at Problem) {
	b := &r.pl.Decoded
	switch b.Type {
	case receipts.TypeKeyRotated:
		v.checkRotation(r, at)
	case receipts.TypeRecovery:
		w := at
		w.Kind = WarnRecovery
		if rc := b.Recovery; rc != nil {
			w.Msg = fmt.Sprintf("writer recovered from a crash: removed %d torn bytes at %s:%d (%s)", rc.Bytes, rc.Segment, rc.Offset, rc.SHA256)
		} else {
			w.Msg = "recovery receipt"
		}
		v.warn(w)
	case receipts.TypePolicyLoaded:
		if b.Policy != nil && !v.digests[b.Policy.Digest] {
			v.digests[b.Policy.Digest] = true
			v.rep.PolicyDigests = append(v.rep.PolicyDigests, b.Policy.Digest)
		}
	}
	v.semantics(b, at)
}

// count adds a receipt of the requested time range to the report's
// counts and covered range.
func (v *verifier) count(r *rec) {
	rep, b := v.rep, &r.pl.Decoded
	rep.Counted++
	if rep.Covered.From.IsZero() || r.ts.Before(rep.Covered.From) {
		rep.Covered.From = r.ts
	}
	if r.ts.After(rep.Covered.To) {
		rep.Covered.To = r.ts
	}
	rep.ByType[string(b.Type)]++
	if b.Type == receipts.TypeDecision && b.Decision != nil {
		rep.ByDecision[b.Decision.Result]++
	}
	if b.Type == receipts.TypeOutcome && b.Outcome != nil {
		rep.ByOutcome[b.Outcome.Status]++
	}
}

func (v *verifier) checkCheckpoint(r *rec, at Problem) {
	c := r.pl.Decoded.Checkpoint
	fail := func(msg string, exp, found string) {
		p := at
		p.Kind, p.Msg, p.Expected, p.Found = KindCheckpoint, msg, exp, found
		v.problem(p)
		v.rep.Checkpoints.Failed++
	}
	if c == nil {
		fail("checkpoint receipt without a checkpoint", "", "")
		return
	}
	cb, _, err := receipts.OpenCheckpoint([]byte(c.Note), v.ring.Load())
	if err != nil {
		fail("checkpoint note: "+err.Error(), "", "")
		return
	}
	size := v.rng.End()
	root, _ := v.rng.GetRootHash(nil)
	if size == 0 {
		root = rfc6962.DefaultHasher.EmptyRoot()
	}
	switch {
	case cb.Origin != v.logID:
		fail("checkpoint is for another log", v.logID, cb.Origin)
	case cb.Size != size || c.Size != size:
		fail("checkpoint size does not match the receipts before it", fmt.Sprint(size), fmt.Sprint(cb.Size))
	case !bytes.Equal(cb.Root, root) || c.Root != base64.StdEncoding.EncodeToString(cb.Root):
		fail("checkpoint root does not match the receipts before it", base64.StdEncoding.EncodeToString(root), base64.StdEncoding.EncodeToString(cb.Root))
	default:
		v.rep.Checkpoints.Verified++
		v.rep.Checkpoints.LatestSeq = r.pl.Decoded.Seq
		v.rep.Checkpoints.LatestSize = cb.Size
		v.rep.Checkpoints.LatestRoot = base64.StdEncoding.EncodeToString(cb.Root)
	}
}

func (v *verifier) checkRotation(r *rec, at Problem) {
	b := &r.pl.Decoded
	k := b.Key
	fail := func(msg string) {
		p := at
		p.Kind, p.Msg = KindKeyRotation, msg
		v.problem(p)
	}
	if k == nil {
		fail("key_rotated receipt without key")
		return
	}
	if r.sig != sigOK {
		fail("key rotation not signed by a trusted key: new key " + k.NewKID + " not trusted")
		return
	}
	if r.pl.KID != k.OldKID {
		fail("key rotation signed by " + r.pl.KID + ", not by the old key " + k.OldKID)
		return
	}
	pubs, err := receipts.ParsePublicKeys([]byte(k.NewKey))
	if err != nil || len(pubs) != 1 {
		fail("key rotation: bad new public key")
		return
	}
	kid, err := receipts.KeyID(pubs[0])
	if err != nil || kid != k.NewKID {
		fail("key rotation: new key id does not match the new public key")
		return
	}
	sig, err := base64.StdEncoding.DecodeString(k.NewSig)
	if err != nil {
		fail("key rotation: bad new-key signature encoding")
		return
	}
	tmp, err := receipts.NewKeyRing(pubs[0])
	if err != nil || tmp.Verify(kid, receipts.RotationMessage(b.Log, b.Prev, k.OldKID, k.NewKID), sig) != nil {
		fail("key rotation: the new key's signature does not verify")
		return
	}
	ring := v.ring.Load().Clone()
	if _, err := ring.Add(pubs[0]); err != nil {
		fail("key rotation: " + err.Error())
		return
	}
	v.ring.Store(ring)
	if _, ok := v.trusted[kid]; !ok {
		v.trusted[kid] = "rotated"
	}
	v.retired[k.OldKID] = b.Seq
}

// isExecuted reports whether an outcome says the action ran: it finished,
// failed, timed out or was killed — including by the emergency stop, whose
// outcome then carries the exit status. ("delegated", from the agent
// hooks, means another program was told it may run it.)
func isExecuted(o *receipts.Outcome) bool {
	if o == nil {
		return false
	}
	switch o.Status {
	case "ok", "failed", "timeout", "killed":
		return true
	case "estop":
		return o.Exit != nil
	}
	return false
}

func (v *verifier) semantics(b *receipts.Body, at Problem) {
	switch b.Type {
	case receipts.TypeDecision:
		// Only actions that may still run are tracked, so memory follows
		// the actions in flight, not the length of the log. A denied
		// action that runs anyway has no state and is reported below.
		if b.Decision == nil || b.Decision.Result == "deny" {
			delete(v.actions, b.ActionID)
			return
		}
		st := &actionState{seq: b.Seq, decision: b.Decision.Result}
		if b.Action != nil {
			st.digest = b.Action.ActionSHA256
		}
		v.actions[b.ActionID] = st
	case receipts.TypeApproval:
		st := v.actions[b.ActionID]
		if st == nil {
			w := at
			w.Kind, w.Msg = WarnNoDecision, fmt.Sprintf("approval for action %s with no decision before it", b.ActionID)
			v.warn(w)
			return
		}
		if b.Approval == nil || b.Approval.Result != "approved" {
			delete(v.actions, b.ActionID)
			return
		}
		{
			if st.digest != "" && b.Approval.ActionSHA256 != st.digest {
				p := at
				p.Kind, p.Expected, p.Found = KindApproval, st.digest, b.Approval.ActionSHA256
				p.Msg = fmt.Sprintf("approval for action %s is bound to a different action", b.ActionID)
				v.problem(p)
				return
			}
			st.approved = true
		}
	case receipts.TypeOutcome:
		st := v.actions[b.ActionID]
		delete(v.actions, b.ActionID)
		if !isExecuted(b.Outcome) {
			return
		}
		if st == nil || !(st.decision == "allow" || st.approved) {
			p := at
			p.Kind = KindUnauthorized
			p.Msg = fmt.Sprintf("action %s ran (outcome %s) with no allow decision or approval before it", b.ActionID, b.Outcome.Status)
			v.problem(p)
		}
	}
}

func (v *verifier) finish() {
	rep := v.rep
	size := v.rng.End()
	rep.TreeSize = size
	root, err := v.rng.GetRootHash(nil)
	if err != nil || size == 0 {
		root = rfc6962.DefaultHasher.EmptyRoot()
	}
	rep.TreeRoot = base64.StdEncoding.EncodeToString(root)

	ring := v.ring.Load()
	for _, a := range v.anchors {
		if a.Result != "malformed" {
			if _, _, err := receipts.OpenCheckpoint(a.note, ring); err != nil {
				a.Result, a.Detail = "bad-signature", err.Error()
			}
		}
		if a.Result == "" && v.logID != "" && a.origin != v.logID {
			a.Result, a.Detail = "other-log", fmt.Sprintf("anchor is for %s, log is %s", a.origin, v.logID)
		}
		if a.Result == "" && a.Size > size {
			a.Result = "truncated"
			a.Detail = fmt.Sprintf("the log has %d receipts but the anchor covers %d: receipts %d-%d were removed (truncation or rollback)", size, a.Size, size+1, a.Size)
		}
		if a.Result == "" && a.Size == 0 {
			a.reached = true
		}
		if a.Result == "" && a.reached {
			a.Result = "consistent"
		}
		rep.Anchors = append(rep.Anchors, a.AnchorResult)
		switch a.Result {
		case "consistent":
		case "truncated":
			v.problem(Problem{Kind: KindTruncated, Seq: size + 1, Expected: fmt.Sprint(a.Size), Found: fmt.Sprint(size), Msg: a.Source + ": " + a.Detail})
		case "rewritten":
			v.problem(Problem{Kind: KindRewritten, Seq: a.Size, Msg: a.Source + ": " + a.Detail})
		default:
			v.problem(Problem{Kind: KindAnchor, Msg: a.Source + ": " + a.Result + ": " + a.Detail})
		}
	}

	var open []*actionState
	var ids []string
	for id, st := range v.actions {
		if st.decision == "allow" || st.approved {
			open = append(open, st)
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return v.actions[ids[i]].seq < v.actions[ids[j]].seq })
	for _, id := range ids {
		v.warn(Problem{Kind: WarnNoOutcome, Seq: v.actions[id].seq,
			Msg: fmt.Sprintf("action %s was allowed but has no outcome (crash, or still running)", id)})
	}
	_ = open

	kids := make([]string, 0, len(v.kidUse))
	for k := range v.kidUse {
		kids = append(kids, k)
	}
	sort.Strings(kids)
	for _, k := range kids {
		t := v.trusted[k]
		if t == "" {
			t = "no"
		}
		rep.Keys = append(rep.Keys, KeyUse{KID: k, Trusted: t, Receipts: v.kidUse[k]})
	}
	rep.Verified = rep.ProblemCount == 0
	rep.Verdict = TamperEvident
	if rep.Verified {
		rep.Verdict = Verified
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
