-- Conversations and their messages, with a full-text index over message
-- content. Times are Unix milliseconds, UTC.

CREATE TABLE conversations (
	id              TEXT    PRIMARY KEY NOT NULL,
	channel         TEXT    NOT NULL,
	summary         TEXT    NOT NULL DEFAULT '',
	summary_through INTEGER NOT NULL DEFAULT 0,
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX conversations_updated ON conversations(updated_at DESC);
CREATE INDEX conversations_channel ON conversations(channel, updated_at DESC);

CREATE TABLE messages (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	conversation_id TEXT    NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
	content         TEXT    NOT NULL,
	tool_calls      TEXT    NOT NULL DEFAULT '',
	tool_call_id    TEXT    NOT NULL DEFAULT '',
	tool_name       TEXT    NOT NULL DEFAULT '',
	provider        TEXT    NOT NULL DEFAULT '',
	model           TEXT    NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL
) STRICT;

CREATE INDEX messages_conversation ON messages(conversation_id, id);

-- External-content FTS5 table: the text lives in messages, the index here,
-- kept in step by the triggers below.
CREATE VIRTUAL TABLE messages_fts USING fts5(
	content,
	content = 'messages',
	content_rowid = 'id',
	tokenize = 'porter unicode61'
);

CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
	INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
	INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages BEGIN
	INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
	INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
