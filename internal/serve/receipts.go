package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/clawsec/claw/receipts"
)

var errPageFull = errors.New("page full")

// Page returns up to limit receipts with seq > after, and the seq to ask
// for next (0 when the log has no more).
func Page(ctx context.Context, dir string, after uint64, limit int) ([]ReceiptLine, uint64, error) {
	out := []ReceiptLine{}
	var next uint64
	err := receipts.Walk(ctx, dir, func(rec receipts.Record) error {
		if rec.Err != nil || rec.Line == nil {
			return nil // a torn or broken line is for audit verify to report
		}
		seq := rec.Line.Decoded.Seq
		if seq <= after {
			return nil
		}
		if len(out) == limit {
			next = out[len(out)-1].seq
			return errPageFull
		}
		out = append(out, ReceiptLine{Body: append([]byte(nil), rec.Line.Body...), KID: rec.Line.KID,
			Sig: base64.StdEncoding.EncodeToString(rec.Line.Sig), seq: seq})
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, 0, err
	}
	return out, next, nil
}

// Head returns the last complete receipt of the log in dir.
func Head(dir string) (ReceiptHead, error) {
	segs, err := receipts.Segments(dir)
	if err != nil {
		return ReceiptHead{}, err
	}
	if len(segs) == 0 {
		return ReceiptHead{}, nil
	}
	for i := len(segs) - 1; i >= 0; i-- {
		line, err := lastLine(filepath.Join(dir, segs[i]))
		if err != nil {
			return ReceiptHead{}, err
		}
		if line == nil {
			continue
		}
		pl, err := receipts.ParseLine(line)
		if err != nil {
			return ReceiptHead{}, fmt.Errorf("last receipt of %s: %w", segs[i], err)
		}
		return ReceiptHead{Seq: pl.Decoded.Seq, Hash: receipts.EntryHash(pl.Body).String()}, nil
	}
	return ReceiptHead{}, nil
}

// lastLine reads the last newline-terminated line of a segment.
func lastLine(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	start := max(0, size-(2*receipts.MaxLineBytes+2))
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, err
	}
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		return nil, nil
	}
	buf = buf[:end]
	return buf[bytes.LastIndexByte(buf, '\n')+1:], nil
}
