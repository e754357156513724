package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/internal/redact"
)

// ErrNoMemory means the memory file does not exist yet: nothing to list.
var ErrNoMemory = errors.New("no memory file yet")

// OpenMemory opens the memory database at path with the redactor red.
// With mustExist, a missing file is ErrNoMemory rather than created.
func OpenMemory(path string, red func(string) string, mustExist bool) (*memory.Store, error) {
	if mustExist {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoMemory
		}
	}
	st, err := memory.Open(path, memory.WithRedactor(red), memory.WithSecretFields(redact.SecretField))
	if err != nil {
		return nil, fmt.Errorf("failed to open memory %s: %w", path, err)
	}
	return st, nil
}

// ConversationRow is a conversation as claw memory list shows it.
type ConversationRow struct {
	memory.Conversation
	Title string `json:"title,omitempty"`
}

// MemoryConversations lists at most limit conversations (0: all), most
// recent first, redacted by red, each with its title.
func MemoryConversations(ctx context.Context, st *memory.Store, red func(string) string, limit int) ([]ConversationRow, error) {
	convs, err := st.Conversations(ctx, limit)
	if err != nil {
		return nil, err
	}
	rows := []ConversationRow{}
	for _, cv := range convs {
		cv.Summary = red(cv.Summary)
		rows = append(rows, ConversationRow{Conversation: cv, Title: conversationTitle(ctx, st, red, cv.ID)})
	}
	return rows, nil
}

// conversationTitle is the redacted start of the first user message of a
// conversation, or "".
func conversationTitle(ctx context.Context, st *memory.Store, red func(string) string, id string) string {
	_, msgs, err := st.Get(ctx, id)
	if err != nil {
		return ""
	}
	for _, m := range msgs {
		if m.Role == memory.RoleUser {
			return red(m.Content)
		}
	}
	return ""
}

// MemorySearch searches every stored message for query, best match first,
// redacted by red.
func MemorySearch(ctx context.Context, st *memory.Store, red func(string) string, query string, limit int) ([]memory.Hit, error) {
	found, err := st.Search(ctx, query, limit)
	if err != nil {
		return nil, err
	}
	hits := []memory.Hit{}
	for _, h := range found {
		h.Message.Content = red(h.Message.Content)
		h.Snippet = red(h.Snippet)
		hits = append(hits, h)
	}
	return hits, nil
}

// MemoryConversation is the conversation id (or an unambiguous prefix)
// with its messages, oldest first, redacted by red.
func MemoryConversation(ctx context.Context, st *memory.Store, red func(string) string, id string) (memory.Conversation, []memory.Message, error) {
	conv, msgs, err := st.Get(ctx, id)
	if err != nil {
		return conv, nil, err
	}
	conv.Summary = red(conv.Summary)
	for i := range msgs {
		msgs[i].Content = red(msgs[i].Content)
		for j := range msgs[i].ToolCalls {
			msgs[i].ToolCalls[j].Arguments = []byte(red(string(msgs[i].ToolCalls[j].Arguments)))
		}
	}
	if msgs == nil {
		msgs = []memory.Message{}
	}
	return conv, msgs, nil
}

// ClearMemory deletes every conversation of st, vacuuming the file, and
// says how many there were.
func ClearMemory(ctx context.Context, st *memory.Store) (int, error) {
	convs, err := st.Conversations(ctx, 0)
	if err != nil {
		return 0, err
	}
	if err := st.Clear(ctx); err != nil { // and vacuums what the SOP runs held
		return 0, err
	}
	return len(convs), nil
}
