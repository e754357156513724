package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// A retry without a retry-after waits 500 ms, then 1.5 s; the tests
	// that meet a 5xx or a dropped connection need not wait that long.
	retryBackoff = [maxRetries]time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	m.Run()
}

// plantedKey is a fake key; tests check it never leaks.
const plantedKey = "sk-test-PLANTED-4f1c2e9a7b"

func wire(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "wire", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fake is an HTTP server on 127.0.0.1 that records each request and
// answers with a handler.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func newFake(t *testing.T, h http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		rec := recorded{Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
		_ = json.Unmarshal(raw, &rec.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, rec)
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// count is how many requests the server received.
func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fake) last(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the server received no request")
	}
	return f.reqs[len(f.reqs)-1]
}

// serve answers with a fixed status, content type and body.
func serve(status int, contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		w.Write(body)
	}
}

// streamChunks writes each chunk and flushes, so the client sees
// fragments arrive separately.
func streamChunks(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, c := range chunks {
			io.WriteString(w, c)
			w.(http.Flusher).Flush()
		}
	}
}

// hang waits until the client goes away.
func hang(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
}

func newOpenAITest(t *testing.T, url string, mod ...func(*HTTPConfig)) *OpenAI {
	t.Helper()
	c := HTTPConfig{Name: "oa", BaseURL: url, APIKey: plantedKey, Model: "gpt-test"}
	for _, m := range mod {
		m(&c)
	}
	p, err := NewOpenAI(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newAnthropicTest(t *testing.T, url string, mod ...func(*HTTPConfig)) *Anthropic {
	t.Helper()
	c := HTTPConfig{Name: "an", BaseURL: url, APIKey: plantedKey, Model: "claude-test"}
	for _, m := range mod {
		m(&c)
	}
	p, err := NewAnthropic(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userReq(text string) ChatRequest {
	return ChatRequest{Messages: []Message{{Role: RoleUser, Content: text}}}
}

func bg() context.Context { return context.Background() }
