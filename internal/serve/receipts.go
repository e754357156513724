package serve

import (
	"bufio"
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

// Page returns up to limit receipts with seq > after, and the seq to ask
// for next (0 when the log has no more). Segments that end at or before
// after are skipped without being read.
func Page(ctx context.Context, dir string, after uint64, limit int) ([]ReceiptLine, uint64, error) {
	segs, err := receipts.Segments(dir)
	if err != nil {
		return nil, 0, err
	}
	out := []ReceiptLine{}
	for i, name := range segs {
		path := filepath.Join(dir, name)
		if i < len(segs)-1 {
			if line, err := lastLine(path); err == nil && line != nil {
				if pl, err := receipts.ParseLine(line); err == nil && pl.Decoded.Seq <= after {
					continue
				}
			}
		}
		more, err := pageSegment(ctx, path, after, limit, &out)
		if err != nil {
			return nil, 0, err
		}
		if more {
			return out, out[len(out)-1].seq, nil
		}
	}
	return out, 0, nil
}

// pageSegment appends the receipts of one segment with seq > after to out,
// up to limit; more reports that a further receipt exists.
func pageSegment(ctx context.Context, path string, after uint64, limit int, out *[]ReceiptLine) (more bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it, bounded.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= receipts.MaxLineBytes {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, nil // a torn last line is not a receipt yet
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue // longer than any receipt: audit verify reports it
			}
			return false, err
		}
		pl, perr := receipts.ParseLine(bytes.TrimSuffix(line, []byte("\n")))
		if perr != nil || pl.Decoded.Seq <= after {
			continue // a broken line is for audit verify to report
		}
		if len(*out) == limit {
			return true, nil
		}
		*out = append(*out, ReceiptLine{Body: append([]byte(nil), pl.Body...), KID: pl.KID,
			Sig: base64.StdEncoding.EncodeToString(pl.Sig), seq: pl.Decoded.Seq})
	}
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
