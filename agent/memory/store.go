package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Limits on what the store accepts. Content and summaries over their cap
// are truncated (after redaction) and marked; everything else over its cap
// is refused with a [*LimitError].
const (
	MaxContentBytes   = 1 << 20   // one message's content, like the loop's response cap
	MaxSummaryBytes   = 64 << 10  // a conversation's summary
	MaxArgumentsBytes = 256 << 10 // one tool call's arguments JSON
	MaxToolCalls      = 64        // tool calls on one assistant message
	MaxMetadataBytes  = 16 << 10  // one message's metadata, as JSON
	MaxNameBytes      = 256       // channel, tool name, tool call id, turn id, provider, model
	MaxQueryBytes     = 1024      // a search query
	MaxQueryTerms     = 32        // terms in a search query
	MaxRecent         = 1000      // messages one Recent call returns
	MaxSearchResults  = 100       // hits one Search call returns
)

// truncMarker ends content that was cut to its cap.
const truncMarker = "\n[truncated]"

var (
	// ErrNotFound is returned for a conversation id that matches nothing.
	ErrNotFound = errors.New("conversation not found")
	// ErrAmbiguous is returned when an id prefix matches more than one
	// conversation.
	ErrAmbiguous = errors.New("conversation id prefix is ambiguous")
	// ErrTooLarge is matched (errors.Is) by every [*LimitError].
	ErrTooLarge = errors.New("too large")
	// ErrInvalid is matched by errors about malformed messages: an unknown
	// role, or tool fields on a role that cannot carry them.
	ErrInvalid = errors.New("invalid message")
	// ErrClosed is returned by every method after [Store.Close].
	ErrClosed = errors.New("memory store is closed")
)

// LimitError reports an input over one of the store's caps.
type LimitError struct {
	What string // "query", "tool call arguments", …
	Max  int
	Got  int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s too large: %d, limit %d", e.What, e.Got, e.Max)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// SchemaError is returned by [Open] for a database written by a newer
// version of this package. It is never modified.
type SchemaError struct {
	Have int // the file's schema version
	Know int // the newest version this code knows
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("memory database has schema version %d, newer than %d: upgrade claw", e.Have, e.Know)
}

// A Redactor returns its argument with secrets replaced. It must be safe
// for concurrent use.
type Redactor func(string) string

// An Option configures [Open].
type Option func(*options)

type options struct {
	redact     Redactor
	secretName func(string) bool
	now        func() time.Time
}

// WithRedactor sets the function applied to every message content, tool
// call arguments and summary before it is stored. Redaction runs before
// truncation, so a secret cut in half by the cap is still seen whole.
func WithRedactor(r Redactor) Option { return func(o *options) { o.redact = r } }

// WithSecretFields sets the test of a field name whose value is a secret
// whatever its form (an Authorization header, a password): in stored tool
// call arguments, such a value is replaced whole by [SecretMarker], and so
// is the value of a [name, value] pair with such a name.
func WithSecretFields(secret func(name string) bool) Option {
	return func(o *options) { o.secretName = secret }
}

// SecretMarker replaces a value under a secret field name (see
// [WithSecretFields]).
const SecretMarker = "[REDACTED]"

// WithClock sets the source of timestamps (default time.Now).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Store is the memory database. It is safe for concurrent use, and several
// processes may open the same file (SQLite WAL, busy timeout 5 s).
type Store struct {
	db   *sql.DB
	path string
	opt  options

	// writeMu serialises this process's writers so they queue here, not
	// in SQLite's busy handler.
	writeMu sync.Mutex

	closeOnce sync.Once
	closed    chan struct{}
}

// Open opens the memory database at path, creating it (mode 0600, its
// directory 0700) and bringing its schema up to date.
func Open(path string, opts ...Option) (*Store, error) {
	o := options{redact: func(s string) string { return s }, now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if o.redact == nil {
		o.redact = func(s string) string { return s }
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("failed to resolve memory path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("failed to create memory directory: %w", err)
	}
	// Create the file ourselves so it is 0600 from the first byte; SQLite
	// gives its -wal and -shm files the main file's mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("failed to open memory database %q: %w", abs, err)
	}
	st, err := f.Stat()
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("failed to restrict memory database %q: %w", abs, err)
	}

	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("failed to open memory database %q: %w", abs, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(2)
	s := &Store{db: db, path: abs, opt: o, closed: make(chan struct{})}

	ms, err := loadMigrations(migrationFS)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("memory schema: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := migrate(ctx, db, ms); err != nil {
		db.Close()
		return nil, fmt.Errorf("failed to prepare memory database %q: %w", abs, err)
	}
	return s, nil
}

// dsn builds the modernc.org/sqlite data source name: a file: URI (so a
// path holding '?', '#' or '%' is escaped, not parsed) with the pragmas
// every connection gets.
func dsn(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "secure_delete(1)")
	q.Set("_txlock", "immediate")
	u.RawQuery = q.Encode()
	return u.String()
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database. Later calls return nil.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		close(s.closed)
		err = s.db.Close()
	})
	return err
}

func (s *Store) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// write runs fn in one IMMEDIATE transaction, serialised with this
// process's other writers.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.isClosed() {
		return ErrClosed
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("failed to begin write: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("failed to commit: %w", err)
	}
	return nil
}

func (s *Store) nowMillis() int64 { return s.opt.now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
