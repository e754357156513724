package provider

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func scripted(t *testing.T, name, script string) *Mock {
	t.Helper()
	s, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return NewMock(name, s)
}

func TestReliableFallback(t *testing.T) {
	slow := newFake(t, hang)
	unauthorized := newFake(t, serve(401, "application/json", []byte(`{"error":{"message":"bad key"}}`)))
	limited := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30") // too long to wait out: fall back at once
		w.WriteHeader(429)
	})
	broken := newFake(t, serve(502, "text/plain", []byte("bad gateway")))
	garbage := newFake(t, serve(200, "application/json", []byte("<html>")))
	badRequest := newFake(t, serve(400, "application/json", []byte(`{"error":{"message":"bad"}}`)))
	ok := scripted(t, "ok", "default: {reply: fine}")

	tests := []struct {
		name       string
		first      Provider
		wantFall   bool
		wantReason string
	}{
		{name: "timeout", first: newOpenAITest(t, slow.URL, func(c *HTTPConfig) { c.Timeout = 50 * time.Millisecond }), wantFall: true, wantReason: "timeout"},
		{name: "auth", first: newOpenAITest(t, unauthorized.URL), wantFall: true, wantReason: "auth"},
		{name: "429", first: newAnthropicTest(t, limited.URL), wantFall: true, wantReason: "rate_limit"},
		{name: "5xx", first: newOpenAITest(t, broken.URL), wantFall: true, wantReason: "http_502"},
		{name: "malformed", first: newOpenAITest(t, garbage.URL), wantFall: true, wantReason: "bad_response"},
		{name: "network", first: scripted(t, "net", "default: {error: network}"), wantFall: true, wantReason: "network"},
		{name: "400 does not fall back", first: newOpenAITest(t, badRequest.URL), wantFall: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logbuf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logbuf, nil))
			r, err := NewReliable(log, tt.first, ok)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := r.Chat(bg(), userReq("hi"))
			if !tt.wantFall {
				if !errors.Is(err, ErrBadRequest) || logbuf.Len() != 0 {
					t.Fatalf("err = %v, log %q: want the 400 returned without fallback", err, logbuf.String())
				}
				return
			}
			if err != nil || resp.Text != "fine" || resp.Provider != "ok" {
				t.Fatalf("resp = %+v, err = %v", resp, err)
			}
			line := logbuf.String()
			for _, want := range []string{`"msg":"provider failed, falling back"`, `"level":"WARN"`, `"provider":"` + tt.first.Name() + `"`, `"next":"ok"`, `"reason":"` + tt.wantReason + `"`} {
				if !strings.Contains(line, want) {
					t.Errorf("log %s lacks %s", line, want)
				}
			}
			if strings.Contains(line, plantedKey) {
				t.Errorf("log leaks the key: %s", line)
			}
		})
	}
	// A retry-after too long to wait out goes to the next provider at
	// once; a 5xx is first retried by the client itself.
	if n := limited.count(); n != 1 {
		t.Errorf("the rate-limited server received %d requests, want 1", n)
	}
	if n := broken.count(); n != maxRetries+1 {
		t.Errorf("the failing server received %d requests, want %d", n, maxRetries+1)
	}
}

func TestReliableAllFail(t *testing.T) {
	a := scripted(t, "a", "default: {error: server}")
	b := scripted(t, "b", "default: {error: auth}")
	r, err := NewReliable(nil, a, b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Chat(bg(), userReq("x"))
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "all 2 providers failed") {
		t.Fatalf("err = %v, want the last error (auth)", err)
	}
	if r.Name() != "reliable(a,b)" {
		t.Errorf("name = %q", r.Name())
	}
}

func TestReliableStopsWhenCallerCancels(t *testing.T) {
	slow := scripted(t, "slow", "default: {reply: x, delay: 1h}")
	calledSecond := false
	second := providerFunc(func(ctx context.Context, req ChatRequest) (ChatResponse, error) {
		calledSecond = true
		return ChatResponse{}, nil
	})
	r, _ := NewReliable(nil, slow, second)
	ctx, cancel := context.WithCancel(bg())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := r.Chat(ctx, userReq("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if calledSecond {
		t.Error("fell back after the caller cancelled")
	}
}

func TestReliableCapabilities(t *testing.T) {
	f := newFake(t, hang)
	r, _ := NewReliable(nil, newAnthropicTest(t, f.URL), NewMock("", nil))
	c := r.Capabilities()
	if !c.Tools || !c.Streaming || c.PromptCaching || !c.Network {
		t.Errorf("capabilities = %+v", c)
	}
	if _, err := NewReliable(nil); err == nil {
		t.Error("empty reliable accepted")
	}
}

// providerFunc adapts a function to Provider for composite tests.
type providerFunc func(context.Context, ChatRequest) (ChatResponse, error)

func (f providerFunc) Name() string               { return "func" }
func (f providerFunc) Capabilities() Capabilities { return Capabilities{} }
func (f providerFunc) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	return f(ctx, req)
}

// TestRouter: a route may be named after an explicit hint, a purpose or a
// channel; the hint comes first, then the purpose, then the channel.
func TestRouter(t *testing.T) {
	def := scripted(t, "main", "default: {reply: main}")
	r, err := NewRouter(nil, def, map[string]Provider{
		"fast":    scripted(t, "fast", "default: {reply: fast}"),
		"summary": scripted(t, "cheap", "default: {reply: cheap}"),
		"serve":   scripted(t, "daemon", "default: {reply: daemon}"),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		meta map[string]string
		want string
	}{
		{name: "no metadata", want: "main"},
		{name: "hint", meta: map[string]string{"route": "fast"}, want: "fast"},
		{name: "unknown hint", meta: map[string]string{"route": "slow"}, want: "main"},
		{name: "other keys", meta: map[string]string{"x": "fast"}, want: "main"},
		{name: "chat on cli", meta: map[string]string{PurposeKey: PurposeChat, ChannelKey: "cli"}, want: "main"},
		{name: "summary on cli", meta: map[string]string{PurposeKey: PurposeSummary, ChannelKey: "cli"}, want: "cheap"},
		{name: "chat on serve", meta: map[string]string{PurposeKey: PurposeChat, ChannelKey: "serve"}, want: "daemon"},
		{name: "purpose before channel", meta: map[string]string{PurposeKey: PurposeSummary, ChannelKey: "serve"}, want: "cheap"},
		{name: "hint before purpose", meta: map[string]string{RouteKey: "fast", PurposeKey: PurposeSummary}, want: "fast"},
		{name: "unknown hint, known purpose", meta: map[string]string{RouteKey: "slow", PurposeKey: PurposeSummary}, want: "cheap"},
		{name: "probe", meta: map[string]string{PurposeKey: PurposeProbe}, want: "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := userReq("x")
			req.Metadata = tt.meta
			resp, err := r.Chat(bg(), req)
			if err != nil || resp.Text != tt.want || resp.Provider != tt.want {
				t.Errorf("resp = %+v, err = %v; want %s", resp, err, tt.want)
			}
		})
	}
	if r.Name() != "router(main;fast=fast,serve=daemon,summary=cheap)" {
		t.Errorf("name = %q", r.Name())
	}
	if _, err := NewRouter(nil, nil, nil); err == nil {
		t.Error("router without default accepted")
	}
}
