package audit

import (
	"bufio"
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
