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

// The bounds of the memory's queries, for the flags that ask them.
const (
	MaxMemoryResults = memory.MaxSearchResults // matches of one search
	MemoryIDPrefix   = memory.MinIDPrefix      // the shortest id prefix a conversation is found by
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

// openMemoryOf loads the config with load and opens its memory database,
// with the redactor applied to everything read from it: every known
// secret form, and the values of the configured providers' and channels'
// key variables. A missing file is ErrNoMemory, not created.
func openMemoryOf(load func() (*Env, error)) (*memory.Store, func(string) string, error) {
	e, err := load()
	if err != nil {
		return nil, nil, err
	}
	red := KeyRedactor(e)
	st, err := OpenMemory(e.Config.Agent.MemoryDB, red, true)
	if errors.Is(err, ErrNoMemory) {
		return nil, red, err
	}
	if err != nil {
		return nil, nil, WithCode(ExitError, err)
	}
	return st, red, nil
}

// ConversationRow is a conversation as claw memory list shows it.
type ConversationRow struct {
	memory.Conversation
	Title string `json:"title,omitempty"`
}

// MemoryConversations lists at most limit conversations (0: all) of the
// memory of the config load gives, most recent first, redacted, each with
// its title; none when there is no memory file yet.
func MemoryConversations(ctx context.Context, load func() (*Env, error), limit int) ([]ConversationRow, error) {
	rows := []ConversationRow{}
	st, red, err := openMemoryOf(load)
	if errors.Is(err, ErrNoMemory) {
		return rows, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	convs, err := st.Conversations(ctx, limit)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
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

// MemoryHits are the matches of a search of the memory for Query.
type MemoryHits struct {
	Query string       `json:"query"`
	Hits  []memory.Hit `json:"hits"`
}

// MemorySearch searches every message stored in the memory of the config
// load gives for query, best match first, redacted; nothing when there is
// no memory file yet. A query over the store's limits is a usage error.
func MemorySearch(ctx context.Context, load func() (*Env, error), query string, limit int) (MemoryHits, error) {
	res := MemoryHits{Query: query, Hits: []memory.Hit{}}
	st, red, err := openMemoryOf(load)
	if errors.Is(err, ErrNoMemory) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	defer st.Close()
	found, err := st.Search(ctx, query, limit)
	var le *memory.LimitError
	if errors.As(err, &le) {
		return res, WithCode(ExitUsage, err, "use fewer or shorter words")
	}
	if err != nil {
		return res, WithCode(ExitError, err)
	}
	for _, h := range found {
		h.Message.Content = red(h.Message.Content)
		h.Snippet = red(h.Snippet)
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// Conversation is a conversation of the memory with its messages, oldest
// first (Messages; the count is Conversation.Messages).
type Conversation struct {
	memory.Conversation
	Messages []memory.Message `json:"messages"`
}

// MemoryConversation is the conversation id (or an unambiguous prefix) of
// the memory of the config load gives, with its messages, oldest first,
// redacted.
func MemoryConversation(ctx context.Context, load func() (*Env, error), id string) (Conversation, error) {
	st, red, err := openMemoryOf(load)
	if errors.Is(err, ErrNoMemory) {
		return Conversation{}, WithCode(ExitError, fmt.Errorf("conversation %q: %w", id, memory.ErrNotFound), "see 'claw memory list'")
	}
	if err != nil {
		return Conversation{}, err
	}
	defer st.Close()
	conv, msgs, err := st.Get(ctx, id)
	if errors.Is(err, memory.ErrNotFound) || errors.Is(err, memory.ErrAmbiguous) {
		return Conversation{}, WithCode(ExitError, err, "see 'claw memory list'")
	}
	if err != nil {
		return Conversation{}, WithCode(ExitError, err)
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
	return Conversation{Conversation: conv, Messages: msgs}, nil
}

// ClearMemory deletes every conversation of the memory of the config
// load gives, vacuuming the file, and says how many there were and which
// file it was. Without a memory file it is ErrNoMemory.
func ClearMemory(ctx context.Context, load func() (*Env, error)) (n int, path string, err error) {
	st, _, err := openMemoryOf(load)
	if err != nil {
		return 0, "", err
	}
	defer st.Close()
	convs, err := st.Conversations(ctx, 0)
	if err != nil {
		return 0, "", WithCode(ExitError, err)
	}
	if err := st.Clear(ctx); err != nil { // and vacuums what the SOP runs held
		return 0, "", WithCode(ExitError, err)
	}
	return len(convs), st.Path(), nil
}
