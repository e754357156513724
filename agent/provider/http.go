package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults shared by the HTTP providers.
const (
	// DefaultMaxResponseBytes caps a response body, and the text and tool
	// arguments accumulated from a stream.
	DefaultMaxResponseBytes = 1 << 20
	// DefaultTimeout bounds one Chat call, streamed or not.
	DefaultTimeout = 120 * time.Second
	// maxErrorBody caps how much of an error response is read.
	maxErrorBody = 64 << 10
	// streamOverhead is how much larger than DefaultMaxResponseBytes the
	// raw bytes of a stream may be: SSE framing repeats ids and field
	// names for every fragment.
	streamOverhead = 16
)

// HTTPConfig is what the HTTP providers share.
type HTTPConfig struct {
	// Name identifies the provider in errors and logs.
	Name string
	// BaseURL is the endpoint root; see each provider for its default
	// and the path it appends.
	BaseURL string
	// APIKey is the key itself, read by the caller from the environment
	// variable the config names. It is sent in a header and redacted
	// from every error and from ChatResponse.Raw.
	APIKey string
	// Model is used when ChatRequest.Model is empty.
	Model string
	// Timeout bounds one Chat call, retries included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps the answer; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Client is the HTTP client; nil means a client with its own
	// transport that follows no redirects (proxy settings from the
	// environment are honoured; Timeout applies per call).
	Client *http.Client
	// Headers are sent with every request (for example the attribution
	// headers some gateways ask for). They must not carry the key.
	Headers map[string]string
	// Log receives a warning for each retry of a request; nil discards.
	Log *slog.Logger
}

// httpBase implements what the HTTP providers share: one POST with a
// timeout and bounded retries, bounded reads, and errors classified into
// the package's types.
type httpBase struct {
	name    string
	baseURL string
	key     string
	model   string
	timeout time.Duration
	max     int64
	client  *http.Client
	headers map[string]string
	log     *slog.Logger
}

func newHTTPBase(c HTTPConfig, defaultName, defaultURL string) (httpBase, error) {
	b := httpBase{
		name: c.Name, baseURL: strings.TrimRight(c.BaseURL, "/"), key: c.APIKey, model: c.Model,
		timeout: c.Timeout, max: c.MaxResponseBytes, client: c.Client, headers: c.Headers,
		log: c.Log,
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.name == "" {
		b.name = defaultName
	}
	if b.baseURL == "" {
		b.baseURL = defaultURL
	}
	u, err := url.Parse(b.baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return httpBase{}, fmt.Errorf("provider %q: base_url must be an http or https URL", b.name)
	}
	if u.User != nil {
		return httpBase{}, fmt.Errorf("provider %q: base_url must not carry credentials", b.name)
	}
	if b.timeout <= 0 {
		b.timeout = DefaultTimeout
	}
	if b.max <= 0 {
		b.max = DefaultMaxResponseBytes
	}
	if b.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxResponseHeaderBytes = 64 << 10
		t.ResponseHeaderTimeout = b.timeout
		// Redirects are not followed: an API has no reason to send
		// one, and Go forwards headers such as x-api-key to the new
		// host. A 3xx becomes a StatusError.
		b.client = &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	for k := range b.headers {
		if strings.EqualFold(k, "authorization") || strings.EqualFold(k, "x-api-key") {
			return httpBase{}, fmt.Errorf("provider %q: header %q must not be set in config: keys come from api_key_env", b.name, k)
		}
	}
	return b, nil
}

// Name implements [Provider].
func (b *httpBase) Name() string { return b.name }

func (b *httpBase) modelFor(req ChatRequest) (string, error) {
	if req.Model != "" {
		return req.Model, nil
	}
	if b.model != "" {
		return b.model, nil
	}
	return "", fmt.Errorf("provider %q: %w: no model configured", b.name, ErrBadRequest)
}

// dialect is what the HTTP providers' Chat calls do differently: the path
// they post to, their headers, where the key goes, and how they read an
// answer, whole or streamed.
type dialect struct {
	path      string
	headers   map[string]string
	keyHeader string
	keyPrefix string
	decode    func(name string, data []byte) (ChatResponse, error)
	stream    func(body io.Reader, onDelta func(string)) (ChatResponse, error)
}

// chat posts body (the request req was built into) the way w says, under
// the call's timeout, and reads the answer: streamed when req asked for it
// and the server streams, whole otherwise (given to req.OnDelta at once
// when a stream was asked for). Raw keeps the whole answer, key redacted.
func (b *httpBase) chat(ctx context.Context, req ChatRequest, body []byte, w dialect) (ChatResponse, error) {
	start := time.Now()
	callCtx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	hdr := http.Header{}
	for k, v := range w.headers {
		hdr.Set(k, v)
	}
	if b.key != "" {
		hdr.Set(w.keyHeader, w.keyPrefix+b.key)
	}
	if req.Stream {
		hdr.Set("Accept", "text/event-stream")
	}
	resp, err := b.post(callCtx, w.path, hdr, body)
	if err != nil {
		return ChatResponse{}, b.classify(ctx, callCtx, start, err)
	}
	defer resp.Body.Close()
	var out ChatResponse
	if req.Stream && !isJSON(resp) {
		out, err = w.stream(resp.Body, req.OnDelta)
	} else {
		var data []byte
		if data, err = b.readBody(resp.Body); err == nil {
			out, err = w.decode(b.name, data)
			if err == nil {
				out.Raw = json.RawMessage(redact(string(data), b.key))
				if req.Stream && req.OnDelta != nil && out.Text != "" {
					req.OnDelta(out.Text)
				}
			}
		}
	}
	if err != nil {
		return ChatResponse{}, b.classify(ctx, callCtx, start, err)
	}
	out.Provider = b.name
	return out, nil
}

// openStream reads the events of a streamed answer, at most
// streamOverhead times the answer's bound of raw bytes.
func (b *httpBase) openStream(body io.Reader) *sseReader {
	return newSSEReader(io.LimitReader(body, b.max*streamOverhead))
}

// nextEvent returns the next event of s; the error of a malformed stream
// names the provider.
func (b *httpBase) nextEvent(s *sseReader) (sseEvent, error) {
	ev, err := s.Next()
	if err != nil && errors.Is(err, ErrBadResponse) {
		return ev, fmt.Errorf("provider %q: %w", b.name, err)
	}
	return ev, err
}

// streamTooLarge is the error of a streamed answer past the bound.
func (b *httpBase) streamTooLarge() error {
	return fmt.Errorf("provider %q: %w: %w: streamed answer larger than %d bytes", b.name, ErrBadResponse, ErrTooLarge, b.max)
}

// post sends body and returns a 2xx response; any other status becomes a
// typed error. The caller closes the body. A request that failed before
// anything of its answer came back is sent again, within the bounds
// retry.go sets out.
func (b *httpBase) post(ctx context.Context, path string, hdr http.Header, body []byte) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, f := b.send(ctx, path, hdr, body)
		if f == nil {
			return resp, nil
		}
		wait, ok := retryWait(ctx, attempt, f)
		if !ok {
			return nil, f.err
		}
		b.logRetry(ctx, attempt, f, wait)
		if !sleep(ctx, wait) {
			return nil, f.err
		}
	}
}

