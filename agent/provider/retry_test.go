package provider

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// retryClient is one HTTP client speaking its wire format, streamed or
// not, with the answers a fake server needs to exercise its retries.
type retryClient struct {
	name   string
	stream bool
	build  func(t *testing.T, url string, mod func(*HTTPConfig)) Provider
	// ok answers "Hello, world.".
	ok http.HandlerFunc
	// errBody is an error body of the given type in the wire format.
	errBody func(typ, msg string) string
	// midStream delivers a fragment, then fails with an overloaded
	// error (streams only).
	midStream  http.HandlerFunc
	firstDelta string
}

func retryClients(t *testing.T) []retryClient {
	oaErr := func(typ, msg string) string {
		return fmt.Sprintf(`{"error":{"message":%q,"type":%q}}`, msg, typ)
	}
	anErr := func(typ, msg string) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
	}
	oaChunks := strings.SplitAfter(string(wire(t, "openai_stream_text.txt")), "\n\n")
	anChunks := strings.SplitAfter(string(wire(t, "anthropic_stream_text.txt")), "\n\n")
	newOA := func(t *testing.T, url string, mod func(*HTTPConfig)) Provider { return newOpenAITest(t, url, mod) }
	newAN := func(t *testing.T, url string, mod func(*HTTPConfig)) Provider { return newAnthropicTest(t, url, mod) }
	oaOK := serve(200, "application/json", []byte(`{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello, world."},"finish_reason":"stop"}]}`))
	anOK := serve(200, "application/json", []byte(`{"id":"m","type":"message","model":"c","content":[{"type":"text","text":"Hello, world."}],"stop_reason":"end_turn"}`))
	return []retryClient{
		{name: "openai", build: newOA, ok: oaOK, errBody: oaErr},
		{
			name: "openai/stream", stream: true, build: newOA, ok: streamChunks(oaChunks...), errBody: oaErr,
			midStream:  streamChunks(oaChunks[0], oaChunks[1], `data: {"error":{"message":"upstream overloaded","type":"server_error","code":503}}`+"\n\n"),
			firstDelta: "Hello",
		},
		{name: "anthropic", build: newAN, ok: anOK, errBody: anErr},
		{
			name: "anthropic/stream", stream: true, build: newAN, ok: streamChunks(anChunks...), errBody: anErr,
			midStream:  streamChunks(strings.SplitAfter(string(wire(t, "anthropic_stream_error.txt")), "\n\n")...),
			firstDelta: "Hel",
		},
	}
}

// sequence answers the nth request with the nth handler, and every later
// one with the last.
func sequence(hs ...http.HandlerFunc) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		i := min(int(n.Add(1))-1, len(hs)-1)
		hs[i](w, r)
	}
}

// failWith answers with an error status and body, the given headers,
// and the caller's key in the message, which must reach no log.
func failWith(status int, body func(typ, msg string) string, typ string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if key == "" {
			key = r.Header.Get("X-Api-Key")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		serve(status, "application/json", []byte(body(typ, "failed for "+key)))(w, r)
	}
}

