package config

import (
	"fmt"
	"slices"
)

// Document is a parsed TOML file with the position of every key and
// value, for the strict decoders of other files claw reads (the SOP
// files): they walk Tree and report each problem at its line and column
// with Problem, all of them in one pass.
type Document struct {
	src  *source
	errs []*Error
}

// ParseDocument parses data (a file called name). A syntax error, or data
// that is not UTF-8, is returned as an [*Errors] with its position.
func ParseDocument(data []byte, name string) (*Document, error) {
	s, err := parseSource(data, name)
	if err != nil {
		return nil, err
	}
	return &Document{src: s}, nil
}

// Tree is the decoded document: tables as map[string]any, arrays as
// []any, and TOML's scalar types (string, int64, float64, bool, times).
func (d *Document) Tree() map[string]any { return d.src.tree }

// Problem records a problem with the key at path (a display path like
// "steps[2].tool"), positioned where that key's value is written, or
// where its nearest written parent is.
func (d *Document) Problem(path, format string, args ...any) {
	p := d.src.valPos(path)
	d.errs = append(d.errs, &Error{File: d.src.name, Line: p.line, Col: p.col, Key: path, Msg: fmt.Sprintf(format, args...)})
}

// KeyProblem records a problem with the key at path itself (an unknown
// key), positioned where the key is written.
func (d *Document) KeyProblem(path, format string, args ...any) {
	p := d.src.keyPos(path)
	d.errs = append(d.errs, &Error{File: d.src.name, Line: p.line, Col: p.col, Key: path, Msg: fmt.Sprintf(format, args...)})
}

// Err returns every recorded problem in file order (at most 100) as an [*Errors], or
// nil when there is none.
func (d *Document) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return (&Errors{List: slices.Clone(d.errs)}).err()
}
