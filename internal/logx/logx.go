package logx

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/clawsec/claw/internal/redact"
)

// KeyEvent is the attribute key of the event name.
const KeyEvent = "event"

// Event names, the values of the "event" attribute.
const (
	EventStartup             = "startup"
	EventConfigLoaded        = "config_loaded"
	EventWorkspace           = "workspace"
	EventProviderSelected    = "provider_selected"
	EventChannelStarted      = "channel_started"
	EventConversationStarted = "conversation_started"
	EventToolRequested       = "tool_requested"
	EventToolApproved        = "tool_approved"
	EventToolDenied          = "tool_denied"
	EventToolCompleted       = "tool_completed"
	EventToolFailed          = "tool_failed"
	EventReceiptWritten      = "receipt_written"
	EventMemoryPersisted     = "memory_persisted"
	EventEstopTriggered      = "estop_triggered" // engaged, and actions in flight cancelled
	EventEstopCleared        = "estop_cleared"
)

// Events lists every event name, in the order of a typical run.
var Events = []string{
	EventStartup, EventConfigLoaded, EventWorkspace, EventProviderSelected,
	EventChannelStarted, EventConversationStarted, EventToolRequested,
	EventToolApproved, EventToolDenied, EventToolCompleted, EventToolFailed,
	EventReceiptWritten, EventMemoryPersisted, EventEstopTriggered,
	EventEstopCleared,
}

// Event returns the attribute that names an event.
func Event(name string) slog.Attr { return slog.String(KeyEvent, name) }

// EnvVar is the environment variable [FromEnv] reads.
const EnvVar = "CLAW_LOG"

// Modes of [New].
const (
	ModeDefault = ""     // text, warnings and errors only
	ModeText    = "text" // text, info and up
	ModeJSON    = "json" // JSON lines, info and up
	ModeOff     = "off"  // nothing
)

// FromEnv is [New] with the mode from $CLAW_LOG and [redact.String].
func FromEnv(w io.Writer) *slog.Logger {
	return New(w, os.Getenv(EnvVar), redact.String)
}

// New returns a logger writing to w in mode (see the package doc for
// MODE[:LEVEL]), passing every string through redactor (nil means
// [redact.String]). An unknown mode or level yields the default logger,
// whose first record is a warning naming the bad value.
func New(w io.Writer, mode string, redactor func(string) string) *slog.Logger {
	if redactor == nil {
		redactor = redact.String
	}
	m, level, err := parseMode(mode)
	if m == ModeOff {
		return slog.New(slog.DiscardHandler)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: replacer(redactor, m == ModeDefault)}
	var h slog.Handler
	if m == ModeJSON {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	l := slog.New(h)
	if err != nil {
		l.Warn("ignoring "+EnvVar, slog.String("error", err.Error()))
	}
	return l
}

// parseMode splits MODE[:LEVEL]. On error it returns the default mode and
// level with the reason.
func parseMode(s string) (mode string, level slog.Level, err error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mode, lv, hasLevel := strings.Cut(s, ":")
	switch mode {
	case ModeDefault:
		level = slog.LevelWarn
	case ModeText, ModeJSON:
		level = slog.LevelInfo
	case ModeOff:
		return ModeOff, 0, nil
	default:
		return ModeDefault, slog.LevelWarn, fmt.Errorf("unknown mode %q (want text, json or off, optionally with :debug, :info, :warn or :error)", mode)
	}
	if hasLevel {
		if err := level.UnmarshalText([]byte(lv)); err != nil || lv == "" {
			return ModeDefault, slog.LevelWarn, fmt.Errorf("unknown level %q (want debug, info, warn or error)", lv)
		}
	}
	return mode, level, nil
}

// replacer returns the ReplaceAttr that redacts every string the handler
// writes, and drops the time when terse (the default mode, read by a
// person at a terminal).
func replacer(red func(string) string, terse bool) func(groups []string, a slog.Attr) slog.Attr {
	return func(groups []string, a slog.Attr) slog.Attr {
		if terse && len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		a.Key = red(a.Key)
		a.Value = redactValue(red, a.Value)
		return a
	}
}

func redactValue(red func(string) string, v slog.Value) slog.Value {
	switch v.Kind() {
	case slog.KindString:
		return slog.StringValue(red(v.String()))
	case slog.KindAny:
	default:
		// Numbers, booleans, times and durations carry no text.
		return v
	}
	switch x := v.Any().(type) {
	case nil:
		return v
	case error:
		return slog.StringValue(red(x.Error()))
	case fmt.Stringer:
		return slog.StringValue(red(x.String()))
	case []byte:
		return slog.StringValue(red(string(x)))
	case json.RawMessage:
		return rawValue(red, x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return slog.StringValue(red(fmt.Sprintf("%+v", x)))
		}
		return rawValue(red, b)
	}
}

// rawValue redacts JSON text and keeps it as JSON when it still is.
func rawValue(red func(string) string, b []byte) slog.Value {
	s := red(string(b))
	if json.Valid([]byte(s)) {
		return slog.AnyValue(json.RawMessage(s))
	}
	return slog.StringValue(s)
}

// Discard is a logger that writes nothing, for callers that were given no
// logger.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
