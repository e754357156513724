package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAppendRoundTrip(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := openTest(t, WithClock(clock.now))
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	in := []Message{
		{Role: RoleSystem, Content: "you are careful"},
		{Role: RoleUser, Content: "list my notes", TurnID: "t1"},
		{Role: RoleAssistant, Content: "", Provider: "mock", Model: "m1", TurnID: "t1", ToolCalls: []ToolCall{
			{ID: "call_1", Name: "file_list", Arguments: json.RawMessage(`{"path":"notes"}`)},
			{ID: "call_2", Name: "shell", Arguments: nil},
		}},
		{Role: RoleTool, ToolCallID: "call_1", ToolName: "file_list", Content: "a.txt\nb.txt", TurnID: "t1",
			Metadata: map[string]string{"status": "ok", "action_id": "a1"}},
		{Role: RoleTool, ToolCallID: "call_2", ToolName: "shell", Content: "error: denied", TurnID: "t1", IsError: true,
			Metadata: map[string]string{"status": "denied"}},
		{Role: RoleAssistant, Content: "two notes; the shell was denied", Provider: "mock", Model: "m1", TurnID: "t1",
			Metadata: map[string]string{"finish_reason": "stop"}},
	}
	stored, err := s.Append(ctx, c.ID, in...)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(stored); i++ {
		if stored[i].ID <= stored[i-1].ID {
			t.Fatalf("ids not increasing: %d then %d", stored[i-1].ID, stored[i].ID)
		}
	}
	if got := string(stored[2].ToolCalls[1].Arguments); got != "{}" {
		t.Errorf("absent arguments stored as %q, want {}", got)
	}
	got, msgs, err := s.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, msgs); diff != "" {
		t.Errorf("Get differs from Append's result (-append +get):\n%s", diff)
	}
	if got.Messages != len(in) || !got.UpdatedAt.Equal(clock.now()) {
		t.Errorf("conversation = %+v", got)
	}
	for i, m := range msgs {
		if m.Role != in[i].Role || m.Content != in[i].Content || m.ConversationID != c.ID ||
			m.TurnID != in[i].TurnID || m.IsError != in[i].IsError || !cmp.Equal(m.Metadata, in[i].Metadata) {
			t.Errorf("message %d = %+v, want %+v", i, m, in[i])
		}
	}
}

func TestAppendRefuses(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	tooManyCalls := make([]ToolCall, MaxToolCalls+1)
	for i := range tooManyCalls {
		tooManyCalls[i] = ToolCall{ID: fmt.Sprint(i), Name: "time"}
	}
	tests := []struct {
		name    string
		conv    string
		msg     Message
		wantErr error
	}{
		{name: "unknown role", msg: Message{Role: "root", Content: "x"}, wantErr: ErrInvalid},
		{name: "empty role", msg: Message{Content: "x"}, wantErr: ErrInvalid},
		{name: "tool calls on a user message", msg: Message{Role: RoleUser, ToolCalls: []ToolCall{{ID: "1", Name: "shell"}}}, wantErr: ErrInvalid},
		{name: "tool call id on an assistant message", msg: Message{Role: RoleAssistant, ToolCallID: "1"}, wantErr: ErrInvalid},
		{name: "tool name on a user message", msg: Message{Role: RoleUser, ToolName: "shell"}, wantErr: ErrInvalid},
		{name: "error flag on an assistant message", msg: Message{Role: RoleAssistant, IsError: true}, wantErr: ErrInvalid},
		{name: "turn id too long", msg: Message{Role: RoleUser, TurnID: strings.Repeat("t", MaxNameBytes+1)}, wantErr: ErrTooLarge},
		{name: "metadata too large", msg: Message{Role: RoleUser, Metadata: map[string]string{"k": strings.Repeat("v", MaxMetadataBytes)}}, wantErr: ErrTooLarge},
		{name: "too many tool calls", msg: Message{Role: RoleAssistant, ToolCalls: tooManyCalls}, wantErr: ErrTooLarge},
		{name: "arguments too large", msg: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "1", Name: "file_write", Arguments: json.RawMessage(`"` + strings.Repeat("a", MaxArgumentsBytes) + `"`)}}}, wantErr: ErrTooLarge},
		{name: "tool name too long", msg: Message{Role: RoleTool, ToolName: strings.Repeat("n", MaxNameBytes+1)}, wantErr: ErrTooLarge},
		{name: "model not utf-8", msg: Message{Role: RoleAssistant, Model: "\xff"}, wantErr: ErrInvalid},
		{name: "unknown conversation", conv: "0123456789abcdef", msg: Message{Role: RoleUser, Content: "x"}, wantErr: ErrNotFound},
		{name: "empty conversation id", conv: "-", msg: Message{Role: RoleUser, Content: "x"}, wantErr: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv := c.ID
			if tt.conv == "-" {
				conv = ""
			} else if tt.conv != "" {
				conv = tt.conv
			}
			_, err := s.Append(ctx, conv, tt.msg)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Append = %v, want %v", err, tt.wantErr)
			}
		})
	}
	// A refused message leaves the batch unstored.
	_, err = s.Append(ctx, c.ID, Message{Role: RoleUser, Content: "first"}, Message{Role: "bad"})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("batch with a bad message = %v", err)
	}
	if _, msgs, _ := s.Get(ctx, c.ID); len(msgs) != 0 {
		t.Fatalf("a refused batch stored %d messages", len(msgs))
	}
}

