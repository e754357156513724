package term

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/internal/termtest"
)

func termState(t *testing.T, f *os.File) (lflag uint32, nonblock bool) {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag, fl&unix.O_NONBLOCK != 0
}

// TestReadNoEcho types a passphrase into a pseudo-terminal: it is read,
// never echoed, and the terminal is left as it was.
func TestReadNoEcho(t *testing.T) {
	m, s := termtest.OpenPTY(t)
	lflag, nb := termState(t, s)
	if lflag&unix.ECHO == 0 {
		t.Fatal("the new terminal does not echo")
	}
	go func() { // type once the echo is off, as a person would after the prompt
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
			if err == nil && tio.Lflag&unix.ECHO == 0 {
				break
			}
		}
		m.Write([]byte(plantedTTYPass + "\n"))
	}()
	got, err := ReadNoEcho(context.Background(), s, nil)
	if err != nil || got != plantedTTYPass {
		t.Fatalf("ReadNoEcho = %q, %v", got, err)
	}
	if l, n := termState(t, s); l != lflag || n != nb {
		t.Fatalf("terminal not restored: lflag %#x→%#x, nonblock %v→%v", lflag, l, nb, n)
	}
	// what the terminal showed: nothing of the passphrase
	var shown bytes.Buffer
	buf := make([]byte, 256)
	for {
		fds := []unix.PollFd{{Fd: int32(m.Fd()), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 200); err != nil || n == 0 {
			break
		}
		n, err := unix.Read(int(m.Fd()), buf)
		if n <= 0 || err != nil {
			break
		}
		shown.Write(buf[:n])
	}
	if bytes.Contains(shown.Bytes(), []byte("PLANTED")) {
		t.Fatalf("the passphrase was echoed: %q", shown.Bytes())
	}
}

// TestReadNoEchoDeadline: nobody types; the read ends with the context
// and the terminal is restored.
func TestReadNoEchoDeadline(t *testing.T) {
	m, s := termtest.OpenPTY(t)
	lflag, nb := termState(t, s)
	m.Write([]byte("half a line")) // never finished
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := ReadNoEcho(ctx, s, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the deadline", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not end with its context")
	}
	if l, n := termState(t, s); l != lflag || n != nb {
		t.Fatalf("terminal not restored: lflag %#x→%#x, nonblock %v→%v", lflag, l, nb, n)
	}
}

const plantedTTYPass = "sk-test-PLANTED-0123456789abcdef"

// TestReadNoEchoPromptsWithEchoOff: the question shows only once the echo
// is off, so a passphrase typed the instant it appears is never shown.
func TestReadNoEchoPromptsWithEchoOff(t *testing.T) {
	m, s := termtest.OpenPTY(t)
	echoOff := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, err := ReadNoEcho(context.Background(), s, func() {
			tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
			echoOff = err == nil && tio.Lflag&unix.ECHO == 0
			m.Write([]byte(plantedTTYPass + "\n")) // typed at once
		})
		if err != nil || got != plantedTTYPass {
			t.Errorf("ReadNoEcho = %q, %v", got, err)
		}
	}()
	var shown bytes.Buffer
	buf := make([]byte, 256)
	for {
		fds := []unix.PollFd{{Fd: int32(m.Fd()), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 300); err != nil || n == 0 {
			break
		}
		n, err := unix.Read(int(m.Fd()), buf)
		if n <= 0 || err != nil {
			break
		}
		shown.Write(buf[:n])
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ReadNoEcho did not return")
	}
	if !echoOff {
		t.Error("the prompt was shown with the echo still on")
	}
	if bytes.Contains(shown.Bytes(), []byte("PLANTED")) {
		t.Errorf("the passphrase was echoed: %q", shown.Bytes())
	}
}
