package store

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawsec/claw/receipts"
)

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

func mustGenesis() receipts.Hash {
	h, err := receipts.ParseHash(receipts.GenesisPrev)
	if err != nil {
		panic(err)
	}
	return h
}

func (l *Log) load() error {
	l.resetState()
	segs, err := receipts.Segments(l.dir)
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
		n, _ := receipts.SegmentNumber(segs[i])
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
	first, _ := receipts.SegmentNumber(segs[0])
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
		pl, err := receipts.ParseLine(data[ls:le])
		if err != nil || pl.Decoded.Type != receipts.TypeCheckpoint || pl.Decoded.Checkpoint == nil {
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
		nextName := filepath.Join(l.dir, receipts.SegmentName(st.seg+1))
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
					return fmt.Errorf("%w: %s ends in a partial line but is not the last segment", ErrCorrupt, receipts.SegmentName(st.seg))
				}
				off := st.size + int64(last)
				if err := st.f.Truncate(off); err != nil {
					return fmt.Errorf("failed to truncate torn receipt: %w", err)
				}
				if err := syncData(st.f); err != nil {
					return fmt.Errorf("failed to sync receipt log: %w", err)
				}
				st.recovery = &receipts.Recovery{Segment: receipts.SegmentName(st.seg), Offset: off, Bytes: int64(len(torn)), SHA256: receipts.Digest(torn)}
			}
			st.size += int64(last)
		} else if fi.Size() < st.size {
			return fmt.Errorf("%w: %s shrank under the writer", ErrCorrupt, receipts.SegmentName(st.seg))
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
		pl, err := receipts.ParseLine(line)
		if err != nil {
			return fmt.Errorf("%w: %s at byte %d: %v", ErrCorrupt, receipts.SegmentName(st.seg), base, err)
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
