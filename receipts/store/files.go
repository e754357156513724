package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/atomicfile"
	"github.com/clawsec/claw/receipts"
)

func (l *Log) openSegment(n int) error {
	f, err := os.OpenFile(filepath.Join(l.dir, receipts.SegmentName(n)), os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("failed to open receipt segment: %w", err)
	}
	if l.st.f != nil {
		l.st.f.Close()
	}
	l.st.f, l.st.seg, l.st.size = f, n, 0
	return nil
}

func (l *Log) newSegment(n int) error {
	f, err := os.OpenFile(filepath.Join(l.dir, receipts.SegmentName(n)), os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("failed to create receipt segment: %w", err)
	}
	if err := atomicfile.SyncDir(l.dir); err != nil {
		f.Close()
		return err
	}
	if l.st.f != nil {
		l.st.f.Close()
	}
	l.st.f, l.st.seg, l.st.size = f, n, 0
	return nil
}

// stableLogID returns the id of the log in dir before any receipt carries
// it: the one in the LOGID file, or a new one written there. Creating the
// file exclusively settles a race between two writers opening a new log at
// once: both use the same id.
func stableLogID(dir string) (string, error) {
	path := filepath.Join(dir, logIDName)
	// wait reads the id, giving a writer that has just created the file
	// a moment to finish writing it.
	wait := func() (string, error) {
		for i := 0; i < 100; i++ {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("failed to read the log id: %w", err)
			}
			id := strings.TrimSpace(string(b))
			if id != "" && len(id) <= 256 && !strings.ContainsAny(id, "\n\r\"\\") {
				return id, nil
			}
			time.Sleep(10 * time.Millisecond)
		}
		return "", fmt.Errorf("%s holds no valid log id", path)
	}
	if _, err := os.Stat(path); err == nil {
		return wait()
	}
	id := newLogID()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return wait()
	}
	if err != nil {
		return "", fmt.Errorf("failed to write the log id: %w", err)
	}
	_, werr := f.WriteString(id + "\n")
	if err := f.Sync(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return "", fmt.Errorf("failed to write the log id: %w", werr)
	}
	return id, atomicfile.SyncDir(dir)
}

func newLogID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	host = strings.Map(func(r rune) rune {
		if r == '/' || r == '\n' || r == ' ' || r == '+' {
			return '-'
		}
		return r
	}, host)
	var b [8]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand never fails on Linux
	return "claw/" + host + "/" + hex.EncodeToString(b[:])
}
