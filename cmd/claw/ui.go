package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Output rules (as age's tui.go states them):
//   - data goes to standard output, in a stable shape with -o json;
//   - everything else goes to standard error with a "claw:" prefix, no
//     capitalised initials and no period at the end;
//   - prompts go to the terminal.

// printError writes err and its hints to w in the claw: style.
func printError(w io.Writer, err error) {
	var ce *codeError
	if errors.As(err, &ce) && ce.Err == nil {
		return
	}
	msg := strings.TrimSpace(err.Error())
	for i, line := range strings.Split(msg, "\n") {
		if i == 0 {
			fmt.Fprintf(w, "claw: error: %s\n", line)
		} else {
			fmt.Fprintf(w, "claw:   %s\n", line)
		}
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if c, ok := e.(*codeError); ok {
			for _, h := range c.Hints {
				fmt.Fprintf(w, "claw: hint: %s\n", h)
			}
		}
	}
}

// warnf prints a claw: warning line.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "claw: warning: "+format+"\n", args...)
}

// infof prints a claw: informational line.
func infof(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "claw: "+format+"\n", args...)
}
