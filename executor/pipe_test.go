//go:build linux

package executor

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPipeSize: the capacity of a pipe, as set; 0 for a file that is not
// one, whose writes are never taken to fit.
func TestPipeSize(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	sc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	sc.Control(func(fd uintptr) { _, err = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 8192) })
	if err != nil {
		t.Fatal(err)
	}
	if n := pipeSize(w); n != 8192 {
		t.Errorf("pipe of 8192 bytes: size %d", n)
	}
	f, err := os.CreateTemp(t.TempDir(), "file")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := pipeSize(f); n != 0 {
		t.Errorf("regular file: size %d", n)
	}
}
