package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/internal/textesc"
)

// MaxInput bounds what is read from standard input. Larger input is not
// decoded: it is refused, and the tool call is blocked.
const MaxInput = 1 << 20

// ErrInput marks input the hook refuses to decode. A refused input blocks
// the tool call.
var ErrInput = errors.New("malformed hook input")

// Event is a PreToolUse hook invocation, as Claude Code and Codex send it
// on standard input. Fields the hook does not use are ignored, so a newer
// agent that adds fields keeps working.
type Event struct {
	SessionID      string         `json:"session_id"`
	TranscriptPath string         `json:"transcript_path"`
	Cwd            string         `json:"cwd"`
	PermissionMode string         `json:"permission_mode"`
	HookEventName  string         `json:"hook_event_name"`
	ToolName       string         `json:"tool_name"`
	ToolInput      map[string]any `json:"tool_input"`
	ToolUseID      string         `json:"tool_use_id"`
	Model          string         `json:"model"`
	TurnID         string         `json:"turn_id"`
}

// ReadInput reads at most [MaxInput] bytes from r. More than that is an
// error wrapping [ErrInput].
func ReadInput(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read hook input: %w", err)
	}
	if len(b) > MaxInput {
		return nil, fmt.Errorf("%w: input is larger than %d bytes", ErrInput, MaxInput)
	}
	return b, nil
}

// Decode parses one hook event. It requires a single JSON object with a
// tool name, a tool_input object (absent means empty), an absolute cwd
// when one is given, and, when the event name is given, "PreToolUse".
// Invalid UTF-8, and escapes that do not decode to valid Unicode, are
// refused rather than replaced, so the hook never judges a different
// string than the one the agent will run. Every error wraps [ErrInput].
func Decode(b []byte) (*Event, error) {
	if len(b) > MaxInput {
		return nil, fmt.Errorf("%w: input is larger than %d bytes", ErrInput, MaxInput)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: input is not valid UTF-8", ErrInput)
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: input is not a JSON object", ErrInput)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var ev Event
	if err := dec.Decode(&ev); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrInput)
	}
	switch {
	case ev.ToolName == "":
		return nil, fmt.Errorf("%w: no tool_name", ErrInput)
	case ev.HookEventName != "" && ev.HookEventName != "PreToolUse":
		return nil, fmt.Errorf("%w: hook_event_name %q is not PreToolUse", ErrInput, clip(ev.HookEventName, 64))
	case ev.Cwd != "" && !filepath.IsAbs(ev.Cwd):
		return nil, fmt.Errorf("%w: cwd is not an absolute path", ErrInput)
	case strings.ContainsRune(ev.Cwd, 0):
		return nil, fmt.Errorf("%w: cwd contains a NUL byte", ErrInput)
	}
	if ev.ToolInput == nil {
		ev.ToolInput = map[string]any{}
	}
	// encoding/json turns lone surrogate escapes into U+FFFD. Unless the
	// input spells U+FFFD itself, a U+FFFD in a decoded string means the
	// agent's string and the judged one may differ.
	if !bytes.Contains(b, []byte("\uFFFD")) && !bytes.Contains(bytes.ToLower(b), []byte(`\ufffd`)) {
		if hasReplacement(ev.ToolName) || hasReplacement(ev.Cwd) || hasReplacement(ev.ToolInput) {
			return nil, fmt.Errorf("%w: input has escapes that are not valid Unicode", ErrInput)
		}
	}
	return &ev, nil
}

func hasReplacement(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, utf8.RuneError)
	case map[string]any:
		for k, e := range x {
			if hasReplacement(k) || hasReplacement(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasReplacement(e) {
				return true
			}
		}
	}
	return false
}

// clip shortens s to at most n bytes, on a rune boundary.
func clip(s string, n int) string { return textesc.Cut(s, n+len("…"), "…") }
