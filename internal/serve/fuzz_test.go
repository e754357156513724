package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/receipts"
)

// FuzzChatBody sends arbitrary bodies to POST /chat: the answer is always
// a JSON 200, 400 or 413, never a panic.
func FuzzChatBody(f *testing.F) {
	f.Add([]byte(`{"conversation":"c1","message":"hi"}`))
	f.Add([]byte(`{"message":"hi","new_conversation":true}`))
	f.Add([]byte(`{"conversation":"\u0000","message":"x"}`))
	f.Add([]byte(`{"message":1}`))
	f.Add([]byte(`[]`))
	dir := f.TempDir()
	priv, _ := receipts.GenerateKey(receipts.Ed25519)
	signer, _ := receipts.NewSigner(priv)
	log, err := receipts.Open(dir, signer, receipts.Options{CheckpointInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	defer log.Close()
	srv, err := New(Config{Home: dir, Token: token, MaxBodyBytes: 1024, Queue: approvals.NewQueue(time.Minute), Log: log,
		Chat: func(_ context.Context, r ChatRequest, _ func(string)) (ChatResult, error) {
			return ChatResult{Conversation: r.Conversation, Reply: r.Message}, nil
		}})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/chat", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
		if !strings.HasPrefix(w.Body.String(), "{") {
			t.Fatalf("not JSON: %q", w.Body.String())
		}
	})
}
