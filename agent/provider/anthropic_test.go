package provider

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnthropicToolUse(t *testing.T) {
	f := newFake(t, serve(200, "application/json", wire(t, "anthropic_response.json")))
	p := newAnthropicTest(t, f.URL)
	resp, err := p.Chat(bg(), ChatRequest{
		System:   "You are claw.",
		Messages: []Message{{Role: RoleUser, Content: "What is the weather like in San Francisco?"}},
		Tools:    []ToolSchema{{Name: "time"}, weatherTool},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := ChatResponse{
		Text:         "I'll check the current weather in San Francisco for you.",
		ToolCalls:    []ToolCall{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"location":"San Francisco, CA"}`)}},
		Usage:        &Usage{InputTokens: 384, OutputTokens: 58, TotalTokens: 442},
		FinishReason: FinishToolCalls, Provider: "an", Model: "claude-sonnet-4-5",
	}
	if diff := cmp.Diff(want, resp, cmpResp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	got := f.last(t)
	if got.Path != "/v1/messages" {
		t.Errorf("path = %q", got.Path)
	}
	for k, v := range map[string]string{"X-Api-Key": plantedKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"} {
		if h := got.Header.Get(k); h != v {
			t.Errorf("header %s = %q, want %q", k, h, v)
		}
	}
	if got.Header.Get("Authorization") != "" {
		t.Error("authorization header sent to anthropic")
	}
	wantBody := `{"model":"claude-test","max_tokens":4096,` +
		`"system":[{"type":"text","text":"You are claw.","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"time","input_schema":{"type":"object","properties":{}}},` +
		`{"name":"get_weather","description":"Get current temperature for a given location.","input_schema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]},"cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"What is the weather like in San Francisco?"}]}]}`
	if string(got.Raw) != wantBody {
		t.Errorf("request body\n got %s\nwant %s", got.Raw, wantBody)
	}
}

func TestAnthropicHistory(t *testing.T) {
	f := newFake(t, serve(200, "application/json", []byte(`{"id":"m","type":"message","model":"c","content":[{"type":"text","text":"15 degrees, and no."}],"stop_reason":"end_turn"}`)))
	p := newAnthropicTest(t, f.URL)
	resp, err := p.Chat(bg(), ChatRequest{MaxTokens: 50, Messages: []Message{
		{Role: RoleUser, Content: "Weather, and delete /etc?"},
		{Role: RoleAssistant, Content: "Checking.", ToolCalls: []ToolCall{
			{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"location":"SF"}`)},
			{ID: "toolu_2", Name: "shell", Arguments: json.RawMessage(`"{broken"`)},
		}},
		{Role: RoleTool, ToolCallID: "toolu_1", Content: "15 degrees"},
		{Role: RoleTool, ToolCallID: "toolu_2", Content: "denied by policy: rule shell.rm", IsError: true},
		{Role: RoleUser, Content: "Thanks."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "15 degrees, and no." || resp.FinishReason != FinishStop {
		t.Errorf("response = %+v", resp)
	}
	want := `{"model":"claude-test","max_tokens":50,"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Weather, and delete /etc?"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"location":"SF"}},{"type":"tool_use","id":"toolu_2","name":"shell","input":{"_raw":"{broken"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"15 degrees"},{"type":"tool_result","tool_use_id":"toolu_2","content":"denied by policy: rule shell.rm","is_error":true},{"type":"text","text":"Thanks."}]}]}`
	if got := string(f.last(t).Raw); got != want {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}
}

func TestAnthropicStream(t *testing.T) {
	tests := []struct {
		name       string
		fixture    string
		want       ChatResponse
		wantDeltas []string
	}{
		{
			name:    "tool use with input_json_delta and ping",
			fixture: "anthropic_stream.txt",
			want: ChatResponse{
				ToolCalls:    []ToolCall{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: json.RawMessage(`{"location":"San Francisco, CA"}`)}},
				Usage:        &Usage{InputTokens: 384, OutputTokens: 58, TotalTokens: 442},
				FinishReason: FinishToolCalls, Provider: "an", Model: "claude-sonnet-4-5",
			},
		},
		{
			name:    "text deltas",
			fixture: "anthropic_stream_text.txt",
			want: ChatResponse{
				Text:         "Hello, world.",
				Usage:        &Usage{InputTokens: 12, OutputTokens: 6, TotalTokens: 2066, CacheReadInputTokens: 2048},
				FinishReason: FinishStop, Provider: "an", Model: "claude-sonnet-4-5",
			},
			wantDeltas: []string{"Hello", ", world."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, streamChunks(strings.SplitAfter(string(wire(t, tt.fixture)), "\n\n")...))
			p := newAnthropicTest(t, f.URL)
			var deltas []string
			req := userReq("hi")
			req.Stream, req.OnDelta = true, func(s string) { deltas = append(deltas, s) }
			resp, err := p.Chat(bg(), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDeltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
			if f.last(t).Body["stream"] != true {
				t.Error("stream not requested")
			}
		})
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		stream  bool
		check   func(t *testing.T, err error)
	}{
		{
			name:    "error event mid-stream",
			stream:  true,
			handler: streamChunks(strings.SplitAfter(string(wire(t, "anthropic_stream_error.txt")), "\n\n")...),
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 529 || se.Type != "overloaded_error" || !Retryable(err) {
					t.Errorf("err = %#v, want StatusError 529 overloaded_error", err)
				}
			},
		},
		{
			name:    "rate limit event mid-stream",
			stream:  true,
			handler: streamChunks("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n"),
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) {
					t.Errorf("err = %#v, want RateLimitError", err)
				}
			},
		},
		{
			name: "429 with retry-after",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("retry-after", "30") // more than maxRetryAfter: no retry
				serve(429, "application/json", []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`))(w, r)
			},
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter.Seconds() != 30 || !strings.Contains(rl.Message, "per-minute") {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name:    "529 overloaded",
			handler: serve(529, "application/json", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 529 || se.Type != "overloaded_error" {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name:    "401",
			handler: serve(401, "application/json", []byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)),
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrAuth) {
					t.Errorf("err = %v, want ErrAuth", err)
				}
			},
		},
		{
			name:    "error body with status 200",
			handler: serve(200, "application/json", []byte(`{"type":"error","error":{"type":"api_error","message":"internal"}}`)),
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 500 {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name:    "malformed json",
			handler: serve(200, "application/json", []byte(`{"type":"message","content":[`)),
			check:   isErr(ErrBadResponse),
		},
		{
			name:    "not a message",
			handler: serve(200, "application/json", []byte(`{"type":"completion"}`)),
			check:   isErr(ErrBadResponse),
		},
		{
			name:    "stream without message_stop",
			stream:  true,
			handler: streamChunks(strings.SplitAfter(string(wire(t, "anthropic_stream.txt")), "event: message_stop")[0]),
			check:   isErr(ErrBadResponse),
		},
		{
			name:    "delta for an unknown block",
			stream:  true,
			handler: streamChunks("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"),
			check:   isErr(ErrBadResponse),
		},
		{
			name:    "invalid partial json",
			stream:  true,
			handler: streamChunks(strings.ReplaceAll(string(wire(t, "anthropic_stream.txt")), `ncisco, CA\"}`, `ncisco`)),
			check: func(t *testing.T, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("err = %v; malformed arguments must reach the caller, not fail the call", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.handler)
			p := newAnthropicTest(t, f.URL)
			req := userReq("hi")
			req.Stream = tt.stream
			resp, err := p.Chat(bg(), req)
			if tt.name == "invalid partial json" {
				tt.check(t, err)
				if len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `"{\"location\": \"San Francisco"` {
					t.Errorf("tool calls = %+v", resp.ToolCalls)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), plantedKey) {
				t.Errorf("error leaks the key: %q", err)
			}
			tt.check(t, err)
		})
	}
}

func isErr(target error) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("err = %v, want %v", err, target)
		}
	}
}
