package sop

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/clawsec/claw/internal/textesc"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Run states.
const (
	StateRunning   = "running"   // a step is under way, or its process died
	StateWaiting   = "waiting"   // at an approval nobody could be asked for
	StateStopped   = "stopped"   // the emergency stop was engaged
	StateFailed    = "failed"    // a step failed with on_failure = "abort"
	StateDone      = "done"      // every step ran
	StateCancelled = "cancelled" // claw sop cancel
)

// Step statuses.
const (
	StepPending = "pending"
	StepRunning = "running"
	StepOK      = "ok"
	StepFailed  = "failed"
	StepWaiting = "waiting"
	StepStopped = "stopped"
)

// MaxOutput bounds the output of a step the store keeps (and passes on to
// later steps); a longer one is cut and says so.
const MaxOutput = 256 << 10

// Run is the saved state of one run of an SOP.
type Run struct {
	ID      string      `json:"id"`
	SOP     string      `json:"sop"`
	State   string      `json:"state"`
	Next    int         `json:"next"` // index of the step to run next
	Error   string      `json:"error,omitempty"`
	Started time.Time   `json:"started"`
	Updated time.Time   `json:"updated"`
	Steps   []StepState `json:"steps,omitempty"`
	// Source is the SOP file the run started with; a resumed run follows
	// it, not the file as it is now.
	Source []byte `json:"-"`
}

// Resumable reports whether the run can be resumed: it has not finished
// and was not cancelled.
func (r *Run) Resumable() bool { return r.State != StateDone && r.State != StateCancelled }

// StepState is what happened to one step of a run.
type StepState struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	ActionID string `json:"action_id,omitempty"`
	Error    string `json:"error,omitempty"`
	Output   string `json:"-"`
}

// ErrNoRun is returned for a run id that matches nothing.
var ErrNoRun = errors.New("no such run")

// Store keeps runs in an SQLite database (claw keeps them in the memory
// database, in tables of their own).
type Store struct{ db *sql.DB }

const schema = `
CREATE TABLE IF NOT EXISTS sop_runs (
	id      TEXT PRIMARY KEY,
	sop     TEXT NOT NULL,
	source  BLOB NOT NULL,
	state   TEXT NOT NULL,
	next    INTEGER NOT NULL,
	error   TEXT NOT NULL DEFAULT '',
	pid     INTEGER NOT NULL DEFAULT 0, -- the process running it, 0: none
	started INTEGER NOT NULL,
	updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sop_steps (
	run       TEXT NOT NULL REFERENCES sop_runs(id),
	idx       INTEGER NOT NULL,
	id        TEXT NOT NULL,
	status    TEXT NOT NULL,
	action_id TEXT NOT NULL DEFAULT '',
	error     TEXT NOT NULL DEFAULT '',
	output    TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (run, idx)
);`

// OpenStore opens (and prepares) the runs' tables in the SQLite database
// at path, which must exist (claw's memory database, opened first).
func OpenStore(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), OmitHost: true}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)") // a saved step survives a power cut too
	q.Set("_txlock", "immediate")
	q.Set("mode", "rw")
	u.RawQuery = q.Encode()
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("opening the run database: %w", err)
	}
	db.SetMaxOpenConns(2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("preparing the run tables in %s: %w", abs, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// newRunID is the time to the second and 8 random hex digits.
func newRunID() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("sop: no randomness: " + err.Error())
	}
	return "run-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Create saves a new run of sop (read from source) with every step
// pending.
func (s *Store) Create(ctx context.Context, p *SOP, source []byte) (*Run, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	r := &Run{ID: newRunID(), SOP: p.Name, State: StateRunning, Started: now, Updated: now, Source: source}
	for _, st := range p.Steps {
		r.Steps = append(r.Steps, StepState{ID: st.ID, Status: StepPending})
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sop_runs (id, sop, source, state, next, started, updated) VALUES (?, ?, ?, ?, 0, ?, ?)`,
			r.ID, r.SOP, source, r.State, now.UnixMilli(), now.UnixMilli()); err != nil {
			return err
		}
		for i, st := range r.Steps {
			if _, err := tx.ExecContext(ctx, `INSERT INTO sop_steps (run, idx, id, status) VALUES (?, ?, ?, ?)`, r.ID, i, st.ID, st.Status); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("saving the new run: %w", err)
	}
	return r, nil
}

// Save writes the run's state and the state of its step i in one
// transaction.
func (s *Store) Save(ctx context.Context, r *Run, i int) error {
	r.Updated = time.Now().UTC().Truncate(time.Millisecond)
	st := r.Steps[i]
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sop_runs SET state = ?, next = ?, error = ?, updated = ? WHERE id = ?`,
			r.State, r.Next, r.Error, r.Updated.UnixMilli(), r.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrNoRun
		}
		_, err = tx.ExecContext(ctx, `UPDATE sop_steps SET status = ?, action_id = ?, error = ?, output = ? WHERE run = ? AND idx = ?`,
			st.Status, st.ActionID, st.Error, st.Output, r.ID, i)
		return err
	})
	if err != nil {
		return fmt.Errorf("saving run %s: %w", r.ID, err)
	}
	return nil
}