// send makes one attempt of post.
func (b *httpBase) send(ctx context.Context, path string, hdr http.Header, body []byte) (*http.Response, *failure) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.baseURL+path, bytes.NewReader(body))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &failure{err: fmt.Errorf("provider %q: failed to build request: %w", b.name, err)}
	}
	for k, v := range b.headers {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, &failure{err: err, retry: !hopeless(err)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	typ, msg := errorBody(data)
	msg = excerpt(msg, b.key)
	f := &failure{retry: retryableStatus(resp.StatusCode), status: resp.StatusCode}
	f.after, f.hasAfter = retryAfter(resp.Header, time.Now())
	if resp.StatusCode == http.StatusTooManyRequests {
		f.err = &RateLimitError{Provider: b.name, RetryAfter: f.after, Message: msg}
	} else {
		f.err = &StatusError{Provider: b.name, StatusCode: resp.StatusCode, Type: excerpt(typ), Message: msg}
	}
	return nil, f
}

// errorBody pulls the type and message out of the error shapes servers
// use: {"error":{"type","message"}} (OpenAI, Anthropic), {"error":"…"}
// (Ollama and others), {"message":"…"}, or plain text.
func errorBody(data []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "", string(data)
	}
	var obj struct {
		Type    string `json:"type"`
		Code    any    `json:"code"`
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &obj) == nil && (obj.Message != "" || obj.Type != ""):
		return obj.Type, obj.Message
	case json.Unmarshal(v.Error, &s) == nil && s != "":
		return "", s
	case v.Message != "":
		return "", v.Message
	case v.Detail != "":
		return "", v.Detail
	}
	return "", string(data)
}

// readBody reads a whole non-streamed body up to the cap.
func (b *httpBase) readBody(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, b.max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > b.max {
		return nil, fmt.Errorf("provider %q: %w: %w: body larger than %d bytes", b.name, ErrBadResponse, ErrTooLarge, b.max)
	}
	return data, nil
}

// classify turns a failure of one call into the package's error types.
// callCtx is the per-call context (with the provider timeout), parent the
// caller's.
func (b *httpBase) classify(parent, callCtx context.Context, start time.Time, err error) error {
	if err == nil {
		return nil
	}
	if parent.Err() != nil && !errors.Is(parent.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("provider %q: %w", b.name, parent.Err())
	}
	var ne net.Error
	if errors.Is(callCtx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("provider %q: %w after %s", b.name, ErrTimeout, time.Since(start).Round(time.Millisecond))
	}
	var se *StatusError
	var rl *RateLimitError
	if errors.As(err, &se) || errors.As(err, &rl) || errors.Is(err, ErrBadResponse) || errors.Is(err, ErrBadRequest) {
		return err
	}
	// Transport errors: drop the URL the http package puts in front
	// (a base URL could carry anything) and keep the cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("provider %q: %w: %s", b.name, ErrNetwork, excerpt(err.Error(), b.key))
}

func badResponse(name, format string, args ...any) error {
	return fmt.Errorf("provider %q: %w: %s", name, ErrBadResponse, fmt.Sprintf(format, args...))
}

// isJSON reports whether a response's content type is JSON, which a
// server sends when it ignored a stream request.
func isJSON(resp *http.Response) bool {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	return strings.HasPrefix(ct, "application/json")
}

// normalizeArgs makes tool-call arguments valid JSON: an object or array
// passes through, a string holding JSON is unwrapped, empty becomes {},
// and anything else becomes a JSON string of the text.
func normalizeArgs(raw []byte) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return argsFromText(s)
		}
	}
	if json.Valid(raw) {
		return compactJSON(raw)
	}
	return argsFromText(string(raw))
}

// argsFromText is normalizeArgs for argument text (a streamed or string
// encoded value).
func argsFromText(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) && (t[0] == '{' || t[0] == '[') {
		return compactJSON([]byte(t))
	}
	q, _ := json.Marshal(s)
	return q
}

func compactJSON(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}
