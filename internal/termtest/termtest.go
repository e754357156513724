// Package termtest helps the tests of what claw shows on a terminal: a
// pseudo-terminal, a buffer one goroutine writes while another reads, and
// the checks that text prints as itself. Only tests import it; deptest
// keeps it out of the binary. It takes the test as [T], so that it does
// not link the testing package into a non-test package.
package termtest

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/internal/textesc"
)

// T is what the helpers need of a *testing.T.
type T interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Skipf(format string, args ...any)
}

// OpenPTY returns the two ends of a new pseudo-terminal, closed when the
// test ends; the test is skipped where there are none.
func OpenPTY(t T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
		return nil, nil
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// LockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// RequirePrintable fails the test unless every rune of s prints as
// itself.
func RequirePrintable(t T, s string) {
	t.Helper()
	for _, r := range s {
		if !unicode.IsPrint(r) || textesc.Invisible(r) {
			t.Errorf("%q holds %U", s, r)
		}
	}
}

// PromptJSON is v as JSON on one line, without HTML escaping: arguments
// as an approval prompt is given them.
func PromptJSON(t T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
