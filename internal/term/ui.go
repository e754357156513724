package term

import (
	"fmt"
	"io"
	"os"
	"strings"

	xterm "golang.org/x/term"
)

// Error writes msg and its hints to w in the claw: style: the first line
// of msg as "claw: error: …", the others indented, then one "claw: hint: …"
// line each.
func Error(w io.Writer, msg string, hints []string) {
	for i, line := range strings.Split(strings.TrimSpace(msg), "\n") {
		if i == 0 {
			fmt.Fprintf(w, "claw: error: %s\n", line)
		} else {
			fmt.Fprintf(w, "claw:   %s\n", line)
		}
	}
	for _, h := range hints {
		fmt.Fprintf(w, "claw: hint: %s\n", h)
	}
}

// Warnf prints a claw: warning line.
func Warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "claw: warning: "+format+"\n", args...)
}

// Infof prints a claw: informational line.
func Infof(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "claw: "+format+"\n", args...)
}

// IsTerminal reports whether r (a reader or writer) is a terminal.
func IsTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}