func TestAppendBounds(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("é", MaxContentBytes) // 2 bytes each: twice the cap
	tests := []struct {
		name  string
		msg   Message
		check func(t *testing.T, m Message)
	}{
		{name: "content truncated on a rune boundary", msg: Message{Role: RoleTool, Content: big}, check: func(t *testing.T, m Message) {
			if len(m.Content) > MaxContentBytes || !strings.HasSuffix(m.Content, truncMarker) {
				t.Errorf("content is %d bytes, ends %q", len(m.Content), m.Content[len(m.Content)-20:])
			}
			if !strings.HasPrefix(m.Content, "éé") || strings.ContainsRune(m.Content, '\uFFFD') {
				t.Error("content was cut inside a rune")
			}
		}},
		{name: "invalid utf-8 replaced", msg: Message{Role: RoleUser, Content: "a\xffb"}, check: func(t *testing.T, m Message) {
			if m.Content != "a\uFFFDb" {
				t.Errorf("content = %q", m.Content)
			}
		}},
		{name: "malformed arguments kept as a string", msg: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "1", Name: "shell", Arguments: json.RawMessage(`{"command": "ls && <x>`)}}}, check: func(t *testing.T, m Message) {
			var s string
			if err := json.Unmarshal(m.ToolCalls[0].Arguments, &s); err != nil || s != `{"command": "ls && <x>` || bytes.Contains(m.ToolCalls[0].Arguments, []byte(`\u00`)) {
				t.Errorf("arguments = %s (%v)", m.ToolCalls[0].Arguments, err)
			}
		}},
		{name: "trailing data makes arguments malformed", msg: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "1", Name: "shell", Arguments: json.RawMessage(`{} {}`)}}}, check: func(t *testing.T, m Message) {
			if string(m.ToolCalls[0].Arguments) != `"{} {}"` {
				t.Errorf("arguments = %s", m.ToolCalls[0].Arguments)
			}
		}},
		{name: "arguments keep html characters", msg: Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "1", Name: "shell", Arguments: json.RawMessage(` {"command":"a && b > c"} `)}}}, check: func(t *testing.T, m Message) {
			if string(m.ToolCalls[0].Arguments) != `{"command":"a && b > c"}` {
				t.Errorf("arguments = %s", m.ToolCalls[0].Arguments)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.Append(ctx, c.ID, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, out[0])
			_, msgs, err := s.Get(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(out[0], msgs[len(msgs)-1]); diff != "" {
				t.Errorf("stored differs (-append +get):\n%s", diff)
			}
		})
	}
}

