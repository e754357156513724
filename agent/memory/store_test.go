package memory

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// openTest opens a store in a fresh directory and closes it with the test.
func openTest(t *testing.T, opts ...Option) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "memory.sqlite"), opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fakeClock is a settable clock for WithClock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "claw")
	path := filepath.Join(dir, "memory.sqlite")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.NewConversation(context.Background(), "cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), c.ID, Message{Role: RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode = %v (%v), want 0700", st.Mode().Perm(), err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(name)
		if err != nil {
			t.Errorf("stat %s: %v", filepath.Base(name), err)
			continue
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", filepath.Base(name), st.Mode().Perm())
		}
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

func TestOpenTightensExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestOpenPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a?b#c%20 d")
	path := filepath.Join(dir, "memory.sqlite")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.NewConversation(context.Background(), "cli"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the literal path: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "memory.sqlite") {
			t.Errorf("unexpected file %q", e.Name())
		}
	}
}

func TestMigrateFromEmptyFileAndReopen(t *testing.T) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if v := userVersion(t, path); v != len(ms) {
			t.Fatalf("open %d: user_version = %d, want %d", i, v, len(ms))
		}
	}
}

// TestMigrateFromFirstSchema: a file written by the first schema gets the
// turn, metadata and error columns; its rows survive with the defaults and
// stay searchable.
func TestMigrateFromFirstSchema(t *testing.T) {
	ctx := context.Background()
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, ms[:1]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO conversations(id, channel, created_at, updated_at) VALUES ('0123456789abcdef', 'cli', 1, 1)`,
		`INSERT INTO messages(conversation_id, role, content, created_at) VALUES ('0123456789abcdef', 'user', 'remove the Aardvark build', 1)`,
		`INSERT INTO messages(conversation_id, role, content, tool_calls, created_at) VALUES ('0123456789abcdef', 'assistant', '',
			'[{"id":"c1","name":"shell","arguments":{"command":"rm -rf build"}}]', 1)`,
		`INSERT INTO messages(conversation_id, role, content, tool_call_id, tool_name, created_at) VALUES ('0123456789abcdef', 'tool',
			'error: denied', 'c1', 'shell', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if v := userVersion(t, path); v != 1 {
		t.Fatalf("user_version = %d before the upgrade, want 1", v)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := userVersion(t, path); v != len(ms) || len(ms) < 2 {
		t.Fatalf("user_version = %d after the upgrade, want %d (> 1)", v, len(ms))
	}
	_, msgs, err := s.Get(ctx, "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[0].Content != "remove the Aardvark build" || len(msgs[1].ToolCalls) != 1 || msgs[2].ToolCallID != "c1" {
		t.Fatalf("rows after the upgrade: %+v", msgs)
	}
	for _, m := range msgs {
		if m.TurnID != "" || m.IsError || m.Metadata != nil {
			t.Errorf("message %d: turn %q, error %v, metadata %v; want the defaults", m.ID, m.TurnID, m.IsError, m.Metadata)
		}
	}
	var metadata string
	var isError int
	if err := s.db.QueryRow(`SELECT metadata, is_error FROM messages WHERE role = 'tool'`).Scan(&metadata, &isError); err != nil {
		t.Fatal(err)
	}
	if metadata != "{}" || isError != 0 {
		t.Errorf("stored defaults: metadata %q, is_error %d; want {} and 0", metadata, isError)
	}
	if hits, err := s.Search(ctx, "aardvark", 5); err != nil || len(hits) != 1 {
		t.Errorf("search after the upgrade: %d hits, %v", len(hits), err)
	}
	// new rows carry the new columns
	out, err := s.Append(ctx, "0123456789abcdef", Message{Role: RoleTool, ToolCallID: "c1", ToolName: "shell",
		Content: "error: denied", TurnID: "t2", IsError: true, Metadata: map[string]string{"status": "denied"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, msgs, _ = s.Get(ctx, "0123456789abcdef"); !cmp.Equal(msgs[3], out[0]) {
		t.Errorf("new row read back as %+v, want %+v", msgs[3], out[0])
	}
}

func TestMigrateConcurrentOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	const n = 8
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			s, err := Open(path)
			if err == nil {
				_, err = s.NewConversation(context.Background(), "cli")
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs, err := s.Conversations(context.Background(), 0)
	if err != nil || len(cs) != n {
		t.Fatalf("conversations = %d (%v), want %d", len(cs), err, n)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(path)
	var se *SchemaError
	if !errors.As(err, &se) || se.Have != 999 {
		t.Fatalf("Open = %v, want a SchemaError with version 999", err)
	}
	if v := userVersion(t, path); v != 999 {
		t.Fatalf("user_version changed to %d", v)
	}
}

func TestLoadMigrations(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("CREATE TABLE t(x);")}
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []int
		wantErr string
	}{
		{name: "ordered", files: fstest.MapFS{"migrations/0002_b.sql": sql, "migrations/0001_a.sql": sql}, want: []int{1, 2}},
		{name: "none", files: fstest.MapFS{}, want: nil},
		{name: "gap", files: fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0003_c.sql": sql}, wantErr: "want version 2"},
		{name: "duplicate", files: fstest.MapFS{"migrations/0001_a.sql": sql, "migrations/0001_b.sql": sql}, wantErr: "want version 2"},
		{name: "starts at zero", files: fstest.MapFS{"migrations/0000_a.sql": sql}, wantErr: "bad version"},
		{name: "no name", files: fstest.MapFS{"migrations/0001.sql": sql}, wantErr: "NNNN_name.sql"},
		{name: "short number", files: fstest.MapFS{"migrations/1_a.sql": sql}, wantErr: "NNNN_name.sql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := loadMigrations(tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.Version)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("versions = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("versions = %v, want %v", got, tt.want)
				}
			}
		})
	}
	if _, err := loadMigrations(migrationFS); err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
}

func TestMigrateStepFailureRollsBack(t *testing.T) {
	ms := []migration{
		{Version: 1, Name: "0001_a.sql", SQL: "CREATE TABLE a(x);"},
		{Version: 2, Name: "0002_b.sql", SQL: "CREATE TABLE b(x); CREATE TABLE a(y);"}, // a exists: fails
	}
	path := filepath.Join(t.TempDir(), "m.sqlite")
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = migrate(context.Background(), db, ms)
	if err == nil || !strings.Contains(err.Error(), "0002_b.sql") {
		t.Fatalf("migrate = %v, want an error naming 0002_b.sql", err)
	}
	var v, b int
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'b'").Scan(&b)
	if v != 1 || b != 0 {
		t.Fatalf("after failed step: user_version = %d, table b present = %d; want 1, 0", v, b)
	}
}

func TestReopenPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, c.ID,
		Message{Role: RoleUser, Content: "remember the Aardvark adapter"},
		Message{Role: RoleAssistant, Content: "noted"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSummary(ctx, c.ID, "talked about adapters", 2); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, msgs, err := s.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "talked about adapters" || got.SummaryThrough != 2 || got.Messages != 2 || len(msgs) != 2 {
		t.Fatalf("after reopen: %+v, %d messages", got, len(msgs))
	}
	hits, err := s.Search(ctx, "aardvark", 5)
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after reopen: %d hits, %v", len(hits), err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	checks := map[string]error{}
	_, checks["NewConversation"] = s.NewConversation(ctx, "cli")
	_, checks["Append"] = s.Append(ctx, c.ID, Message{Role: RoleUser, Content: "x"})
	_, checks["Recent"] = s.Recent(ctx, c.ID, 5)
	_, checks["Conversations"] = s.Conversations(ctx, 0)
	_, checks["Latest"] = s.Latest(ctx, "cli")
	_, _, checks["Get"] = s.Get(ctx, c.ID)
	_, checks["Search"] = s.Search(ctx, "x", 5)
	checks["SetSummary"] = s.SetSummary(ctx, c.ID, "x", 0)
	checks["Clear"] = s.Clear(ctx)
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}
