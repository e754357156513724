package grant

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/atomicfile"
)

// Grant is one stored grant.
type Grant struct {
	ID      string    `json:"id"`
	By      string    `json:"by"`      // who granted it, e.g. "cli:tty" or "cli:alice"
	Channel string    `json:"channel"` // through which channel: cli, serve, ...
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	Scope   Scope     `json:"scope"`
	// Revoked is when it was revoked (zero: not revoked). Revoked grants
	// stay in the file so that list and show can say so.
	Revoked time.Time `json:"revoked,omitzero"`
}

// State says whether g is active at now: "active", "expired" or "revoked".
func (g Grant) State(now time.Time) string {
	switch {
	case !g.Revoked.IsZero():
		return "revoked"
	case !now.Before(g.Expires):
		return "expired"
	}
	return "active"
}

// FileName is the grant store's file name under $CLAW_HOME.
const FileName = "grants.json"

// Limits of the store file.
const (
	MaxFileBytes = 4 << 20
	MaxGrants    = 1000
	fileVersion  = 1
)

type file struct {
	Version int     `json:"version"`
	Grants  []Grant `json:"grants"`
}

// Store is the grant file (mode 0600, replaced atomically). Changes take
// an exclusive flock on a lock file next to it, so several processes may
// add and revoke at once.
type Store struct {
	path string

	mu   sync.Mutex
	seen fileID // of the content last returned by LoadIfChanged
}

type fileID struct {
	ino, size int64
	mtime     int64
	ok        bool
}

// Open returns the store at path (the file need not exist).
func Open(path string) *Store { return &Store{path: path} }

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Load reads every grant (active, expired and revoked). A missing file is
// an empty store; a malformed one is an error.
func (s *Store) Load() ([]Grant, error) {
	gs, _, err := s.read()
	return gs, err
}

func (s *Store) read() ([]Grant, fileID, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fileID{ok: true}, nil
	}
	if err != nil {
		return nil, fileID{}, fmt.Errorf("failed to open grants %q: %w", s.path, err)
	}
	defer f.Close()
	id := statID(f)
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fileID{}, fmt.Errorf("failed to read grants %q: %w", s.path, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fileID{}, fmt.Errorf("grants %q: larger than %d bytes", s.path, MaxFileBytes)
	}
	gs, err := Decode(b)
	if err != nil {
		return nil, fileID{}, fmt.Errorf("grants %q: %w", s.path, err)
	}
	return gs, id, nil
}

func statID(f *os.File) fileID {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return fileID{}
	}
	return fileID{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ok: true}
}

// Decode parses a grant file strictly: unknown fields, trailing data, a
// version other than 1, more than MaxGrants grants, duplicate ids and
// invalid scopes are errors.
func Decode(b []byte) ([]Grant, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("malformed grant file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed grant file: trailing data")
	}
	if f.Version != fileVersion {
		return nil, fmt.Errorf("unsupported grant file version %d", f.Version)
	}
	if len(f.Grants) > MaxGrants {
		return nil, fmt.Errorf("more than %d grants", MaxGrants)
	}
	seen := map[string]bool{}
	for i, g := range f.Grants {
		if g.ID == "" || seen[g.ID] || !printable(g.ID) || len(g.ID) > 64 {
			return nil, fmt.Errorf("grant %d: missing, duplicate or invalid id", i)
		}
		seen[g.ID] = true
		if g.Expires.IsZero() {
			return nil, fmt.Errorf("grant %s: no expiry", g.ID)
		}
		// the scope must be one the syntax can say: what was stored is
		// what a person can read back
		sc, err := Parse(Format(g.Scope))
		if err != nil {
			return nil, fmt.Errorf("grant %s: %w", g.ID, err)
		}
		f.Grants[i].Scope = sc
	}
	return f.Grants, nil
}

