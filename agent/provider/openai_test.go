package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var weatherTool = ToolSchema{
	Name:        "get_weather",
	Description: "Get current temperature for a given location.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`),
}

func TestOpenAIToolCall(t *testing.T) {
	f := newFake(t, serve(200, "application/json", wire(t, "openai_response.json")))
	p := newOpenAITest(t, f.URL+"/v1")
	temp := 0.2
	resp, err := p.Chat(bg(), ChatRequest{
		System:      "You are claw.",
		Messages:    []Message{{Role: RoleUser, Content: "What is the weather like in Paris today?"}},
		Tools:       []ToolSchema{weatherTool, {Name: "time"}},
		Temperature: &temp,
		MaxTokens:   100,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := ChatResponse{
		ToolCalls:    []ToolCall{{ID: "call_12345xyz", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris, France"}`)}},
		Usage:        &Usage{InputTokens: 82, OutputTokens: 17, TotalTokens: 99},
		FinishReason: FinishToolCalls,
		Provider:     "oa",
		Model:        "gpt-4.1-2025-04-14",
	}
	if diff := cmp.Diff(want, resp, cmpResp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if !json.Valid(resp.Raw) || !strings.Contains(string(resp.Raw), "chatcmpl-abc123") {
		t.Errorf("Raw = %s, want the body", resp.Raw)
	}

	got := f.last(t)
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", got.Path)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+plantedKey {
		t.Errorf("authorization header = %q", h)
	}
	wantBody := `{"model":"gpt-test","messages":[{"role":"system","content":"You are claw."},{"role":"user","content":"What is the weather like in Paris today?"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"Get current temperature for a given location.","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}},` +
		`{"type":"function","function":{"name":"time","parameters":{"type":"object","properties":{}}}}],"temperature":0.2,"max_completion_tokens":100}`
	if string(got.Raw) != wantBody {
		t.Errorf("request body\n got %s\nwant %s", got.Raw, wantBody)
	}
}

// cmpResp ignores Raw, which tests check separately.
var cmpResp = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Raw" }, cmp.Ignore())

func TestOpenAIHistory(t *testing.T) {
	f := newFake(t, serve(200, "application/json", []byte(`{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"14 degrees."},"finish_reason":"stop"}]}`)))
	p := newOpenAITest(t, f.URL)
	resp, err := p.Chat(bg(), ChatRequest{Model: "other", Messages: []Message{
		{Role: RoleSystem, Content: "Be brief."},
		{Role: RoleUser, Content: "Weather?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris"}`)}}},
		{Role: RoleTool, ToolCallID: "call_1", Content: `{"temperature_c":14}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "14 degrees." || resp.FinishReason != FinishStop || resp.Usage != nil {
		t.Errorf("response = %+v", resp)
	}
	want := `{"model":"other","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather?"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},` +
		`{"role":"tool","content":"{\"temperature_c\":14}","tool_call_id":"call_1"}]}`
	if got := string(f.last(t).Raw); got != want {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}
}

func TestOpenAIStreamToolCall(t *testing.T) {
	// Each event in its own write, so arguments arrive in fragments.
	chunks := strings.SplitAfter(string(wire(t, "openai_stream.txt")), "\n\n")
	f := newFake(t, streamChunks(chunks...))
	p := newOpenAITest(t, f.URL)
	req := userReq("weather in Paris?")
	req.Stream = true
	req.OnDelta = func(s string) { t.Errorf("unexpected text delta %q", s) }
	resp, err := p.Chat(bg(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := ChatResponse{
		ToolCalls:    []ToolCall{{ID: "call_12345xyz", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris, France"}`)}},
		Usage:        &Usage{InputTokens: 82, OutputTokens: 17, TotalTokens: 99},
		FinishReason: FinishToolCalls, Provider: "oa", Model: "gpt-4.1",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	body := f.last(t).Body
	if body["stream"] != true || !cmp.Equal(body["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("request stream fields = %v, %v", body["stream"], body["stream_options"])
	}
}

func TestOpenAIStreamText(t *testing.T) {
	chunks := strings.SplitAfter(string(wire(t, "openai_stream_text.txt")), "\n\n")
	f := newFake(t, streamChunks(chunks...))
	p := newOpenAITest(t, f.URL)
	var deltas []string
	req := userReq("hi")
	req.Stream, req.OnDelta = true, func(s string) { deltas = append(deltas, s) }
	resp, err := p.Chat(bg(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello, world." || resp.FinishReason != FinishStop || len(resp.ToolCalls) != 0 {
		t.Errorf("response = %+v", resp)
	}
	if diff := cmp.Diff([]string{"Hello", ", wor", "ld."}, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
}

func TestOpenAICompatibleQuirks(t *testing.T) {
	t.Run("stream: no ids, arguments as object, crlf", func(t *testing.T) {
		f := newFake(t, serve(200, "text/event-stream", wire(t, "openai_stream_quirks.txt")))
		p := newOpenAITest(t, f.URL)
		req := userReq("look")
		req.Stream = true
		first, err := p.Chat(bg(), req)
		if err != nil {
			t.Fatal(err)
		}
		second, err := p.Chat(bg(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(first.ToolCalls) != 2 {
			t.Fatalf("tool calls = %+v", first.ToolCalls)
		}
		a, b := first.ToolCalls[0], first.ToolCalls[1]
		if a.Name != "file_list" || string(a.Arguments) != `{"path":"."}` || b.Name != "file_read" || string(b.Arguments) != `{"path":"notes.txt"}` {
			t.Errorf("tool calls = %s %s, %s %s", a.Name, a.Arguments, b.Name, b.Arguments)
		}
		if a.ID == "" || b.ID == "" || a.ID == b.ID {
			t.Errorf("generated ids %q, %q: want distinct and non-empty", a.ID, b.ID)
		}
		if !cmp.Equal(first.ToolCalls, second.ToolCalls) {
			t.Errorf("ids are not stable: %v vs %v", first.ToolCalls, second.ToolCalls)
		}
	})
	t.Run("whole response: arguments as object, no id, content parts", func(t *testing.T) {
		f := newFake(t, serve(200, "application/json", []byte(`{"id":"r","choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
			"tool_calls":[{"function":{"name":"shell","arguments":{"command":"ls"}}},{"function":{"name":"time","arguments":""}},{"function":{"name":"bad","arguments":"{not json"}}]}}]}`)))
		p := newOpenAITest(t, f.URL)
		resp, err := p.Chat(bg(), userReq("x"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "ab" || len(resp.ToolCalls) != 3 {
			t.Fatalf("response = %+v", resp)
		}
		got := []string{string(resp.ToolCalls[0].Arguments), string(resp.ToolCalls[1].Arguments), string(resp.ToolCalls[2].Arguments)}
		want := []string{`{"command":"ls"}`, `{}`, `"{not json"`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("arguments (-want +got):\n%s", diff)
		}
		for _, c := range resp.ToolCalls {
			if !strings.HasPrefix(c.ID, "call_") {
				t.Errorf("id %q not generated", c.ID)
			}
		}
	})
	t.Run("json answer to a stream request", func(t *testing.T) {
		f := newFake(t, serve(200, "application/json", []byte(`{"id":"r","choices":[{"message":{"content":"whole"},"finish_reason":"stop"}]}`)))
		p := newOpenAITest(t, f.URL)
		var deltas []string
		req := userReq("x")
		req.Stream, req.OnDelta = true, func(s string) { deltas = append(deltas, s) }
		resp, err := p.Chat(bg(), req)
		if err != nil || resp.Text != "whole" || len(deltas) != 1 {
			t.Fatalf("resp %+v, deltas %q, err %v", resp, deltas, err)
		}
	})
	t.Run("no key, no authorization header", func(t *testing.T) {
		f := newFake(t, serve(200, "application/json", []byte(`{"choices":[{"message":{"content":"ok"}}]}`)))
		p := newOpenAITest(t, f.URL, func(c *HTTPConfig) { c.APIKey = "" })
		if _, err := p.Chat(bg(), userReq("x")); err != nil {
			t.Fatal(err)
		}
		if h, ok := f.last(t).Header["Authorization"]; ok {
			t.Errorf("authorization header sent: %q", h)
		}
	})
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		stream  bool
		mod     func(*HTTPConfig)
		ctx     func() (context.Context, context.CancelFunc)
		is      []error
		check   func(t *testing.T, err error)
	}{
		{
			name:    "401",
			handler: serve(401, "application/json", []byte(`{"error":{"message":"Incorrect API key provided: sk-test-***7b.","type":"invalid_request_error","code":"invalid_api_key"}}`)),
			is:      []error{ErrAuth},
		},
		{
			name:    "403",
			handler: serve(403, "text/plain", []byte("forbidden")),
			is:      []error{ErrAuth},
		},
		{
			name:    "400 bad request",
			handler: serve(400, "application/json", []byte(`{"error":{"message":"Unknown parameter","type":"invalid_request_error"}}`)),
			is:      []error{ErrBadRequest},
			check: func(t *testing.T, err error) {
				if !strings.Contains(err.Error(), "Unknown parameter") {
					t.Errorf("error %q lacks the server's message", err)
				}
			},
		},
		{
			// Longer than maxRetryAfter, so returned without a retry.
			name: "429 retry-after seconds",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "42")
				serve(429, "application/json", []byte(`{"error":{"message":"Rate limit reached","type":"requests"}}`))(w, r)
			},
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter != 42*time.Second {
					t.Errorf("err = %#v, want RateLimitError with 42s", err)
				}
			},
		},
		{
			name: "429 retry-after date",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
				w.WriteHeader(429)
			},
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter < 80*time.Second || rl.RetryAfter > 91*time.Second {
					t.Errorf("err = %#v, want RateLimitError with about 90s", err)
				}
			},
		},
		{
			name:    "500",
			handler: serve(500, "text/html", []byte("<html>\x1b[31mboom\n"+strings.Repeat("x", 5000)+"</html>")),
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 500 {
					t.Fatalf("err = %#v, want StatusError 500", err)
				}
				if len(se.Message) > maxExcerpt+8 || strings.ContainsAny(se.Message, "\x1b\n") {
					t.Errorf("excerpt not bounded or not escaped: %q", se.Message)
				}
				if errors.Is(err, ErrBadRequest) || errors.Is(err, ErrAuth) {
					t.Errorf("500 classified as a client error")
				}
			},
		},
		{
			name:    "malformed json",
			handler: serve(200, "application/json", []byte(`{"choices":[{"message":`)),
			is:      []error{ErrBadResponse},
		},
		{
			name:    "no choices",
			handler: serve(200, "application/json", []byte(`{"id":"x","choices":[]}`)),
			is:      []error{ErrBadResponse},
		},
		{
			name:    "error object with status 200",
			handler: serve(200, "application/json", []byte(`{"error":{"message":"model overloaded","code":503}}`)),
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 503 {
					t.Errorf("err = %#v, want StatusError 503", err)
				}
			},
		},
		{
			name:    "oversized body",
			handler: serve(200, "application/json", []byte(`{"choices":[{"message":{"content":"`+strings.Repeat("a", 3000)+`"}}]}`)),
			mod:     func(c *HTTPConfig) { c.MaxResponseBytes = 1000 },
			is:      []error{ErrTooLarge, ErrBadResponse},
		},
		{
			name:    "oversized stream",
			stream:  true,
			handler: serve(200, "text/event-stream", []byte(strings.Repeat(`data: {"choices":[{"index":0,"delta":{"content":"aaaaaaaaaa"}}]}`+"\n\n", 200))),
			mod:     func(c *HTTPConfig) { c.MaxResponseBytes = 1000 },
			is:      []error{ErrTooLarge, ErrBadResponse},
		},
		{
			name:    "error mid-stream",
			stream:  true,
			handler: streamChunks(`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}`+"\n\n", `data: {"error":{"message":"upstream overloaded","type":"server_error"}}`+"\n\n"),
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 500 || !strings.Contains(se.Message, "upstream overloaded") {
					t.Errorf("err = %#v, want StatusError 500", err)
				}
			},
		},
		{
			name:    "stream cut before done",
			stream:  true,
			handler: streamChunks(`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n"),
			is:      []error{ErrBadResponse},
		},
		{
			name:    "stream chunk not json",
			stream:  true,
			handler: streamChunks("data: {oops\n\n"),
			is:      []error{ErrBadResponse},
		},
		{
			name:    "slow server, caller deadline",
			handler: hang,
			ctx:     func() (context.Context, context.CancelFunc) { return context.WithTimeout(bg(), 50*time.Millisecond) },
			is:      []error{ErrTimeout},
		},
		{
			name:   "slow stream, provider timeout",
			stream: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				streamChunks(`data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}`+"\n\n")(w, r)
				hang(w, r)
			},
			mod: func(c *HTTPConfig) { c.Timeout = 50 * time.Millisecond },
			is:  []error{ErrTimeout},
		},
		{
			name:    "caller cancels",
			handler: hang,
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(bg())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			},
			is: []error{context.Canceled},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.handler)
			var mods []func(*HTTPConfig)
			if tt.mod != nil {
				mods = append(mods, tt.mod)
			}
			p := newOpenAITest(t, f.URL, mods...)
			ctx, cancel := context.WithCancel(bg())
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			req := userReq("hi")
			req.Stream = tt.stream
			_, err := p.Chat(ctx, req)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.is {
				if !errors.Is(err, want) {
					t.Errorf("err = %v, want it to match %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), `"oa"`) {
				t.Errorf("error %q does not name the provider", err)
			}
			if strings.Contains(err.Error(), plantedKey) {
				t.Errorf("error leaks the key: %q", err)
			}
			if tt.check != nil {
				tt.check(t, err)
			}
		})
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	f := newFake(t, hang)
	url := f.URL
	f.Close()
	p := newOpenAITest(t, url)
	_, err := p.Chat(bg(), userReq("hi"))
	if !errors.Is(err, ErrNetwork) || !Retryable(err) {
		t.Fatalf("err = %v, want ErrNetwork", err)
	}
	if strings.Contains(err.Error(), "/chat/completions") {
		t.Errorf("error quotes the URL: %q", err)
	}
}

func TestOpenAIRequestErrors(t *testing.T) {
	p := newOpenAITest(t, "http://127.0.0.1:1", func(c *HTTPConfig) { c.Model = "" })
	if _, err := p.Chat(bg(), userReq("x")); !errors.Is(err, ErrBadRequest) {
		t.Errorf("no model: err = %v", err)
	}
	p = newOpenAITest(t, "http://127.0.0.1:1")
	if _, err := p.Chat(bg(), ChatRequest{Messages: []Message{{Role: RoleTool, Content: "x"}}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("tool result without id: err = %v", err)
	}
	if _, err := p.Chat(bg(), ChatRequest{Messages: []Message{{Role: "robot"}}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("unknown role: err = %v", err)
	}
	for _, c := range []HTTPConfig{
		{BaseURL: "ftp://x"},
		{BaseURL: "http://user:" + plantedKey + "@127.0.0.1/"},
		{BaseURL: "http://127.0.0.1", Headers: map[string]string{"Authorization": "Bearer x"}},
	} {
		if _, err := NewOpenAI(c); err == nil || strings.Contains(err.Error(), plantedKey) {
			t.Errorf("NewOpenAI(%q): err = %v", c.BaseURL, err)
		}
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	target := newFake(t, serve(200, "application/json", []byte(`{"choices":[{"message":{"content":"ok"}}]}`)))
	redirect := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	for _, p := range []Provider{newOpenAITest(t, redirect.URL), newAnthropicTest(t, redirect.URL)} {
		_, err := p.Chat(bg(), userReq("hi"))
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != http.StatusTemporaryRedirect {
			t.Errorf("%s: err = %v, want StatusError 307", p.Name(), err)
		}
	}
	target.mu.Lock()
	defer target.mu.Unlock()
	if len(target.reqs) != 0 {
		t.Errorf("the redirect target received %d requests", len(target.reqs))
	}
}

func TestProbe(t *testing.T) {
	resp, err := Probe(bg(), NewMock("", nil))
	if err != nil || resp.Text == "" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	f := newFake(t, serve(401, "application/json", []byte(`{"error":{"message":"no"}}`)))
	if _, err := Probe(bg(), newOpenAITest(t, f.URL)); !errors.Is(err, ErrAuth) || !strings.Contains(Hint(err), "api_key_env") {
		t.Errorf("err = %v, hint %q", err, Hint(err))
	}
}
