package provider

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestKeyNeverLeaks plants a key, has the server echo it back in every
// place a server can, and checks it reaches no error string and no Raw.
func TestKeyNeverLeaks(t *testing.T) {
	echo := func(status int, ctype, format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			if key == "" {
				key = r.Header.Get("X-Api-Key")
			}
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
			fmt.Fprintf(w, format, key, key)
		}
	}
	handlers := map[string]http.HandlerFunc{
		"401 json":           echo(401, "application/json", `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error","code":"%s"}}`),
		"401 anthropic":      echo(401, "application/json", `{"type":"error","error":{"type":"authentication_error","message":"bad key %s %s"}}`),
		"403 text":           echo(403, "text/plain", "key %s is not allowed (%s)"),
		"429":                echo(429, "application/json", `{"error":{"message":"rate limit for %s","type":"%s"}}`),
		"500 html":           echo(500, "text/html", "<pre>Authorization: Bearer %s\nx-api-key: %s</pre>"),
		"400":                echo(400, "application/json", `{"error":"bad request from %s %s"}`),
		"200 malformed":      echo(200, "application/json", `{"choices": [%q, %q`),
		"200 error object":   echo(200, "application/json", `{"error":{"message":"%s","type":"%s"}}`),
		"stream error":       echo(200, "text/event-stream", "data: {\"error\":{\"message\":\"%s\",\"type\":\"%s\"}}\n\n"),
		"stream error event": echo(200, "text/event-stream", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"%s\",\"message\":\"%s\"}}\n\n"),
		"stream garbage":     echo(200, "text/event-stream", "data: %s %s\n\n"),
		"slow":               func(w http.ResponseWriter, r *http.Request) { hang(w, r) },
	}
	for name, h := range handlers {
		f := newFake(t, h)
		providers := []Provider{
			newOpenAITest(t, f.URL, func(c *HTTPConfig) { c.Timeout = 100 * time.Millisecond }),
			newAnthropicTest(t, f.URL, func(c *HTTPConfig) { c.Timeout = 100 * time.Millisecond }),
		}
		for _, p := range providers {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/stream=%v", name, p.Name(), stream), func(t *testing.T) {
					req := userReq("hi")
					req.Stream = stream
					_, err := p.Chat(context.Background(), req)
					if err == nil {
						t.Fatal("no error")
					}
					if strings.Contains(err.Error(), plantedKey) || strings.Contains(fmt.Sprintf("%#v", err), plantedKey) {
						t.Errorf("error leaks the key: %v", err)
					}
					if h := Hint(err); strings.Contains(h, plantedKey) {
						t.Errorf("hint leaks the key: %q", h)
					}
				})
			}
		}
	}
}

func TestKeyRedactedFromRaw(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","choices":[{"message":{"content":"ok"}}],"echo":%q}`, key)
	})
	p := newOpenAITest(t, f.URL)
	resp, err := p.Chat(bg(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(resp.Raw), plantedKey) {
		t.Errorf("Raw leaks the key: %s", resp.Raw)
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "model not found", want: "model not found"},
		{name: "control characters", in: "a\x1b[31mb\x00c\nd", want: `a\u001b[31mb\u0000c d`},
		{name: "bidi override", in: "x\u202ey", want: `x\u202ey`},
		{name: "invalid utf-8", in: "a\xffb", want: `a\ufffdb`},
		{name: "secret", in: "key SECRETVALUE here", want: "key [redacted] here"},
		{name: "sk- token", in: "got sk-abcdefghijkl", want: "got [redacted]"},
		{name: "bearer", in: "Authorization: Bearer abc.def.ghi", want: "[redacted]"},
		{name: "long", in: strings.Repeat("x", 1000), want: strings.Repeat("x", maxExcerpt) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := excerpt(tt.in, "SECRETVALUE"); got != tt.want {
				t.Errorf("excerpt(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHint(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&StatusError{Provider: "p", StatusCode: 401}, "rejected the key"},
		{&RateLimitError{Provider: "p", RetryAfter: 30 * time.Second}, "retry in 30s"},
		{fmt.Errorf("x: %w", ErrTimeout), "no answer in time"},
		{fmt.Errorf("x: %w: %w", ErrBadResponse, ErrTooLarge), "size cap"},
		{fmt.Errorf("x: %w", ErrBadResponse), "wire format"},
		{&StatusError{Provider: "p", StatusCode: 404}, "model name"},
		{&StatusError{Provider: "p", StatusCode: 502}, "retry later"},
		{fmt.Errorf("x: %w", ErrNoKey), "api_key_env"},
	}
	for _, tt := range tests {
		if got := Hint(tt.err); !strings.Contains(got, tt.want) {
			t.Errorf("Hint(%v) = %q, want it to contain %q", tt.err, got, tt.want)
		}
	}
}
