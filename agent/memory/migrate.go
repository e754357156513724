package memory

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one forward-only schema step. Version is the number in its
// file name; after the step runs, PRAGMA user_version equals Version.
type migration struct {
	Version int
	Name    string
	SQL     string
}

// loadMigrations reads migrations/NNNN_name.sql from fsys. Versions must
// start at 1 and have no gaps, so a missing or duplicated file is caught
// by the tests rather than by a user's database.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, rest, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), "_")
		if !ok || len(num) != 4 || rest == "" {
			return nil, fmt.Errorf("migration %q: name is not NNNN_name.sql", base)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %q: bad version number", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %q: want version %d (versions start at 1 without gaps)", m.Name, i+1)
		}
	}
	return ms, nil
}

// migrate brings db up to the newest migration, one transaction per step.
// The version is read inside each step's transaction (taken IMMEDIATE by
// the DSN), so two processes opening the same new file at once run every
// step exactly once. A database newer than this code is refused.
//
// SQLite can answer SQLITE_BUSY at once, without its busy handler, while
// another connection switches a new file to WAL; such a step is tried
// again, for at most migrateBusyFor.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	latest := len(ms)
	deadline := time.Now().Add(migrateBusyFor)
	for wait := 5 * time.Millisecond; ; {
		done, err := migrateStep(ctx, db, ms, latest)
		if err != nil && isBusy(err) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(wait):
			}
			wait = min(2*wait, 200*time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// migrateBusyFor bounds the retries of a migration step SQLite refused
// as busy.
const migrateBusyFor = 10 * time.Second

// isBusy reports whether err is SQLite's SQLITE_BUSY (5) or SQLITE_LOCKED
// (6), in any extended form.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	c := coded.Code() & 0xff
	return c == 5 || c == 6
}

func migrateStep(ctx context.Context, db *sql.DB, ms []migration, latest int) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("failed to begin migration: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("failed to read schema version: %w", err)
	}
	switch {
	case v > latest:
		return false, &SchemaError{Have: v, Know: latest}
	case v == latest:
		return true, tx.Commit()
	}
	m := ms[v] // version v+1
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("migration %s: %w", m.Name, err)
	}
	// PRAGMA takes no parameters; m.Version is an int from a file name.
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.Version)); err != nil {
		return false, fmt.Errorf("migration %s: failed to set version: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %s: failed to commit: %w", m.Name, err)
	}
	return false, nil
}
