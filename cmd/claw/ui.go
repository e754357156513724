package main

import (
	"errors"
	"io"

	"github.com/clawsec/claw/internal/term"
)

// The output rules are internal/term's (its package doc).

// printError writes err and the hints of its codeErrors to w in the claw:
// style; a codeError without an error is silent.
func printError(w io.Writer, err error) {
	var ce *codeError
	if errors.As(err, &ce) && ce.Err == nil {
		return
	}
	var hints []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		if c, ok := e.(*codeError); ok {
			hints = append(hints, c.Hints...)
		}
	}
	term.Error(w, err.Error(), hints)
}

// warnf prints a claw: warning line (term.Warnf).
func warnf(w io.Writer, format string, args ...any) { term.Warnf(w, format, args...) }

// infof prints a claw: informational line (term.Infof).
func infof(w io.Writer, format string, args ...any) { term.Infof(w, format, args...) }

// warnFix prints a warning of a problem and the hint that fixes it.
func warnFix(w io.Writer, problem, fix string) {
	warnf(w, "%s", problem)
	infof(w, "hint: %s", fix)
}