// SetState changes a run's state alone (claw sop cancel).
func (s *Store) SetState(ctx context.Context, id, state string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE sop_runs SET state = ?, updated = ? WHERE id = ?`, state, time.Now().UTC().UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("saving run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	return nil
}

// ErrBusy is returned by Claim for a run another live process runs.
var ErrBusy = errors.New("run is being run by another process")

// Claim makes pid the process that runs the run: it fails with ErrBusy
// while another process that alive reports running holds it (a process
// that died, killed mid-run, holds nothing).
func (s *Store) Claim(ctx context.Context, id string, pid int, alive func(int) bool) error {
	var holder int
	err := s.db.QueryRowContext(ctx, `SELECT pid FROM sop_runs WHERE id = ?`, id).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	if err != nil {
		return fmt.Errorf("reading run %s: %w", id, err)
	}
	if holder != 0 && holder != pid && alive(holder) {
		return fmt.Errorf("%w (pid %d)", ErrBusy, holder)
	}
	// compare and swap: a process that claimed it since loses us the race
	res, err := s.db.ExecContext(ctx, `UPDATE sop_runs SET pid = ? WHERE id = ? AND pid = ?`, pid, id, holder)
	if err != nil {
		return fmt.Errorf("claiming run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("%w: %s", ErrBusy, id)
	}
	return nil
}

// Release gives up pid's claim on the run.
func (s *Store) Release(ctx context.Context, id string, pid int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sop_runs SET pid = 0 WHERE id = ? AND pid = ?`, id, pid)
	return err
}

// State is a run's state as saved.
func (s *Store) State(ctx context.Context, id string) (string, error) {
	var state string
	err := s.db.QueryRowContext(ctx, `SELECT state FROM sop_runs WHERE id = ?`, id).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	return state, err
}

// Get loads a run with its steps.
func (s *Store) Get(ctx context.Context, id string) (*Run, error) {
	r := &Run{}
	var started, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT id, sop, source, state, next, error, started, updated FROM sop_runs WHERE id = ?`, id).
		Scan(&r.ID, &r.SOP, &r.Source, &r.State, &r.Next, &r.Error, &started, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	r.Started, r.Updated = time.UnixMilli(started).UTC(), time.UnixMilli(updated).UTC()
	rows, err := s.db.QueryContext(ctx, `SELECT id, status, action_id, error, output FROM sop_steps WHERE run = ? ORDER BY idx`, id)
	if err != nil {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var st StepState
		if err := rows.Scan(&st.ID, &st.Status, &st.ActionID, &st.Error, &st.Output); err != nil {
			return nil, fmt.Errorf("reading run %s: %w", id, err)
		}
		r.Steps = append(r.Steps, st)
	}
	return r, rows.Err()
}

// List returns the most recent runs (without their steps), newest first.
func (s *Store) List(ctx context.Context, limit int) ([]*Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, sop, state, next, error, started, updated FROM sop_runs ORDER BY started DESC, id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r := &Run{}
		var started, updated int64
		if err := rows.Scan(&r.ID, &r.SOP, &r.State, &r.Next, &r.Error, &started, &updated); err != nil {
			return nil, fmt.Errorf("listing runs: %w", err)
		}
		r.Started, r.Updated = time.UnixMilli(started).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Clear deletes every run and returns how many there were (claw memory
// clear: the runs keep steps' outputs, which are memory too).
func (s *Store) Clear(ctx context.Context) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sop_steps`); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sop_runs`)
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("clearing the runs: %w", err)
	}
	return int(n), nil
}

func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// cutOutput bounds an output to MaxOutput bytes at a UTF-8 boundary.
func cutOutput(s string) string { return textesc.Cut(s, MaxOutput, "\n[output cut]") }