func TestRecent(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	// u0 a1(call) t2 t3 a4 u5
	if _, err := s.Append(ctx, c.ID,
		Message{Role: RoleUser, Content: "u0"},
		Message{Role: RoleAssistant, Content: "a1", ToolCalls: []ToolCall{{ID: "x", Name: "time"}, {ID: "y", Name: "time"}}},
		Message{Role: RoleTool, ToolCallID: "x", ToolName: "time", Content: "t2"},
		Message{Role: RoleTool, ToolCallID: "y", ToolName: "time", Content: "t3"},
		Message{Role: RoleAssistant, Content: "a4"},
		Message{Role: RoleUser, Content: "u5"},
	); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, other.ID, Message{Role: RoleUser, Content: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		n    int
		want string
	}{
		{name: "all", n: 100, want: "u0 a1 t2 t3 a4 u5"},
		{name: "exact", n: 6, want: "u0 a1 t2 t3 a4 u5"},
		{name: "last two", n: 2, want: "a4 u5"},
		{name: "orphaned tool results dropped", n: 4, want: "a4 u5"},
		{name: "one orphan dropped", n: 3, want: "a4 u5"},
		{name: "call kept with its results", n: 5, want: "a1 t2 t3 a4 u5"},
		{name: "zero", n: 0, want: ""},
		{name: "negative", n: -1, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := s.Recent(ctx, c.ID, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Content)
			}
			if strings.Join(got, " ") != tt.want {
				t.Fatalf("Recent(%d) = %q, want %q", tt.n, strings.Join(got, " "), tt.want)
			}
		})
	}
	if msgs, err := s.Recent(ctx, "nope", 5); err != nil || len(msgs) != 0 {
		t.Fatalf("Recent of an unknown conversation = %v, %v", msgs, err)
	}
}

func TestConversationsAndLatest(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := openTest(t, WithClock(clock.now))
	if _, err := s.Latest(ctx, "cli"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Latest on an empty store = %v", err)
	}
	a, _ := s.NewConversation(ctx, "cli")
	clock.advance(time.Minute)
	b, _ := s.NewConversation(ctx, "cli")
	clock.advance(time.Minute)
	d, _ := s.NewConversation(ctx, "discord:42")
	clock.advance(time.Minute)
	if _, err := s.Append(ctx, a.ID, Message{Role: RoleUser, Content: "back to a"}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Conversations(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range cs {
		order = append(order, c.ID)
	}
	if want := []string{a.ID, d.ID, b.ID}; !cmp.Equal(order, want) {
		t.Fatalf("order = %v, want %v", order, want)
	}
	if cs[0].Messages != 1 || cs[1].Messages != 0 || !cs[0].UpdatedAt.After(cs[0].CreatedAt) {
		t.Errorf("conversations = %+v", cs)
	}
	if cs, _ := s.Conversations(ctx, 2); len(cs) != 2 {
		t.Errorf("limit 2 gave %d", len(cs))
	}
	if got, err := s.Latest(ctx, "cli"); err != nil || got.ID != a.ID {
		t.Errorf("Latest(cli) = %v, %v; want %s", got.ID, err, a.ID)
	}
	if got, err := s.Latest(ctx, "discord:42"); err != nil || got.ID != d.ID {
		t.Errorf("Latest(discord:42) = %v, %v; want %s", got.ID, err, d.ID)
	}
	if _, err := s.NewConversation(ctx, strings.Repeat("c", MaxNameBytes+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("long channel = %v", err)
	}
}

func TestGetByPrefix(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, id := range []string{"abcdef0000000001", "abcdef0000000002", "123456ffffffffff"} {
		if _, err := s.db.Exec(`INSERT INTO conversations(id, channel, created_at, updated_at) VALUES (?, 'cli', 0, 0)`, id); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		id      string
		want    string
		wantErr error
	}{
		{name: "exact", id: "abcdef0000000001", want: "abcdef0000000001"},
		{name: "unique prefix", id: "123456", want: "123456ffffffffff"},
		{name: "ambiguous prefix", id: "abcdef", wantErr: ErrAmbiguous},
		{name: "longer unique prefix", id: "abcdef00000000020", wantErr: ErrNotFound},
		{name: "prefix too short", id: "12345", wantErr: ErrNotFound},
		{name: "empty", id: "", wantErr: ErrNotFound},
		{name: "like wildcard is literal", id: "abcde%", wantErr: ErrNotFound},
		{name: "no match", id: "ffffff", wantErr: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := s.Get(ctx, tt.id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Get(%q) = %v, want %v", tt.id, err, tt.wantErr)
				}
				return
			}
			if err != nil || c.ID != tt.want {
				t.Fatalf("Get(%q) = %q, %v; want %q", tt.id, c.ID, err, tt.want)
			}
		})
	}
}

func TestSetSummary(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	c, _ := s.NewConversation(ctx, "cli")
	if err := s.SetSummary(ctx, c.ID, strings.Repeat("s", MaxSummaryBytes*2), 7); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Summary) > MaxSummaryBytes || !strings.HasSuffix(got.Summary, truncMarker) || got.SummaryThrough != 7 {
		t.Errorf("summary of %d bytes, through %d", len(got.Summary), got.SummaryThrough)
	}
	if err := s.SetSummary(ctx, c.ID, "x", -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetSummary through -1 = %v", err)
	}
	if err := s.SetSummary(ctx, "0000000000000000", "x", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetSummary on an unknown conversation = %v", err)
	}
}

