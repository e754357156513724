package receipts

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Record is one line met by Walk. Err is set (and Line nil) when the line
// does not parse; Torn marks a partial last line.
type Record struct {
	File string
	N    int // 1-based line number in File
	Line *Line
	Err  error
	Torn bool
}

// Walk calls fn for every line of every segment in dir, in order, without
// checking signatures or the chain (use the audit package for that). It
// stops at the first error fn returns.
func Walk(ctx context.Context, dir string, fn func(Record) error) error {
	segs, err := Segments(dir)
	if err != nil {
		return fmt.Errorf("failed to list receipt segments: %w", err)
	}
	for i, name := range segs {
		if err := walkFile(ctx, filepath.Join(dir, name), name, i == len(segs)-1, fn); err != nil {
			return err
		}
	}
	return nil
}

func walkFile(ctx context.Context, path, name string, last bool, fn func(Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("failed to open receipt segment: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, rerr := readBoundedLine(br)
		if rerr == io.EOF && line == nil {
			return nil
		}
		if rerr != nil && rerr != io.EOF {
			return fmt.Errorf("failed to read %s: %w", name, rerr)
		}
		r := Record{File: name, N: n, Torn: rerr == io.EOF && last}
		if line == nil {
			r.Err = fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxLineBytes)
		} else {
			r.Line, r.Err = ParseLine(line)
		}
		if err := fn(r); err != nil {
			return err
		}
		if rerr == io.EOF {
			return nil
		}
	}
}

// readBoundedLine returns the next line without its newline; nil with a
// nil error for a line over MaxLineBytes; the partial line and io.EOF at
// an end without newline; nil and io.EOF at a clean end.
func readBoundedLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > MaxLineBytes+1 {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch err {
		case nil:
			if over {
				return nil, nil
			}
			return buf[:len(buf)-1], nil
		case bufio.ErrBufferFull:
		case io.EOF:
			if over {
				return nil, io.EOF
			}
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return buf, io.EOF
		default:
			return nil, err
		}
	}
}