// dropConnection closes the connection without an answer.
func dropConnection(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// promptMarker is in every request; it must reach no log.
const promptMarker = "weather in Paris, PROMPT-MARKER"

func TestRetry(t *testing.T) {
	rateLimited := func(c retryClient, after string) http.HandlerFunc {
		return failWith(429, c.errBody, "rate_limit_error", "Retry-After", after)
	}
	unavailable := func(c retryClient) http.HandlerFunc { return failWith(503, c.errBody, "overloaded_error") }
	backoff := retryBackoff[0] + retryBackoff[1]
	tests := []struct {
		name    string
		handler func(c retryClient) http.HandlerFunc
		// streamOnly: run for the streamed clients only
		streamOnly bool
		ctx        func() (context.Context, context.CancelFunc)
		mod        func(*HTTPConfig)
		// wantRequests is counted on the server; wantRetries in the log.
		wantRequests, wantRetries int
		// wantWait is the least time the call must take.
		wantWait time.Duration
		// check judges an error; nil means the call must succeed.
		check func(t *testing.T, err error)
	}{
		{
			name:         "429 retry-after 0, then the answer",
			handler:      func(c retryClient) http.HandlerFunc { return sequence(rateLimited(c, "0"), c.ok) },
			wantRequests: 2, wantRetries: 1,
		},
		{
			name:         "429 retry-after 1, then the answer",
			handler:      func(c retryClient) http.HandlerFunc { return sequence(rateLimited(c, "1"), c.ok) },
			wantRequests: 2, wantRetries: 1, wantWait: time.Second,
		},
		{
			name: "429 retry-after-ms, then the answer",
			handler: func(c retryClient) http.HandlerFunc {
				return sequence(failWith(429, c.errBody, "rate_limit_error", "Retry-After-Ms", "80"), c.ok)
			},
			wantRequests: 2, wantRetries: 1, wantWait: 80 * time.Millisecond,
		},
		{
			name:         "503 twice, then the answer",
			handler:      func(c retryClient) http.HandlerFunc { return sequence(unavailable(c), unavailable(c), c.ok) },
			wantRequests: 3, wantRetries: 2, wantWait: backoff * 8 / 10,
		},
		{
			name:         "connection dropped, then the answer",
			handler:      func(c retryClient) http.HandlerFunc { return sequence(dropConnection, c.ok) },
			wantRequests: 2, wantRetries: 1,
		},
		{
			name:         "503 three times",
			handler:      unavailable,
			wantRequests: 3, wantRetries: 2, wantWait: backoff * 8 / 10,
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 503 {
					t.Errorf("err = %v, want StatusError 503", err)
				}
			},
		},
		{
			name:         "429 retry-after 60",
			handler:      func(c retryClient) http.HandlerFunc { return rateLimited(c, "60") },
			wantRequests: 1,
			check: func(t *testing.T, err error) {
				var rl *RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter != 60*time.Second || !strings.Contains(Hint(err), "retry in 1m0s") {
					t.Errorf("err = %v, hint %q: want RateLimitError with 60s", err, Hint(err))
				}
			},
		},
		{
			name: "503 retry-after 60",
			handler: func(c retryClient) http.HandlerFunc {
				return failWith(503, c.errBody, "overloaded_error", "Retry-After", "60")
			},
			wantRequests: 1,
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != 503 {
					t.Errorf("err = %v, want StatusError 503", err)
				}
			},
		},
		{
			name:         "400",
			handler:      func(c retryClient) http.HandlerFunc { return failWith(400, c.errBody, "invalid_request_error") },
			wantRequests: 1, check: isErr(ErrBadRequest),
		},
		{
			name:         "401",
			handler:      func(c retryClient) http.HandlerFunc { return failWith(401, c.errBody, "authentication_error") },
			wantRequests: 1, check: isErr(ErrAuth),
		},
		{
			name:         "403",
			handler:      func(c retryClient) http.HandlerFunc { return failWith(403, c.errBody, "permission_error") },
			wantRequests: 1, check: isErr(ErrAuth),
		},
		{
			name:         "404",
			handler:      func(c retryClient) http.HandlerFunc { return failWith(404, c.errBody, "not_found_error") },
			wantRequests: 1, check: isErr(ErrBadRequest),
		},
		{
			name:         "stream fails after a delta",
			streamOnly:   true,
			handler:      func(c retryClient) http.HandlerFunc { return c.midStream },
			wantRequests: 1,
			check: func(t *testing.T, err error) {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode < 500 {
					t.Errorf("err = %v, want a 5xx StatusError", err)
				}
			},
		},
		{
			// Had the client waited, the deadline would have passed
			// and the error would be ErrTimeout.
			name:         "deadline sooner than retry-after",
			handler:      func(c retryClient) http.HandlerFunc { return rateLimited(c, "5") },
			ctx:          func() (context.Context, context.CancelFunc) { return context.WithTimeout(bg(), 500*time.Millisecond) },
			wantRequests: 1,
			check:        rateLimitedNotTimedOut(5 * time.Second),
		},
		{
			name:         "provider timeout sooner than retry-after",
			handler:      func(c retryClient) http.HandlerFunc { return rateLimited(c, "5") },
			mod:          func(c *HTTPConfig) { c.Timeout = 500 * time.Millisecond },
			wantRequests: 1,
			check:        rateLimitedNotTimedOut(5 * time.Second),
		},
		{
			name:    "cancelled while waiting",
			handler: func(c retryClient) http.HandlerFunc { return rateLimited(c, "5") },
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(bg())
				time.AfterFunc(50*time.Millisecond, cancel)
				return ctx, cancel
			},
			wantRequests: 1, wantRetries: 1,
			check: isErr(context.Canceled),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range retryClients(t) {
				if tt.streamOnly && !c.stream {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					f := newFake(t, tt.handler(c))
					var logbuf syncBuffer
					p := c.build(t, f.URL, func(hc *HTTPConfig) {
						hc.Log = slog.New(slog.NewJSONHandler(&logbuf, nil))
						if tt.mod != nil {
							tt.mod(hc)
						}
					})
					ctx, cancel := context.WithCancel(bg())
					if tt.ctx != nil {
						ctx, cancel = tt.ctx()
					}
					defer cancel()
					var deltas []string
					req := userReq(promptMarker)
					req.Stream = c.stream
					req.OnDelta = func(s string) { deltas = append(deltas, s) }

					start := time.Now()
					resp, err := p.Chat(ctx, req)
					elapsed := time.Since(start)

					if tt.check == nil {
						if err != nil {
							t.Fatalf("err = %v", err)
						}
						if resp.Text != "Hello, world." {
							t.Errorf("text = %q", resp.Text)
						}
						if got := strings.Join(deltas, ""); c.stream && got != "Hello, world." {
							t.Errorf("deltas = %q: want each fragment once", deltas)
						}
					} else {
						if err == nil {
							t.Fatal("no error")
						}
						tt.check(t, err)
						if strings.Contains(err.Error(), plantedKey) {
							t.Errorf("error leaks the key: %v", err)
						}
					}
					if tt.streamOnly && (len(deltas) != 1 || deltas[0] != c.firstDelta) {
						t.Errorf("deltas = %q, want [%q] once", deltas, c.firstDelta)
					}
					if n := f.count(); n != tt.wantRequests {
						t.Errorf("server received %d requests, want %d", n, tt.wantRequests)
					}
					if elapsed < tt.wantWait {
						t.Errorf("call took %s, want at least %s", elapsed, tt.wantWait)
					}
					checkRetryLog(t, logbuf.String(), p.Name(), tt.wantRetries)
				})
			}
		})
	}
}

