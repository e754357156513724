package planckclaw

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The FIFOs of the directory.
const (
	ClawIn      = "claw_in"
	ClawOut     = "claw_out"
	InteractIn  = "interact_in"
	InteractOut = "interact_out"
)

// Prepare makes dir (0700) and its four FIFOs (0600) unless they exist,
// and checks what exists: dir a directory, not a symlink, owned by this
// user and closed to others (a directory of ours that is open to others
// is made 0700); each FIFO a FIFO, not a symlink, ours, closed to others.
func Prepare(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("failed to create the FIFO directory: %w", err)
		}
		if fi, err = os.Lstat(dir); err != nil {
			return fmt.Errorf("failed to check the FIFO directory: %w", err)
		}
	case err != nil:
		return fmt.Errorf("failed to check the FIFO directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink is refused)", dir)
	}
	if owner(fi) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this user", dir, owner(fi))
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("failed to make %s 0700: %w", dir, err)
		}
	}
	for _, name := range []string{ClawIn, ClawOut, InteractIn, InteractOut} {
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				return fmt.Errorf("failed to create the FIFO %s: %w", p, err)
			}
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("failed to make %s 0600: %w", p, err)
			}
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("failed to check %s: %w", p, err)
		}
		if err := checkFIFO(p, fi); err != nil {
			return err
		}
	}
	return nil
}

// checkFIFO refuses anything but a FIFO of ours that others cannot open.
func checkFIFO(p string, fi os.FileInfo) error {
	switch {
	case fi.Mode().Type() != os.ModeNamedPipe:
		return fmt.Errorf("%s is not a FIFO (%s)", p, fi.Mode().Type())
	case owner(fi) != os.Geteuid():
		return fmt.Errorf("%s is owned by uid %d, not by this user", p, owner(fi))
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s has mode %04o; it must be 0600", p, fi.Mode().Perm())
	}
	return nil
}

func owner(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// openFIFO opens p without following a symlink (O_NOFOLLOW), without
// blocking (a FIFO opened so is polled by the runtime: a deadline or a
// Close ends a blocked Read or Write), and checks what it opened.
func openFIFO(p string, flag int) (*os.File, error) {
	fd, err := syscall.Open(p, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err == nil {
		err = checkFIFO(p, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// openReader opens a FIFO to read. It holds the FIFO read-write, so it
// never sees end-of-file when a writer goes away, and the other side's
// open for writing never blocks.
func openReader(p string) (*os.File, error) { return openFIFO(p, syscall.O_RDWR) }

// openWriter opens a FIFO to write, retrying while nobody reads it
// (ENXIO) until wait has passed.
func openWriter(p string, wait time.Duration) (*os.File, error) {
	deadline := time.Now().Add(wait)
	delay := 10 * time.Millisecond
	for {
		f, err := openFIFO(p, syscall.O_WRONLY)
		if err == nil || !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(delay)
		delay = min(2*delay, 250*time.Millisecond)
	}
}

// lockDir takes the directory's lock file (0600, never through a
// symlink), or says that another process holds it.
func lockDir(dir string) (*os.File, error) {
	p := filepath.Join(dir, ".lock")
	fd, err := syscall.Open(p, syscall.O_RDWR|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another process serves the FIFOs in %s", dir)
	}
	return f, nil
}
