package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func FuzzSSEReader(f *testing.F) {
	for _, name := range []string{"openai_stream.txt", "openai_stream_text.txt", "openai_stream_quirks.txt", "anthropic_stream.txt", "anthropic_stream_error.txt"} {
		f.Add(string(wire(f, name)))
	}
	f.Add("data: a\r\ndata: b\r\n\r\n: c\n\nevent: x\ndata\n")
	f.Fuzz(func(t *testing.T, in string) {
		r := newSSEReader(strings.NewReader(in))
		r.lineCap, r.eventCap = 512, 1024
		for i := 0; ; i++ {
			ev, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data) > 1024 || i > len(in) {
				t.Fatalf("event %d too large or too many events", i)
			}
		}
	})
}

// checkResponse asserts what every decoded response guarantees.
func checkResponse(t *testing.T, resp ChatResponse, err error) {
	t.Helper()
	if err != nil {
		if !strings.Contains(err.Error(), "provider ") {
			t.Fatalf("error %q does not name the provider", err)
		}
		return
	}
	seen := map[string]bool{}
	for _, c := range resp.ToolCalls {
		if !json.Valid(c.Arguments) {
			t.Fatalf("tool call %q has invalid JSON arguments %q", c.Name, c.Arguments)
		}
		if c.ID == "" || c.Name == "" {
			t.Fatalf("tool call without id or name: %+v", c)
		}
		if seen[c.ID] {
			t.Fatalf("duplicate tool call id %q", c.ID)
		}
		seen[c.ID] = true
	}
}

func FuzzDecodeOpenAI(f *testing.F) {
	f.Add(wire(f, "openai_response.json"))
	f.Add([]byte(`{"id":"r","choices":[{"message":{"content":[{"type":"text","text":"a"}],"tool_calls":[{"function":{"name":"x","arguments":{"a":1}}},{"id":"d","function":{"name":"y","arguments":"{"}},{"id":"d","function":{"name":"z"}}]}}]}`))
	f.Add([]byte(`{"error":{"message":"m","code":429}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := decodeOpenAI("fuzz", data)
		checkResponse(t, resp, err)
	})
}

func FuzzDecodeAnthropic(f *testing.F) {
	f.Add(wire(f, "anthropic_response.json"))
	f.Add([]byte(`{"type":"message","content":[{"type":"tool_use","name":"x","input":"str"},{"type":"tool_use","name":"y","id":"a"},{"type":"tool_use","name":"z","id":"a"}]}`))
	f.Add([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"m"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := decodeAnthropic("fuzz", data)
		checkResponse(t, resp, err)
	})
}

func FuzzOpenAIStream(f *testing.F) {
	for _, name := range []string{"openai_stream.txt", "openai_stream_text.txt", "openai_stream_quirks.txt"} {
		f.Add(wire(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &OpenAI{httpBase{name: "fuzz", max: 4096}}
		var text strings.Builder
		resp, err := p.readStream(strings.NewReader(string(data)), func(s string) { text.WriteString(s) })
		checkResponse(t, resp, err)
		if err == nil && text.String() != resp.Text {
			t.Fatalf("deltas %q differ from text %q", text.String(), resp.Text)
		}
	})
}

func FuzzAnthropicStream(f *testing.F) {
	for _, name := range []string{"anthropic_stream.txt", "anthropic_stream_text.txt", "anthropic_stream_error.txt"} {
		f.Add(wire(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &Anthropic{httpBase{name: "fuzz", max: 4096}}
		var text strings.Builder
		resp, err := p.readStream(strings.NewReader(string(data)), func(s string) { text.WriteString(s) })
		checkResponse(t, resp, err)
		if err == nil && text.String() != resp.Text {
			t.Fatalf("deltas %q differ from text %q", text.String(), resp.Text)
		}
	})
}

func FuzzParseScript(f *testing.F) {
	f.Add(DefaultScript())
	f.Add([]byte(testScript))
	f.Add([]byte(`{"turns":[{"match":"(a","reply":"x"}]}`))
	f.Add([]byte("turns:\n  - delay: 1h\n    reply: never\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		if err != nil {
			return
		}
		// A script may delay for hours: bound the call.
		ctx, cancel := context.WithTimeout(bg(), 5*time.Millisecond)
		defer cancel()
		resp, err := NewMock("fuzz", s).Chat(ctx, userReq("hello {{user}}"))
		if err == nil {
			checkResponse(t, resp, nil)
		}
	})
}

// FuzzRetryAfter: a server's retry-after headers, whatever they hold, give
// a wait within [0, maxHeaderDelay] or none, the same one each time; a
// plain number of seconds or milliseconds in range is read exactly.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range [][2]string{{"", "3"}, {"80", ""}, {"", "Wed, 21 Oct 2015 07:28:00 GMT"}, {"NaN", "-1"}, {"1e300", "Inf"}, {"", " 7 "}, {"0.5", "x"}} {
		f.Add(s[0], s[1])
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ms, secs string) {
		h := http.Header{}
		if ms != "" {
			h.Set("Retry-After-Ms", ms)
		}
		if secs != "" {
			h.Set("Retry-After", secs)
		}
		d, ok := retryAfter(h, now)
		if d2, ok2 := retryAfter(h, now); d2 != d || ok2 != ok {
			t.Fatalf("not deterministic: %v %v, then %v %v", d, ok, d2, ok2)
		}
		if !ok && d != 0 || d < 0 || d > maxHeaderDelay {
			t.Fatalf("retryAfter(%q, %q) = %v, %v: out of [0, %v]", ms, secs, d, ok, maxHeaderDelay)
		}
		if ms == "" && secs != "" {
			if n, err := strconv.Atoi(strings.TrimSpace(secs)); err == nil && n >= 0 && time.Duration(n)*time.Second <= maxHeaderDelay {
				if !ok || d != time.Duration(n)*time.Second {
					t.Fatalf("Retry-After %q read as %v, %v", secs, d, ok)
				}
			}
		}
	})
}