// LoadIfChanged returns the grants and true when the file changed since
// the last call (or on the first call), and false with nil otherwise. It
// is cheap when nothing changed: one stat.
func (s *Store) LoadIfChanged() ([]Grant, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur fileID
	var st unix.Stat_t
	if err := unix.Stat(s.path, &st); err == nil {
		cur = fileID{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ok: true}
	} else if errors.Is(err, unix.ENOENT) {
		cur = fileID{ok: true}
	}
	if cur.ok && cur == s.seen {
		return nil, false, nil
	}
	gs, id, err := s.read()
	if err != nil {
		s.seen = fileID{}
		return nil, false, err
	}
	s.seen = id
	return gs, true, nil
}

// Active returns the gate's view of the grants active at now.
func Active(gs []Grant, now time.Time) []gate.Grant {
	var out []gate.Grant
	for _, g := range gs {
		if g.State(now) == "active" {
			out = append(out, gate.Grant{ID: g.ID, Expires: g.Expires, Scope: g.Scope})
		}
	}
	return out
}

// NewID returns a new grant id: "g-" and 12 random hex digits.
func NewID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("grant: no randomness: " + err.Error())
	}
	return "g-" + hex.EncodeToString(b[:])
}

// Update reads the store under an exclusive lock, lets fn change the
// grants, and writes them back atomically (a temporary file, fsync,
// rename, fsync of the directory), mode 0600.
func (s *Store) Update(fn func([]Grant) ([]Grant, error)) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("failed to create grant directory: %w", err)
	}
	lock, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("failed to open grant lock: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("failed to lock grants: %w", err)
	}
	gs, _, err := s.read()
	if err != nil {
		return err
	}
	gs, err = fn(gs)
	if err != nil {
		return err
	}
	if len(gs) > MaxGrants {
		return fmt.Errorf("more than %d grants: remove expired ones first", MaxGrants)
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Created.Before(gs[j].Created) })
	b, err := json.MarshalIndent(file{Version: fileVersion, Grants: gs}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(s.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("failed to write grants: %w", err)
	}
	return nil
}

// Add stores g (its id must be new).
func (s *Store) Add(g Grant) error {
	return s.Update(func(gs []Grant) ([]Grant, error) {
		for _, o := range gs {
			if o.ID == g.ID {
				return nil, fmt.Errorf("grant %s exists", g.ID)
			}
		}
		return append(gs, g), nil
	})
}

// ErrUnknown is returned for a grant id that is not in the store.
var ErrUnknown = errors.New("no such grant")

// Revoke marks grant id revoked at now and returns it.
func (s *Store) Revoke(id string, now time.Time) (Grant, error) {
	var out Grant
	err := s.Update(func(gs []Grant) ([]Grant, error) {
		for i := range gs {
			if gs[i].ID == id {
				if gs[i].Revoked.IsZero() {
					gs[i].Revoked = now.UTC()
				}
				out = gs[i]
				return gs, nil
			}
		}
		return nil, fmt.Errorf("%w: %s", ErrUnknown, id)
	})
	return out, err
}

// Expiry settings: every grant expires; Default is used when none is
// given, and no grant may last longer than Max.
type Expiry struct {
	Default time.Duration
	Max     time.Duration
}

// DefaultExpiry is used when the configuration sets none.
var DefaultExpiry = Expiry{Default: 8 * time.Hour, Max: 30 * 24 * time.Hour}

// For returns the expiry time of a grant created at now that should last
// d (0: the default), refusing more than the maximum.
func (e Expiry) For(now time.Time, d time.Duration) (time.Time, error) {
	if e.Default <= 0 {
		e.Default = DefaultExpiry.Default
	}
	if e.Max <= 0 {
		e.Max = DefaultExpiry.Max
	}
	if d == 0 {
		d = min(e.Default, e.Max)
	}
	if d < 0 {
		return time.Time{}, errors.New("a grant's lifetime must be positive")
	}
	if d > e.Max {
		return time.Time{}, fmt.Errorf("a grant may last at most %s (grants.max_expiry), not %s", e.Max, d)
	}
	return now.Add(d).UTC().Truncate(time.Second), nil
}