func rateLimitedNotTimedOut(after time.Duration) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var rl *RateLimitError
		if !errors.As(err, &rl) || rl.RetryAfter != after || errors.Is(err, ErrTimeout) {
			t.Errorf("err = %v, want the RateLimitError with %s at once", err, after)
		}
	}
}

// checkRetryLog checks there is one warning per retry, with the fields an
// operator needs and neither the key nor the prompt.
func checkRetryLog(t *testing.T, log, provider string, want int) {
	t.Helper()
	if strings.Contains(log, plantedKey) || strings.Contains(log, "PROMPT-MARKER") {
		t.Errorf("log leaks the key or the prompt: %s", log)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != want {
		t.Fatalf("log has %d lines, want %d retries:\n%s", len(lines), want, log)
	}
	for i, m := range lines {
		if m["level"] != "WARN" || m["msg"] != "provider request failed, retrying" || m["provider"] != provider {
			t.Errorf("log line %d = %v", i, m)
		}
		if m["attempt"] != float64(i+1) || m["max_attempts"] != float64(maxRetries+1) {
			t.Errorf("log line %d: attempt %v of %v, want %d of %d", i, m["attempt"], m["max_attempts"], i+1, maxRetries+1)
		}
		if _, ok := m["wait"].(float64); !ok {
			t.Errorf("log line %d has no wait: %v", i, m)
		}
		switch m["reason"] {
		case "rate_limit", "network":
		case "http_503":
			if m["status"] != float64(503) {
				t.Errorf("log line %d: status %v, want 503", i, m["status"])
			}
		default:
			t.Errorf("log line %d: reason %v", i, m["reason"])
		}
	}
}

// syncBuffer is a bytes.Buffer that a handler may write while a test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRetryWait(t *testing.T) {
	expired, cancel := context.WithCancel(bg())
	cancel()
	soon, cancel := context.WithTimeout(bg(), 2*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		attempt int
		f       failure
		want    time.Duration // -1: no retry; 0 with ok: at once
		jitter  bool
	}{
		{name: "retry-after honoured", attempt: 1, f: failure{retry: true, after: 3 * time.Second, hasAfter: true}, want: 3 * time.Second},
		{name: "retry-after 0", attempt: 1, f: failure{retry: true, hasAfter: true}, want: 0},
		{name: "retry-after at the cap", attempt: 2, f: failure{retry: true, after: maxRetryAfter, hasAfter: true}, want: maxRetryAfter},
		{name: "retry-after over the cap", attempt: 1, f: failure{retry: true, after: maxRetryAfter + time.Millisecond, hasAfter: true}, want: -1},
		{name: "first backoff", attempt: 1, f: failure{retry: true}, want: retryBackoff[0], jitter: true},
		{name: "second backoff", attempt: 2, f: failure{retry: true}, want: retryBackoff[1], jitter: true},
		{name: "retries used up", attempt: maxRetries + 1, f: failure{retry: true}, want: -1},
		{name: "final failure", attempt: 1, f: failure{}, want: -1},
		{name: "context done", ctx: expired, attempt: 1, f: failure{retry: true}, want: -1},
		{name: "deadline before the wait ends", ctx: soon, attempt: 1, f: failure{retry: true, after: 3 * time.Second, hasAfter: true}, want: -1},
		{name: "deadline after the wait ends", ctx: soon, attempt: 1, f: failure{retry: true, after: time.Second, hasAfter: true}, want: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = bg()
			}
			got, ok := retryWait(ctx, tt.attempt, &tt.f)
			switch {
			case tt.want < 0:
				if ok {
					t.Errorf("retryWait = %s, true; want no retry", got)
				}
			case !ok:
				t.Errorf("retryWait = no retry, want %s", tt.want)
			case tt.jitter:
				if lo, hi := tt.want*8/10, tt.want*12/10; got < lo || got > hi {
					t.Errorf("retryWait = %s, want %s ±20%%", got, tt.want)
				}
			case got != tt.want:
				t.Errorf("retryWait = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{500 * time.Millisecond, 1500 * time.Millisecond} {
		seen := map[time.Duration]bool{}
		for range 1000 {
			j := jitter(d)
			if j < d*8/10 || j > d*12/10 {
				t.Fatalf("jitter(%s) = %s, want within ±20%%", d, j)
			}
			seen[j] = true
		}
		if len(seen) < 100 {
			t.Errorf("jitter(%s) took only %d values in 1000 draws", d, len(seen))
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for code, want := range map[int]bool{
		429: true, 500: true, 502: true, 503: true, 504: true, 529: true,
		200: false, 307: false, 400: false, 401: false, 403: false, 404: false, 408: false, 413: false, 422: false, 501: false,
	} {
		if got := retryableStatus(code); got != want {
			t.Errorf("retryableStatus(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		after, ms string
		want      time.Duration
		ok        bool
	}{
		{name: "absent"},
		{name: "seconds", after: "30", want: 30 * time.Second, ok: true},
		{name: "zero", after: "0", want: 0, ok: true},
		{name: "fraction", after: "1.5", want: 1500 * time.Millisecond, ok: true},
		{name: "negative", after: "-1"},
		{name: "beyond a day", after: "999999"},
		{name: "not a number", after: "soon"},
		{name: "nan", after: "NaN"},
		{name: "date", after: now.Add(2 * time.Minute).Format(http.TimeFormat), want: 2 * time.Minute, ok: true},
		{name: "date past", after: now.Add(-time.Minute).Format(http.TimeFormat), want: 0, ok: true},
		{name: "date beyond a day", after: now.Add(25 * time.Hour).Format(http.TimeFormat)},
		{name: "milliseconds", ms: "1500", want: 1500 * time.Millisecond, ok: true},
		{name: "milliseconds first", after: "30", ms: "250", want: 250 * time.Millisecond, ok: true},
		{name: "unusable milliseconds", after: "2", ms: "later", want: 2 * time.Second, ok: true},
		{name: "negative milliseconds", ms: "-5"},
		{name: "infinite milliseconds", ms: "Inf"},
		{name: "milliseconds beyond a day", ms: fmt.Sprint(math.MaxInt64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.after != "" {
				h.Set("Retry-After", tt.after)
			}
			if tt.ms != "" {
				h.Set("retry-after-ms", tt.ms)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryAfter(%q, %q) = %s, %v; want %s, %v", tt.after, tt.ms, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestBuildLogsRetries checks Build hands its logger to the HTTP clients.
func TestBuildLogsRetries(t *testing.T) {
	var n atomic.Int64
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			return
		}
		serve(200, "application/json", []byte(`{"choices":[{"message":{"content":"ok"}}]}`))(w, r)
	})
	var logbuf syncBuffer
	p, err := Build([]Spec{{Name: "remote", Kind: KindOpenAI, BaseURL: f.URL, Model: "m", APIKeyEnv: "KEY"}}, "remote",
		func(string) string { return plantedKey }, slog.New(slog.NewJSONHandler(&logbuf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := p.Chat(bg(), userReq(promptMarker)); err != nil || resp.Text != "ok" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	checkRetryLog(t, logbuf.String(), "remote", 1)
}

// TestHopelessNotRetried: a certificate that does not verify fails after
// one connection (a TLS server whose certificate the client does not
// trust), and the classification keeps a refused connection retryable.
func TestHopelessNotRetried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	p, err := NewOpenAI(HTTPConfig{Name: "tls", BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: RoleUser, Content: "hi"}}}); err == nil {
		t.Fatal("a certificate nobody trusts was accepted")
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a certificate that does not verify is not retried", n)
	}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "unknown host", err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, want: true},
		{name: "dns timeout", err: &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}, want: false},
		{name: "refused", err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}, want: false},
		{name: "unknown authority", err: x509.UnknownAuthorityError{}, want: true},
		{name: "wrapped verification", err: fmt.Errorf("post: %w", &tls.CertificateVerificationError{Err: errors.New("bad")}), want: true},
	} {
		if got := hopeless(tt.err); got != tt.want {
			t.Errorf("%s: hopeless = %v, want %v", tt.name, got, tt.want)
		}
	}
}
