package memory

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/clawsec/claw/internal/textesc"
)

// Role says who wrote a message.
type Role string

// The roles a message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // a tool result, answering the call ToolCallID
)

// ToolCall is one tool invocation an assistant message proposed.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one entry of a conversation.
type Message struct {
	ID             int64  `json:"id"` // set by the store, increasing
	ConversationID string `json:"conversation_id"`
	Role           Role   `json:"role"`
	Content        string `json:"content"`
	// ToolCalls are set on assistant messages only.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName are set on tool messages only.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// IsError marks a tool message that reports a failure or a denial.
	IsError bool `json:"is_error,omitempty"`
	// TurnID groups the messages of one receive→reply cycle: the
	// person's message, the assistant's tool calls and their results, and
	// the final answer. Empty on messages stored before turns existed.
	TurnID   string `json:"turn_id,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Metadata holds annotations of the message (a tool result's status
	// and action id, an answer's finish reason), stored as a JSON object.
	Metadata  map[string]string `json:"metadata,omitempty"`
	CreatedAt time.Time         `json:"created_at"` // set by the store
}

// NewTurnID returns a random turn id: 16 lowercase hex digits.
func NewTurnID() string { return newID() }

// storedRow is a message as it goes into its row: the tool calls and the
// metadata encoded.
type storedRow struct {
	m        Message
	calls    string
	metadata string
}

// prepare validates m and returns it as it will be stored: redacted,
// truncated, arguments and metadata re-encoded.
func (s *Store) prepare(m Message) (storedRow, error) {
	switch m.Role {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
	default:
		return storedRow{}, fmt.Errorf("role %q: %w", m.Role, ErrInvalid)
	}
	if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
		return storedRow{}, fmt.Errorf("tool calls on a %s message: %w", m.Role, ErrInvalid)
	}
	if (m.ToolCallID != "" || m.ToolName != "" || m.IsError) && m.Role != RoleTool {
		return storedRow{}, fmt.Errorf("tool call id, name or error flag on a %s message: %w", m.Role, ErrInvalid)
	}
	if len(m.ToolCalls) > MaxToolCalls {
		return storedRow{}, &LimitError{What: "tool calls", Max: MaxToolCalls, Got: len(m.ToolCalls)}
	}
	for _, f := range []struct{ what, v string }{
		{"tool call id", m.ToolCallID}, {"tool name", m.ToolName},
		{"provider", m.Provider}, {"model", m.Model}, {"turn id", m.TurnID},
	} {
		if err := checkName(f.what, f.v); err != nil {
			return storedRow{}, err
		}
	}
	m.Content = truncate(s.opt.redact(m.Content), MaxContentBytes)

	var calls string
	if len(m.ToolCalls) > 0 {
		out := make([]ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			if err := checkName("tool call id", c.ID); err != nil {
				return storedRow{}, err
			}
			if err := checkName("tool name", c.Name); err != nil {
				return storedRow{}, err
			}
			if len(c.Arguments) > MaxArgumentsBytes {
				return storedRow{}, &LimitError{What: "tool call arguments", Max: MaxArgumentsBytes, Got: len(c.Arguments)}
			}
			c.Arguments = redactJSON(s.opt.redact, s.opt.secretName, c.Arguments)
			out[i] = c
		}
		b, err := encodeJSON(out)
		if err != nil {
			return storedRow{}, fmt.Errorf("failed to encode tool calls: %w", err)
		}
		m.ToolCalls, calls = out, string(b)
	}

	metadata := "{}"
	if len(m.Metadata) > 0 {
		clean := func(v string) string { return toValidUTF8(s.opt.redact(v)) }
		md := make(map[string]string, len(m.Metadata))
		for k, v := range m.Metadata {
			md[clean(k)] = clean(v)
		}
		b, err := encodeJSON(md)
		if err != nil {
			return storedRow{}, fmt.Errorf("failed to encode metadata: %w", err)
		}
		if len(b) > MaxMetadataBytes {
			return storedRow{}, &LimitError{What: "metadata", Max: MaxMetadataBytes, Got: len(b)}
		}
		m.Metadata, metadata = md, string(b)
	}
	return storedRow{m: m, calls: calls, metadata: metadata}, nil
}

// redactJSON redacts every string (keys too) of a JSON value after
// decoding it, so a secret spelled with \u escapes is still seen. Malformed
// arguments (a model can write anything) are redacted as text and kept as
// a JSON string, so what is stored is always valid JSON and what was
// proposed is still visible.
func redactJSON(redact Redactor, secret func(string) bool, raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && dec.InputOffset() == int64(len(bytes.TrimRight(raw, " \t\r\n"))) {
		if b, err := encodeJSON(redactValue(redact, secret, "", v)); err == nil {
			return b
		}
	}
	b, _ := encodeJSON(truncate(redact(string(raw)), MaxArgumentsBytes))
	return b
}

// encodeJSON is json.Marshal without HTML escaping, so stored arguments
// read as the model wrote them ("a && b", not "a \u0026\u0026 b").
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// redactValue redacts every string and key of v, and replaces whole what
// lies under a secret field name (key is the name v is found under).
func redactValue(redact Redactor, secret func(string) bool, key string, v any) any {
	if secret != nil && v != nil && secret(key) {
		return SecretMarker
	}
	switch v := v.(type) {
	case string:
		return redact(v)
	case []any:
		if name, ok := pairName(v); ok && secret != nil && secret(name) {
			return []any{redact(name), SecretMarker}
		}
		for i := range v {
			v[i] = redactValue(redact, secret, "", v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[redact(k)] = redactValue(redact, secret, k, e)
		}
		return out
	default:
		return v
	}
}

// pairName is the name of a [name, value] pair (headers written as pairs).
func pairName(v []any) (string, bool) {
	if len(v) != 2 {
		return "", false
	}
	name, ok := v[0].(string)
	return name, ok
}

// truncate cuts s to at most max bytes on a rune boundary, marking the cut,
// and replaces invalid UTF-8.
func truncate(s string, max int) string {
	if !utf8.ValidString(s) {
		s = toValidUTF8(s)
	}
	return textesc.Cut(s, max, truncMarker)
}

func toValidUTF8(s string) string {
	var b []byte
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[:n]...)
		}
		s = s[n:]
	}
	return string(b)
}

// Append adds msgs to conversation conv (an exact id) in one transaction,
// in order, and returns them as stored: with ids and times set, content
// redacted and truncated. Either all are stored or none.
func (s *Store) Append(ctx context.Context, conv string, msgs ...Message) ([]Message, error) {
	rows := make([]storedRow, len(msgs))
	for i, m := range msgs {
		r, err := s.prepare(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		rows[i] = r
	}
	out := make([]Message, len(msgs))
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := s.nowMillis()
		res, err := tx.ExecContext(ctx, `UPDATE conversations SET updated_at = max(updated_at, ?) WHERE id = ?`, now, conv)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("conversation %q: %w", conv, ErrNotFound)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages
			(conversation_id, turn_id, role, content, tool_calls, tool_call_id, tool_name, is_error,
			 provider, model, metadata, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, r := range rows {
			m := r.m
			res, err := stmt.ExecContext(ctx, conv, m.TurnID, string(m.Role), m.Content, r.calls,
				m.ToolCallID, m.ToolName, m.IsError, m.Provider, m.Model, r.metadata, now)
			if err != nil {
				return err
			}
			if m.ID, err = res.LastInsertId(); err != nil {
				return err
			}
			m.ConversationID, m.CreatedAt = conv, fromMillis(now)
			out[i] = m
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to append to conversation: %w", err)
	}
	return out, nil
}

// Recent returns up to n of the newest messages of conversation conv (an
// exact id), oldest first. So that the result can be replayed to a model,
// it never starts with a tool result whose call was cut off: such leading
// tool messages are dropped, and fewer than n may be returned. n is capped
// at [MaxRecent]; n <= 0 returns none.
func (s *Store) Recent(ctx context.Context, conv string, n int) ([]Message, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if n <= 0 {
		return nil, nil
	}
	n = min(n, MaxRecent)
	rows, err := s.db.QueryContext(ctx, `SELECT * FROM (
		SELECT `+messageColumns+` FROM messages m WHERE m.conversation_id = ? ORDER BY m.id DESC LIMIT ?
	) ORDER BY id`, conv, n)
	if err != nil {
		return nil, fmt.Errorf("failed to read recent messages: %w", err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("failed to read recent messages: %w", err)
	}
	for len(msgs) > 0 && msgs[0].Role == RoleTool {
		msgs = msgs[1:]
	}
	return msgs, nil
}

const messageColumns = `m.id, m.conversation_id, m.turn_id, m.role, m.content, m.tool_calls, m.tool_call_id,
	m.tool_name, m.is_error, m.provider, m.model, m.metadata, m.created_at`

// messageRow holds one row of messageColumns as scanned.
type messageRow struct {
	m        Message
	role     string
	calls    string
	metadata string
	created  int64
}

func (r *messageRow) dest() []any {
	return []any{&r.m.ID, &r.m.ConversationID, &r.m.TurnID, &r.role, &r.m.Content, &r.calls, &r.m.ToolCallID,
		&r.m.ToolName, &r.m.IsError, &r.m.Provider, &r.m.Model, &r.metadata, &r.created}
}

func (r *messageRow) message() (Message, error) {
	m := r.m
	m.Role, m.CreatedAt = Role(r.role), fromMillis(r.created)
	if r.calls != "" {
		if err := json.Unmarshal([]byte(r.calls), &m.ToolCalls); err != nil {
			return m, fmt.Errorf("message %d: malformed tool calls: %w", m.ID, err)
		}
	}
	if r.metadata != "" && r.metadata != "{}" {
		if err := json.Unmarshal([]byte(r.metadata), &m.Metadata); err != nil {
			return m, fmt.Errorf("message %d: malformed metadata: %w", m.ID, err)
		}
	}
	return m, nil
}

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var r messageRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, err
		}
		m, err := r.message()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
