package memory

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hit is one search result.
type Hit struct {
	Message Message `json:"message"`
	Channel string  `json:"channel"`
	// Snippet is a short excerpt of the content with the matched terms
	// between [ and ].
	Snippet string `json:"snippet"`
	// Score orders the hits, higher first: the bm25 relevance, boosted
	// for recently updated conversations.
	Score float64 `json:"score"`
}

// Search finds messages whose content matches every term of query (FTS5
// with the Porter stemmer: "deploy" finds "deploying", not "deployment"),
// best first, at most limit of them (default 10, at most
// [MaxSearchResults]). query is plain text, never FTS syntax: each term is
// quoted, so no user text can raise an SQL error. A query with no terms
// returns no hits; one over [MaxQueryBytes] or [MaxQueryTerms] is refused
// with a [*LimitError].
//
// Relevance is bm25 weighted by how recently the conversation was
// updated: a conversation updated now counts twice, one a day old 1.5
// times, one a month old about 1.03 times.
func (s *Store) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	match, err := sanitizeQuery(query)
	if err != nil {
		return nil, err
	}
	if match == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, MaxSearchResults)
	// Rank every match, keep the best few, and only then build snippets:
	// snippet() is the expensive part, and SQLite would otherwise run it for
	// every matching row before sorting.
	rows, err := s.db.QueryContext(ctx, `
		WITH top AS (
			SELECT messages_fts.rowid AS id,
				-bm25(messages_fts) * (1.0 + 1.0 / (1.0 + max(0, ?2 - c.updated_at) / 86400000.0)) AS score
			FROM messages_fts
			JOIN messages m ON m.id = messages_fts.rowid
			JOIN conversations c ON c.id = m.conversation_id
			WHERE messages_fts MATCH ?1
			ORDER BY score DESC, id DESC
			LIMIT ?3
		)
		SELECT `+messageColumns+`, c.channel,
			snippet(messages_fts, 0, '[', ']', '…', 16), top.score
		FROM top
		JOIN messages_fts ON messages_fts.rowid = top.id
		JOIN messages m ON m.id = top.id
		JOIN conversations c ON c.id = m.conversation_id
		WHERE messages_fts MATCH ?1
		ORDER BY top.score DESC, m.id DESC`, match, s.nowMillis(), limit)
	if err != nil {
		return nil, fmt.Errorf("failed to search memory: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var r messageRow
		if err := rows.Scan(append(r.dest(), &h.Channel, &h.Snippet, &h.Score)...); err != nil {
			return nil, fmt.Errorf("failed to search memory: %w", err)
		}
		if h.Message, err = r.message(); err != nil {
			return nil, fmt.Errorf("failed to search memory: %w", err)
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failed to search memory: %w", err)
	}
	return hits, nil
}

// sanitizeQuery turns plain text into an FTS5 query that matches messages
// holding every term: the text is split on white space and control
// characters, invalid UTF-8 is dropped, and each term becomes an FTS5
// string ("…", with " doubled), so operators, column filters, NEAR,
// parentheses, * and ^ are all just text. It returns "" for a query with
// no terms.
func sanitizeQuery(q string) (string, error) {
	if len(q) > MaxQueryBytes {
		return "", &LimitError{What: "search query", Max: MaxQueryBytes, Got: len(q)}
	}
	terms := strings.FieldsFunc(q, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError
	})
	if len(terms) > MaxQueryTerms {
		return "", &LimitError{What: "search query terms", Max: MaxQueryTerms, Got: len(terms)}
	}
	var b strings.Builder
	for _, t := range terms {
		if !hasTokenChar(t) {
			// Only punctuation: the tokenizer would make it an empty
			// phrase, which matches nothing and would empty the AND.
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String(), nil
}

// hasTokenChar reports whether t holds a character the unicode61
// tokenizer keeps (a letter, number or private-use character).
func hasTokenChar(t string) bool {
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) {
			return true
		}
	}
	return false
}
