package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSanitizeQuery(t *testing.T) {
	tests := []struct {
		name    string
		q       string
		want    string
		wantErr error
	}{
		{name: "words", q: "Aardvark adapter", want: `"Aardvark" "adapter"`},
		{name: "extra space", q: "  a \t\n b  ", want: `"a" "b"`},
		{name: "quote doubled", q: `say "hi`, want: `"say" """hi"`},
		{name: "operators are words", q: "a AND b OR NOT c", want: `"a" "AND" "b" "OR" "NOT" "c"`},
		{name: "column filter is a word", q: "content:secret", want: `"content:secret"`},
		{name: "near and parens", q: "NEAR(a b)", want: `"NEAR(a" "b)"`},
		{name: "prefix and caret", q: "^start dep*", want: `"^start" "dep*"`},
		{name: "punctuation only dropped", q: `a -- "" * b`, want: `"a" "b"`},
		{name: "control characters split", q: "a\x00b\x1bc", want: `"a" "b" "c"`},
		{name: "invalid utf-8 splits", q: "a\xffb", want: `"a" "b"`},
		{name: "unicode kept", q: "café 東京", want: `"café" "東京"`},
		{name: "empty", q: "", want: ""},
		{name: "only punctuation", q: `" ' ( ) *`, want: ""},
		{name: "too long", q: strings.Repeat("a", MaxQueryBytes+1), wantErr: ErrTooLarge},
		{name: "too many terms", q: strings.Repeat("a ", MaxQueryTerms+1), wantErr: ErrTooLarge},
		{name: "at the term limit", q: strings.TrimSpace(strings.Repeat("a ", MaxQueryTerms)), want: strings.TrimSpace(strings.Repeat(`"a" `, MaxQueryTerms))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sanitizeQuery(tt.q)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("sanitizeQuery = %q, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("sanitizeQuery(%q) = %q, %v; want %q", tt.q, got, err, tt.want)
			}
		})
	}
}

// searchStore holds a few conversations to search.
func searchStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "memory.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	for _, conv := range [][]string{
		{"We should rename the Aardvark adapter before release.", "Agreed, the Aardvark adapter name is confusing."},
		{"Deploying the gateway tonight.", "The deployment checklist is in notes.txt."},
		{`Quotes "inside" text and content:colons and NEAR(things).`, "Café au lait, 東京 station."},
		{"AND OR NOT are ordinary words here."},
	} {
		c, err := s.NewConversation(ctx, "cli")
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range conv {
			role := RoleUser
			if i%2 == 1 {
				role = RoleAssistant
			}
			if _, err := s.Append(ctx, c.ID, Message{Role: role, Content: text}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := searchStore(t)
	tests := []struct {
		name  string
		q     string
		limit int
		want  []string // a substring of each hit's content, in order
	}{
		{name: "two words, both messages", q: "Aardvark adapter", want: []string{"Aardvark adapter", "Aardvark adapter"}},
		{name: "case-insensitive", q: "aardvark ADAPTER", want: []string{"Aardvark", "Aardvark"}},
		{name: "all terms required", q: "aardvark release", want: []string{"before release"}},
		{name: "stemmed", q: "deploy", want: []string{"Deploying"}},
		{name: "stem does not reach deployment", q: "deployments", want: []string{"deployment checklist"}},
		{name: "limit", q: "aardvark", limit: 1, want: []string{"Aardvark"}},
		{name: "quote in a term", q: `"inside"`, want: []string{"Quotes"}},
		{name: "unbalanced quote", q: `"inside`, want: []string{"Quotes"}},
		{name: "column filter is text", q: "content:colons", want: []string{"content:colons"}},
		{name: "near is text", q: "NEAR(things)", want: []string{"NEAR(things)"}},
		{name: "operators are words", q: "AND OR NOT", want: []string{"ordinary words"}},
		{name: "diacritics kept", q: "café", want: []string{"Café"}},
		{name: "cjk", q: "東京", want: []string{"東京"}},
		{name: "no match", q: "zebra", want: nil},
		{name: "empty", q: "", want: nil},
		{name: "punctuation only", q: `"" () * ^ -`, want: nil},
		{name: "star is not a prefix operator", q: "aard*", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := s.Search(ctx, tt.q, tt.limit)
			if err != nil {
				t.Fatalf("Search(%q) = %v", tt.q, err)
			}
			if len(hits) != len(tt.want) {
				t.Fatalf("Search(%q) = %d hits %v, want %d", tt.q, len(hits), contents(hits), len(tt.want))
			}
			for i, h := range hits {
				if !strings.Contains(h.Message.Content, tt.want[i]) {
					t.Errorf("hit %d = %q, want it to contain %q", i, h.Message.Content, tt.want[i])
				}
				if h.Channel != "cli" || h.Score <= 0 || !strings.Contains(h.Snippet, "[") {
					t.Errorf("hit %d: channel %q score %v snippet %q", i, h.Channel, h.Score, h.Snippet)
				}
				if i > 0 && h.Score > hits[i-1].Score {
					t.Errorf("hit %d scores %v, above hit %d's %v", i, h.Score, i-1, hits[i-1].Score)
				}
			}
		})
	}
}

func contents(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Message.Content)
	}
	return out
}

