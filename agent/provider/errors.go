package provider

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Errors callers branch on with [errors.Is]. Every error a provider returns
// names the provider and never contains the API key.
var (
	// ErrAuth: the endpoint rejected the credentials (HTTP 401 or 403,
	// or an authentication error event).
	ErrAuth = errors.New("authentication failed")
	// ErrTimeout: no complete answer before the deadline, whether the
	// provider's own timeout or the caller's context deadline.
	ErrTimeout = errors.New("timed out")
	// ErrBadResponse: the answer was not the documented wire format
	// (malformed JSON, a truncated stream, an oversized body).
	ErrBadResponse = errors.New("malformed response")
	// ErrTooLarge: the answer exceeded the size cap. It is always
	// reported together with ErrBadResponse.
	ErrTooLarge = errors.New("response too large")
	// ErrBadRequest: the endpoint refused the request itself (HTTP 400,
	// 404, 413, 422). Another provider would not do better with the same
	// request, so [Reliable] does not fall back on it.
	ErrBadRequest = errors.New("request rejected")
	// ErrNetwork: the endpoint could not be reached or the connection
	// broke.
	ErrNetwork = errors.New("network error")
	// ErrNoKey: the environment variable named by api_key_env is unset.
	ErrNoKey = errors.New("api key not set")
)

// StatusError is an error status from the endpoint: an HTTP status that is
// not 2xx, or an error event in a stream. Message is a bounded excerpt of
// the server's explanation with control characters escaped and anything
// that looks like a credential redacted.
type StatusError struct {
	Provider   string
	StatusCode int    // HTTP status; for an error event, the status its type implies
	Type       string // the provider's error type, e.g. "overloaded_error"
	Message    string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %q: http %d", e.Provider, e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + strings.ToLower(t))
	}
	if e.Type != "" {
		b.WriteString(" (" + e.Type + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Is lets [errors.Is] match [ErrAuth] for 401/403 and [ErrBadRequest] for
// the statuses that blame the request.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrBadRequest:
		switch e.StatusCode {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return true
		}
	}
	return false
}

// RateLimitError is HTTP 429 (or a rate_limit_error event). RetryAfter is
// what the server asked for, from a retry-after header in seconds or as an
// HTTP date; zero when it did not say.
type RateLimitError struct {
	Provider   string
	RetryAfter time.Duration
	Message    string
}

func (e *RateLimitError) Error() string {
	s := fmt.Sprintf("provider %q: rate limited", e.Provider)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Hint returns one lowercase sentence telling a person what to do about
// err, or "" when there is nothing specific to say. The CLI prints it after
// the error.
func Hint(err error) string {
	var rl *RateLimitError
	var se *StatusError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNoKey):
		return "export the key in the environment variable named by api_key_env"
	case errors.Is(err, ErrAuth):
		return "the endpoint rejected the key: check the environment variable named by api_key_env and the key's permissions"
	case errors.As(err, &rl):
		if rl.RetryAfter > 0 {
			return fmt.Sprintf("the endpoint is rate limiting: retry in %s or configure a fallback provider", rl.RetryAfter.Round(time.Second))
		}
		return "the endpoint is rate limiting: retry later or configure a fallback provider"
	case errors.Is(err, ErrTimeout):
		return "no answer in time: check base_url and the network, or raise the provider's timeout"
	case errors.Is(err, ErrTooLarge):
		return "the answer exceeded the size cap: lower max_tokens or raise the provider's response cap"
	case errors.Is(err, ErrBadResponse):
		return "the answer is not the expected wire format: check the provider's kind and base_url"
	case errors.Is(err, ErrNetwork):
		return "the endpoint is unreachable: check base_url and the network"
	case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
		return "not found: check base_url and the model name"
	case errors.Is(err, ErrBadRequest):
		return "the endpoint refused the request: check the model name and the provider's kind"
	case errors.As(err, &se) && se.StatusCode >= 500:
		return "the endpoint failed: retry later or configure a fallback provider"
	}
	return ""
}

// maxExcerpt bounds the server text quoted in an error.
const maxExcerpt = 300

// credentialPattern matches strings that look like API keys or bearer
// tokens, so an excerpt never quotes one even when it is not ours.
var credentialPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(sk-[a-z0-9_\-]{6,}|bearer\s+[a-z0-9_\-\.=]{6,}|(api[_-]?key|x-api-key|authorization)["']?\s*[:=]\s*["']?(bearer\s+)?[^\s"',}]{4,})`)
})

// excerpt returns a bounded, single-line, credential-free quote of text.
// Each non-empty secret is replaced wherever it occurs.
func excerpt(text string, secrets ...string) string {
	text = redact(text, secrets...)
	if len(text) > 4*maxExcerpt {
		text = text[:4*maxExcerpt]
	}
	text = credentialPattern().ReplaceAllString(text, "[redacted]")
	var b strings.Builder
	for i := 0; i < len(text) && b.Len() < maxExcerpt; {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\ufffd`)
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) >= maxExcerpt {
		s += "…"
	}
	return s
}

// redact replaces every occurrence of each non-empty secret.
func redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 && strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}
