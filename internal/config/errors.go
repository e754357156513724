package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a config file. Line and Col are 1-based (bytes);
// they are 0 only for a problem in a default value, which has no position.
type Error struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	Key  string `json:"key"` // dotted key, like "security.autonomy"; "" for syntax errors
	Msg  string `json:"message"`
}

// Error formats the problem as FILE:LINE:COL: KEY: MESSAGE.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one config, in file order.
type Errors struct {
	List []*Error
}

// Error prints one problem per line.
func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, x := range e.List {
		lines[i] = x.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems as a list, for errors.As and errors.Is.
func (e *Errors) Unwrap() []error {
	errs := make([]error, len(e.List))
	for i, x := range e.List {
		errs[i] = x
	}
	return errs
}

// err returns e sorted by position, or nil when it holds no problem.
func (e *Errors) err() error {
	if len(e.List) == 0 {
		return nil
	}
	slices.SortStableFunc(e.List, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	if n := len(e.List) - maxErrors; n > 0 {
		next := *e.List[maxErrors]
		next.Key = ""
		next.Msg = fmt.Sprintf("too many problems; %d more not shown", n)
		e.List = append(e.List[:maxErrors], &next)
	}
	return e
}

// maxErrors is how many problems one Errors reports.
const maxErrors = 100