func TestSearchBoostsRecentConversations(t *testing.T) {
	ctx := context.Background()
	clock := newClock()
	s := openTest(t, WithClock(clock.now))
	old, _ := s.NewConversation(ctx, "cli")
	if _, err := s.Append(ctx, old.ID, Message{Role: RoleUser, Content: "the pelican protocol"}); err != nil {
		t.Fatal(err)
	}
	clock.advance(30 * 24 * time.Hour)
	recent, _ := s.NewConversation(ctx, "discord:1")
	if _, err := s.Append(ctx, recent.ID, Message{Role: RoleUser, Content: "the pelican protocol"}); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "pelican", 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("Search = %d hits, %v", len(hits), err)
	}
	if hits[0].Message.ConversationID != recent.ID || hits[0].Channel != "discord:1" {
		t.Fatalf("first hit from %s, want the recent conversation %s", hits[0].Message.ConversationID, recent.ID)
	}
	if ratio := hits[0].Score / hits[1].Score; ratio < 1.9 || ratio > 2.0 {
		t.Errorf("recent/old score ratio = %.3f, want about 2/1.03", ratio)
	}
}

func TestSearchLimits(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	c, _ := s.NewConversation(ctx, "cli")
	for range 3 {
		if _, err := s.Append(ctx, c.ID, Message{Role: RoleUser, Content: "many hits"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		limit, want int
	}{{0, 3}, {-5, 3}, {2, 2}, {MaxSearchResults * 10, 3}} {
		if hits, err := s.Search(ctx, "hits", tt.limit); err != nil || len(hits) != tt.want {
			t.Errorf("limit %d: %d hits, %v; want %d", tt.limit, len(hits), err, tt.want)
		}
	}
	var le *LimitError
	_, err := s.Search(ctx, strings.Repeat("x", MaxQueryBytes+1), 5)
	if !errors.As(err, &le) || le.Max != MaxQueryBytes || !errors.Is(err, ErrTooLarge) {
		t.Errorf("long query = %v", err)
	}
}

// FuzzSearch: no query text raises an SQL error or a panic; the only error
// is a LimitError.
func FuzzSearch(f *testing.F) {
	for _, seed := range []string{
		"Aardvark adapter", `"unbalanced`, `""`, `"a" OR "b"`, "a AND", "NOT", "OR OR", "(", ")", "a)",
		"NEAR(a b, 3)", "content:x", "messages_fts:x", "{content}: x", "^a", "a*", "*", "-a", "+a",
		"a:b:c", `'; DROP TABLE messages; --`, "\x00", "\x00\"", "\xff\xfe", "\u2028", "\uFEFFa",
		"\U0010FFFF", "\uE000", "a\u0301", "ǅ", "ﬁ", strings.Repeat(`"`, 100), strings.Repeat("a ", 40),
	} {
		f.Add(seed)
	}
	s := searchStore(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, q string) {
		hits, err := s.Search(ctx, q, 5)
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return
			}
			t.Fatalf("Search(%q) = %v", q, err)
		}
		if len(hits) > 5 {
			t.Fatalf("Search(%q) = %d hits, limit 5", q, len(hits))
		}
	})
}

// BenchmarkAppend measures one message appended in its own transaction.
func BenchmarkAppend(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "memory.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	c, _ := s.NewConversation(ctx, "cli")
	msg := Message{Role: RoleUser, Content: "a message of ordinary length about the Aardvark adapter and the deployment"}
	for b.Loop() {
		if _, err := s.Append(ctx, c.ID, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch measures searches over 10,000 messages of 20 words:
// "common" matches nearly every message (the worst case: every match is
// ranked), "rare" matches one conversation's 100.
func BenchmarkSearch(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "memory.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	words := strings.Fields("gateway policy sandbox receipt adapter deploy notes kernel landlock seccomp shell file read write network model")
	for i := range 100 {
		c, _ := s.NewConversation(ctx, "cli")
		msgs := make([]Message, 100)
		for j := range msgs {
			var sb strings.Builder
			fmt.Fprintf(&sb, "topic%d ", i)
			for k := range 19 {
				sb.WriteString(words[(i*7+j*3+k*k)%len(words)])
				sb.WriteByte(' ')
			}
			msgs[j] = Message{Role: RoleUser, Content: sb.String()}
		}
		if _, err := s.Append(ctx, c.ID, msgs...); err != nil {
			b.Fatal(err)
		}
	}
	for _, bb := range []struct{ name, q string }{
		{"common", "sandbox receipt"},
		{"rare", "topic42 kernel"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Search(ctx, bb.q, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecent measures loading the newest 40 messages.
func BenchmarkRecent(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "memory.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	c, _ := s.NewConversation(ctx, "cli")
	msgs := make([]Message, 1000)
	for i := range msgs {
		msgs[i] = Message{Role: RoleUser, Content: "message text"}
	}
	if _, err := s.Append(ctx, c.ID, msgs...); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Recent(ctx, c.ID, 40); err != nil {
			b.Fatal(err)
		}
	}
}
