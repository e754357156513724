package discord

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestBucketsAndGlobalLimit: a bucket with nothing remaining is waited
// out before the next request on its route (not on another route), and a
// global 429 holds every route.
func TestBucketsAndGlobalLimit(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		n := len(seen)
		mu.Unlock()
		h := w.Header()
		switch {
		case n == 3: // the third request: a global limit
			h.Set("X-RateLimit-Global", "true")
			h.Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"message":"You are being rate limited.","retry_after":7.0,"global":true}`))
			return
		case r.URL.Path == "/channels/1/messages":
			h.Set("X-RateLimit-Bucket", "b1")
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Reset-After", "3.5")
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	r := newREST(srv.URL, "tok", srv.Client(), clock, slog.New(slog.DiscardHandler))
	ctx := context.Background()

	if err := r.sendMessage(ctx, "1", "a"); err != nil { // bucket b1 now empty for 3.5 s
		t.Fatal(err)
	}
	if err := r.sendMessage(ctx, "2", "b"); err != nil { // another route: no wait
		t.Fatal(err)
	}
	if w := clock.Waits(); len(w) != 0 {
		t.Fatalf("waited %v before the bucket was used up", w)
	}
	// the third request answers a global 429 for 7 s; its retry waits out
	// the bucket's 3.5 s first, then the global limit
	if err := r.sendMessage(ctx, "1", "c"); err != nil {
		t.Fatal(err)
	}
	w := clock.Waits()
	if len(w) != 2 || w[0] != 3500*time.Millisecond || w[1] != 7*time.Second {
		t.Fatalf("waits = %v, want [3.5s 7s]", w)
	}
	if err := r.typing(ctx, "9"); err != nil { // the global limit is over
		t.Fatal(err)
	}
	if w := clock.Waits(); len(w) != 2 {
		t.Fatalf("waited again: %v", w)
	}
}
