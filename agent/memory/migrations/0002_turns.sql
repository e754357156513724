-- Turns, metadata, and the error flag of tool results.
--
-- turn_id groups the messages of one receive→reply cycle: the person's
-- message, the assistant's tool calls and their results, and the final
-- answer. Rows written before this step belong to no turn ('').
-- metadata is a JSON object of strings ('{}': none).
-- is_error is 1 on a tool result that reports a failure or a denial, so a
-- resumed conversation gives it back to the model as an error.
ALTER TABLE messages ADD COLUMN turn_id  TEXT    NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN metadata TEXT    NOT NULL DEFAULT '{}';
ALTER TABLE messages ADD COLUMN is_error INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1));
