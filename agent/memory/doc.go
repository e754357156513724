// Package memory stores the agent's conversations: every message a person,
// the model or a tool wrote, with full-text search over them, in one SQLite
// file (by default $CLAW_HOME/memory.sqlite).
//
// Most callers need [Open], [Store.NewConversation] or [Store.Latest],
// [Store.Append] and [Store.Recent]; the memory commands use
// [Store.Conversations], [Store.Get], [Store.Search] and [Store.Clear].
//
//	st, err := memory.Open(filepath.Join(home, "memory.sqlite"), memory.WithRedactor(redact))
//	if err != nil { … }
//	defer st.Close()
//	conv, err := st.Latest(ctx, "cli")
//	if errors.Is(err, memory.ErrNotFound) {
//		conv, err = st.NewConversation(ctx, "cli")
//	}
//	_, err = st.Append(ctx, conv.ID, memory.Message{Role: memory.RoleUser, Content: text})
//	history, err := st.Recent(ctx, conv.ID, 40)
//
// # Conversations and messages
//
// A [Conversation] has a random 16-hex-digit id, the channel it came from,
// and a [Conversation.Summary]: the loop's compacted account of older
// messages, set with [Store.SetSummary] and injected into the system
// prompt. SummaryThrough names the last message the summary covers; the
// messages themselves are never deleted by compaction.
//
// A [Message] has a [Role] (system, user, assistant, tool). An assistant
// message may carry [ToolCall]s (id, name, arguments as JSON); a tool
// message answers one of them by ToolCallID and ToolName, and IsError
// marks a result that reports a failure or a denial. TurnID groups the
// messages of one receive→reply cycle (the person's message, the tool
// calls and their results, the answer; [NewTurnID] makes one), and
// Metadata holds string annotations such as a result's status and action
// id, stored as a JSON object of at most [MaxMetadataBytes]. [Store.Append]
// stores several messages in one transaction, so an assistant's calls and
// their results land together. [Store.Recent] returns the newest messages
// oldest first and never starts with an orphaned tool result, so the
// result can be sent back to a model as it is.
//
// # Secrets and limits
//
// [WithRedactor] sets a function applied to every content, summary,
// metadata key and value, and every string inside tool call arguments
// (after JSON decoding, so \u escapes do not hide a key) before anything
// reaches the file. Content over [MaxContentBytes] and summaries over
// [MaxSummaryBytes] are truncated after redaction and end in
// "[truncated]"; names, tool calls, arguments and metadata over their caps
// are refused with a [*LimitError] (errors.Is [ErrTooLarge]). Malformed
// arguments are stored as a JSON string.
//
// [Store.Clear] deletes everything, rebuilds the search index and vacuums,
// and the database runs with secure_delete, so cleared text is gone from
// the file rather than left in free pages.
//
// # Search
//
// [Store.Search] takes plain text. Each whitespace-separated term is quoted
// as an FTS5 string (a " inside is doubled) and the terms are ANDed, so
// FTS5 operators typed by a person or a model are only words and no query
// text can raise an SQL error. Matching uses the Porter stemmer over
// unicode61 tokens; results are ordered by bm25, boosted for recently
// updated conversations, with a snippet. Queries are capped at
// [MaxQueryBytes] and [MaxQueryTerms].
//
// # File and schema
//
// The file is created 0600 in a 0700 directory and opened in WAL mode with
// a 5 s busy timeout, foreign keys on, and write transactions taken
// IMMEDIATE, so several processes may share it. The schema comes from the
// embedded migrations/NNNN_name.sql files, applied forward-only in order,
// one transaction per file, with PRAGMA user_version recording the last
// one applied. A file whose version is newer than this code knows is
// refused with a [*SchemaError]; it is never modified.
package memory
