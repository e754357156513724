package memory

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// MinIDPrefix is the shortest id prefix [Store.Get] resolves.
const MinIDPrefix = 6

// Conversation is one thread of messages on a channel.
type Conversation struct {
	ID      string `json:"id"`
	Channel string `json:"channel"`
	// Summary is the loop's compacted account of the older messages;
	// SummaryThrough is the id of the last message it covers (0: none).
	Summary        string    `json:"summary,omitempty"`
	SummaryThrough int64     `json:"summary_through,omitempty"`
	Messages       int       `json:"messages"` // how many messages it holds
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// newID returns a random conversation id: 16 lowercase hex digits.
func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func checkName(what, v string) error {
	if len(v) > MaxNameBytes {
		return &LimitError{What: what, Max: MaxNameBytes, Got: len(v)}
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not valid UTF-8: %w", what, ErrInvalid)
	}
	return nil
}

// NewConversation starts a conversation on channel ("cli", "discord:…").
func (s *Store) NewConversation(ctx context.Context, channel string) (Conversation, error) {
	if err := checkName("channel", channel); err != nil {
		return Conversation{}, err
	}
	now := s.nowMillis()
	c := Conversation{ID: newID(), Channel: channel, CreatedAt: fromMillis(now), UpdatedAt: fromMillis(now)}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO conversations(id, channel, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			c.ID, c.Channel, now, now)
		return err
	})
	if err != nil {
		return Conversation{}, fmt.Errorf("failed to create conversation: %w", err)
	}
	return c, nil
}

const conversationColumns = `c.id, c.channel, c.summary, c.summary_through, c.created_at, c.updated_at,
	(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)`

func scanConversation(sc interface{ Scan(...any) error }) (Conversation, error) {
	var c Conversation
	var created, updated int64
	err := sc.Scan(&c.ID, &c.Channel, &c.Summary, &c.SummaryThrough, &created, &updated, &c.Messages)
	c.CreatedAt, c.UpdatedAt = fromMillis(created), fromMillis(updated)
	return c, err
}

// Conversations lists conversations, most recently updated first; limit
// <= 0 lists all.
func (s *Store) Conversations(ctx context.Context, limit int) ([]Conversation, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+conversationColumns+` FROM conversations c ORDER BY c.updated_at DESC, c.rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("failed to list conversations: %w", err)
	}
	defer rows.Close()
	var out []Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, fmt.Errorf("failed to list conversations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failed to list conversations: %w", err)
	}
	return out, nil
}

// Latest returns the most recently updated conversation on channel, for a
// restarted REPL to resume; [ErrNotFound] if there is none.
func (s *Store) Latest(ctx context.Context, channel string) (Conversation, error) {
	if s.isClosed() {
		return Conversation{}, ErrClosed
	}
	row := s.db.QueryRowContext(ctx,
		`SELECT `+conversationColumns+` FROM conversations c WHERE c.channel = ?
		 ORDER BY c.updated_at DESC, c.rowid DESC LIMIT 1`, channel)
	c, err := scanConversation(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, fmt.Errorf("no conversation on channel %q: %w", channel, ErrNotFound)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("failed to find latest conversation: %w", err)
	}
	return c, nil
}

// Get returns the conversation whose id is id, or starts with id (at least
// [MinIDPrefix] characters), and all its messages in order.
func (s *Store) Get(ctx context.Context, id string) (Conversation, []Message, error) {
	if s.isClosed() {
		return Conversation{}, nil, ErrClosed
	}
	c, err := s.resolve(ctx, id)
	if err != nil {
		return Conversation{}, nil, err
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+messageColumns+` FROM messages m WHERE m.conversation_id = ? ORDER BY m.id`, c.ID)
	if err != nil {
		return Conversation{}, nil, fmt.Errorf("failed to read conversation %s: %w", c.ID, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return Conversation{}, nil, fmt.Errorf("failed to read conversation %s: %w", c.ID, err)
	}
	return c, msgs, nil
}

func (s *Store) resolve(ctx context.Context, id string) (Conversation, error) {
	if id == "" || len(id) > MaxNameBytes {
		return Conversation{}, fmt.Errorf("conversation %q: %w", id, ErrNotFound)
	}
	row := s.db.QueryRowContext(ctx, `SELECT `+conversationColumns+` FROM conversations c WHERE c.id = ?`, id)
	c, err := scanConversation(row)
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Conversation{}, fmt.Errorf("failed to find conversation: %w", err)
	}
	if len(id) < MinIDPrefix {
		return Conversation{}, fmt.Errorf("conversation %q: %w", id, ErrNotFound)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+conversationColumns+` FROM conversations c WHERE substr(c.id, 1, length(?1)) = ?1 LIMIT 2`, id)
	if err != nil {
		return Conversation{}, fmt.Errorf("failed to find conversation: %w", err)
	}
	defer rows.Close()
	var found []Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return Conversation{}, fmt.Errorf("failed to find conversation: %w", err)
		}
		found = append(found, c)
	}
	if err := rows.Err(); err != nil {
		return Conversation{}, fmt.Errorf("failed to find conversation: %w", err)
	}
	switch len(found) {
	case 0:
		return Conversation{}, fmt.Errorf("conversation %q: %w", id, ErrNotFound)
	case 1:
		return found[0], nil
	default:
		return Conversation{}, fmt.Errorf("conversation %q: %w", id, ErrAmbiguous)
	}
}

// SetSummary replaces the summary of conversation id (an exact id), and
// records that it covers the messages up to and including the one with id
// through. The summary is redacted, then truncated to [MaxSummaryBytes].
func (s *Store) SetSummary(ctx context.Context, id, summary string, through int64) error {
	if through < 0 {
		return fmt.Errorf("summary through message %d: %w", through, ErrInvalid)
	}
	summary = truncate(s.opt.redact(summary), MaxSummaryBytes)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE conversations SET summary = ?, summary_through = ?, updated_at = max(updated_at, ?) WHERE id = ?`,
			summary, through, s.nowMillis(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("conversation %q: %w", id, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to set summary: %w", err)
	}
	return nil
}

// Clear deletes every conversation and message, then rebuilds the search
// index and vacuums the file so the deleted text is gone from disk, not
// just unlinked.
func (s *Store) Clear(ctx context.Context) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM messages`,
			`DELETE FROM conversations`,
			`INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to clear memory: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	// VACUUM cannot run in a transaction; the checkpoint then copies the
	// vacuumed pages home and truncates the WAL that held the old ones.
	if _, err := s.db.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("failed to vacuum memory: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("failed to checkpoint memory: %w", err)
	}
	return nil
}
