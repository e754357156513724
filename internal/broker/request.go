package broker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clawsec/claw/internal/redact"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

// Bounds of [Request].Args: what a person is shown of an action's
// arguments, and what an approver holds and sends on (the daemon's queue
// keeps many requests at once). They bound the display only: the action
// runs with its arguments whole, and the approval binds to the digest of
// all of them.
const (
	// MaxArgString is the most bytes of one string (a value or a key)
	// Args shows; a longer one is cut at a UTF-8 boundary and ends in
	// "… [N more bytes cut]".
	MaxArgString = 64 << 10
	// MaxArgs is the most bytes of Args in all. Arguments still longer
	// once their strings are cut have their strings cut shorter, down to
	// minArgString bytes each; past that, Args is a JSON string holding
	// the start of the arguments' JSON text, cut the same way.
	MaxArgs = 256 << 10

	minArgString = 256
)

// shownArgs is Request.Args for the arguments whose JSON text is argsJSON:
// compact JSON with sorted keys, every key and string value passed through
// red, every value under a key that names a secret replaced by
// [redact.Marker], and bounded by MaxArgString and MaxArgs. Redaction
// comes first, so a cut can never keep the start of a secret that the
// redactor would have recognised whole.
func shownArgs(argsJSON []byte, red func(string) string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(argsJSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return encodeShown("(arguments that cannot be shown)")
	}
	if v == nil {
		v = map[string]any{}
	}
	v = redactShown(v, "", red)
	for limit := MaxArgString; limit >= minArgString; limit /= 4 {
		if raw := encodeShown(cutShown(v, limit)); len(raw) <= MaxArgs {
			return raw
		}
	}
	// Escaping the JSON text as a string at most doubles it: it is valid
	// UTF-8 with its control characters already escaped, so only its
	// quotes and backslashes are escaped again.
	text := encodeShown(cutShown(v, minArgString))
	return encodeShown(cutArg(string(text), MaxArgs/2-64))
}

// redactShown returns v with red applied to every key and string, and
// whatever lies under a key that names a secret (key is the name v is
// found under) replaced whole: a string, a number, an object or a list.
// A [name, value] pair whose name names a secret (headers written as
// pairs) has its value replaced too.
func redactShown(v any, key string, red func(string) string) any {
	if redact.SecretField(key) && v != nil {
		return redact.Marker
	}
	switch v := v.(type) {
	case string:
		return red(v)
	case map[string]any:
		m := make(map[string]any, len(v))
		var seen map[string]int
		for k, x := range v {
			seen = putShown(m, seen, red(k), redactShown(x, k, red))
		}
		return m
	case []any:
		if len(v) == 2 {
			if name, ok := v[0].(string); ok && redact.SecretField(name) {
				return []any{red(name), redact.Marker}
			}
		}
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = redactShown(x, "", red)
		}
		return l
	}
	return v
}

// putShown adds k to m, numbered when a redacted or cut key collides with
// another, so that no argument disappears from view. seen counts the
// numbers given per key (nil until the first collision), so that many
// keys cut or redacted alike cost no more than a few.
func putShown(m map[string]any, seen map[string]int, k string, v any) map[string]int {
	if !has(m, k) {
		m[k] = v
		return seen
	}
	if seen == nil {
		seen = map[string]int{}
	}
	for n := max(seen[k], 1) + 1; ; n++ {
		if key := fmt.Sprintf("%s (%d)", k, n); !has(m, key) {
			m[key] = v
			seen[k] = n
			return seen
		}
	}
}

func has(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// cutShown returns v with every key and string cut at limit bytes.
func cutShown(v any, limit int) any {
	switch v := v.(type) {
	case string:
		return cutArg(v, limit)
	case map[string]any:
		m := make(map[string]any, len(v))
		var seen map[string]int
		for k, x := range v {
			seen = putShown(m, seen, cutArg(k, limit), cutShown(x, limit))
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = cutShown(x, limit)
		}
		return l
	}
	return v
}

// cutArg cuts s at n bytes (at a UTF-8 boundary), saying how much was
// left out.
func cutArg(s string, n int) string {
	if len(s) <= n {
		return s
	}
	kept := strings.TrimSuffix(clip(s, n), "…")
	return fmt.Sprintf("%s… [%d more bytes cut]", kept, len(s)-len(kept))
}

// encodeShown is compact JSON without HTML escapes (a person reads it).
func encodeShown(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(`"(arguments that cannot be shown)"`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// maxRecordedArgs bounds the arguments a decision receipt keeps for
// replay; larger ones are left out (args_omitted "too_large").
const maxRecordedArgs = 64 << 10

// payloadArgs are the arguments that carry data rather than say what an
// action does (what is written, an edit, a request body). The decision
// receipt keeps their SHA-256 ("sha256:<hex>") instead of the data: the
// policies decide on paths and hosts, and the log is no place for file
// contents.
var payloadArgs = map[toolkind.Kind][]string{
	toolkind.FileWrite: {"content"},
	toolkind.EditFile:  {"old", "new"},
	toolkind.HTTP:      {"body"},
}

// recordedArgs is the decision receipt's copy of the arguments of a tool
// call: compact JSON with sorted keys, payloads replaced by their digest,
// every string passed through red and values under secret-named keys
// replaced, as [shownArgs] does but never cut. redacted says whether
// redaction changed anything; omitted why there is nothing.
func recordedArgs(tool toolkind.Kind, argsJSON []byte, red func(string) string) (args string, redacted bool, omitted string) {
	dec := json.NewDecoder(bytes.NewReader(argsJSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", false, "undecodable"
	}
	if v == nil {
		v = map[string]any{}
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range payloadArgs[tool] {
			if p, ok := m[k].(string); ok {
				m[k] = receipts.Digest([]byte(p))
			}
		}
	}
	plain := encodeShown(v)
	out := encodeShown(redactShown(v, "", red))
	if len(out) > maxRecordedArgs {
		return "", false, "too_large"
	}
	return string(out), !bytes.Equal(plain, out), ""
}