// plantedKey is a fake provider key; it must appear nowhere on disk.
const plantedKey = "sk-test-PLANTED0123456789abcdefKEY"

func redactPlanted(s string) string { return strings.ReplaceAll(s, plantedKey, "[REDACTED]") }

// fileBytes returns the database file and its WAL and shared-memory files.
func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	var all []byte
	for _, name := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		b, err := os.ReadFile(name)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

func TestRedactorKeepsPlantedKeyOffDisk(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	s, err := Open(path, WithRedactor(redactPlanted))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.NewConversation(ctx, "cli")
	escaped := strings.Replace(plantedKey, "s", `\u0073`, 1) // the same key, JSON-escaped
	out, err := s.Append(ctx, c.ID,
		Message{Role: RoleUser, Content: "my key is " + plantedKey + ", keep it safe"},
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "1", Name: "http", Arguments: json.RawMessage(`{"headers":{"Authorization":"Bearer ` + escaped + `"}}`)},
			{ID: "2", Name: "shell", Arguments: json.RawMessage(`{"command":"echo ` + plantedKey)}, // malformed
			{ID: "3", Name: "shell", Arguments: json.RawMessage(`{"` + plantedKey + `":1}`)},       // in a key
		}},
		Message{Role: RoleTool, ToolCallID: "1", ToolName: "http", Content: "echoed " + plantedKey,
			Metadata: map[string]string{"header": plantedKey, plantedKey: "as a key"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetSummary(ctx, c.ID, "the user shared "+plantedKey, out[2].ID); err != nil {
		t.Fatal(err)
	}
	for _, m := range out {
		b, _ := json.Marshal(m)
		if bytes.Contains(b, []byte(plantedKey)) || bytes.Contains(b, []byte("PLANTED")) {
			t.Errorf("returned message holds the key: %s", b)
		}
	}
	if hits, err := s.Search(ctx, plantedKey, 10); err != nil || len(hits) != 0 {
		t.Errorf("search for the key: %d hits, %v", len(hits), err)
	}
	if hits, err := s.Search(ctx, "REDACTED", 10); err != nil || len(hits) != 2 {
		t.Errorf("search for the marker: %d hits, %v; want 2", len(hits), err)
	}
	if b := fileBytes(t, path); bytes.Contains(b, []byte("PLANTED")) {
		t.Error("the planted key is in the database files while open")
	}
	s.Close()
	if b := fileBytes(t, path); bytes.Contains(b, []byte("PLANTED")) {
		t.Error("the planted key is in the database file")
	}
}

func TestClear(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 20 {
		c, _ := s.NewConversation(ctx, "cli")
		if _, err := s.Append(ctx, c.ID, Message{Role: RoleUser, Content: "Zanzibarcanary " + strings.Repeat("padding ", 500)}); err != nil {
			t.Fatal(err)
		}
	}
	if hits, _ := s.Search(ctx, "zanzibarcanary", 100); len(hits) != 20 {
		t.Fatalf("before Clear: %d hits", len(hits))
	}
	if err := s.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.Conversations(ctx, 0); err != nil || len(cs) != 0 {
		t.Fatalf("after Clear: %d conversations, %v", len(cs), err)
	}
	if hits, err := s.Search(ctx, "zanzibarcanary", 100); err != nil || len(hits) != 0 {
		t.Fatalf("after Clear: %d hits, %v", len(hits), err)
	}
	if b := fileBytes(t, path); bytes.Contains(bytes.ToLower(b), []byte("zanzibarcanary")) {
		t.Error("cleared text is still in the database files")
	}
	// The store is still usable.
	c, err := s.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, c.ID, Message{Role: RoleUser, Content: "after"}); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.sqlite")
	// Two handles on one file stand in for two processes.
	s1, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	c, err := s1.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		s := s1
		if w%2 == 1 {
			s = s2
		}
		wg.Go(func() {
			for i := range each {
				_, err := s.Append(ctx, c.ID,
					Message{Role: RoleUser, Content: fmt.Sprintf("writer%d message %d", w, i)},
					Message{Role: RoleAssistant, Content: fmt.Sprintf("reply w%d %d", w, i)})
				if err != nil {
					errs <- err
					return
				}
				if _, err := s.Search(ctx, fmt.Sprintf("writer%d", w), 3); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_, msgs, err := s2.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != writers*each*2 {
		t.Fatalf("%d messages, want %d", len(msgs), writers*each*2)
	}
	next := make(map[int]int)
	for i := 0; i < len(msgs); i += 2 {
		var w, n int
		if _, err := fmt.Sscanf(msgs[i].Content, "writer%d message %d", &w, &n); err != nil {
			t.Fatalf("message %d = %q: a batch was interleaved", i, msgs[i].Content)
		}
		if want := fmt.Sprintf("reply w%d %d", w, n); msgs[i+1].Content != want {
			t.Fatalf("message %d = %q, want %q: a batch was interleaved", i+1, msgs[i+1].Content, want)
		}
		if n != next[w] {
			t.Fatalf("writer %d: message %d after %d", w, n, next[w]-1)
		}
		next[w]++
	}
	if hits, err := s1.Search(ctx, "writer3", 100); err != nil || len(hits) != 50 {
		t.Fatalf("search writer3: %d hits, %v", len(hits), err)
	}
}

// TestSecretFieldsKeptOffDisk: a value under a secret field name has no
// recognisable form (Basic credentials, a password), so it is replaced
// whole, whatever its type, and so is the value of a [name, value] pair.
func TestSecretFieldsKeptOffDisk(t *testing.T) {
	ctx := context.Background()
	secret := func(name string) bool { return strings.EqualFold(name, "authorization") || name == "password" }
	for _, tc := range []struct {
		name   string
		opts   []Option
		hidden bool
	}{
		{name: "with secret fields", opts: []Option{WithSecretFields(secret)}, hidden: true},
		{name: "without", hidden: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "memory.sqlite"), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, _ := s.NewConversation(ctx, "cli")
			args := `{"headers":{"Authorization":"Basic c2VjcmV0MQ=="},"password":{"v":"secret2"},"pairs":[["Authorization","secret3"],["Accept","text/plain"]],"n":{"password":4444}}`
			out, err := s.Append(ctx, c.ID, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "http", Arguments: json.RawMessage(args)}}})
			if err != nil {
				t.Fatal(err)
			}
			got := string(out[0].ToolCalls[0].Arguments)
			for _, v := range []string{"c2VjcmV0MQ", "secret2", "secret3", "4444"} {
				if strings.Contains(got, v) == tc.hidden {
					t.Errorf("stored arguments %s: %q shown = %v", got, v, !tc.hidden)
				}
			}
			if !strings.Contains(got, "text/plain") {
				t.Errorf("an ordinary header is lost: %s", got)
			}
		})
	}
}
