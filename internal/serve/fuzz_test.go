package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/receipts"
)

// FuzzChatBody sends arbitrary bodies to POST /chat. The answer is one
// JSON value: 413 exactly when the body is over the bound; otherwise 200
// exactly when the body is one strict JSON object with a message that is
// not blank and a conversation id of at most 128 printable bytes, and
// then the turn saw that message and conversation and the answer carries
// its reply; otherwise 400. An error answer names its code and no turn
// ran.
func FuzzChatBody(f *testing.F) {
	f.Add([]byte(`{"conversation":"c1","message":"hi"}`))
	f.Add([]byte(`{"message":"hi","new_conversation":true}`))
	f.Add([]byte(`{"conversation":"\u0000","message":"x"}`))
	f.Add([]byte(`{"message":1}`))
	f.Add([]byte(`{"message":" \t\n"}`))
	f.Add([]byte(`{"message":"x"}]`))
	f.Add([]byte(`{"Message":"<b>&\u2028","CONVERSATION":"é"}`))
	f.Add([]byte(`{"message":"` + strings.Repeat("a", 1100) + `"}`))
	f.Add([]byte(`[]`))
	const maxBody = 1024
	dir := f.TempDir()
	log := fuzzLog(f, dir)
	var turns []ChatRequest
	srv, err := New(Config{Home: dir, Token: token, MaxBodyBytes: maxBody, Queue: approvals.NewQueue(time.Minute), Log: log,
		Chat: func(_ context.Context, r ChatRequest, _ func(string)) (ChatResult, error) {
			turns = append(turns, r)
			return ChatResult{Conversation: r.Conversation, Reply: r.Message}, nil
		}})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		turns = nil
		req := httptest.NewRequest("POST", "/chat", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !json.Valid(w.Body.Bytes()) || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q for %q: not a JSON answer", w.Code, w.Body.String(), body)
		}
		var want chatBody
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		okBody := json.Valid(body) && dec.Decode(&want) == nil &&
			strings.TrimSpace(want.Message) != "" && len(want.Conversation) <= 128 &&
			!strings.ContainsFunc(want.Conversation, func(r rune) bool { return r < 0x20 || r == 0x7f })
		switch {
		case len(body) > maxBody:
			if w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d for a body of %d bytes", w.Code, len(body))
			}
		case okBody:
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s for %q", w.Code, w.Body, body)
			}
		default:
			if w.Code != http.StatusBadRequest {
				t.Fatalf("%d %s for %q", w.Code, w.Body, body)
			}
		}
		if w.Code != http.StatusOK {
			var e struct {
				Error approvals.APIError `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code == "" || e.Error.Message == "" || len(turns) != 0 {
				t.Fatalf("%d %s for %q, %d turns", w.Code, w.Body, body, len(turns))
			}
			return
		}
		seen := ChatRequest{Conversation: want.Conversation, NewConversation: want.NewConversation, Message: want.Message}
		if len(turns) != 1 || turns[0] != seen {
			t.Fatalf("body %q ran turns %+v, want one %+v", body, turns, seen)
		}
		var got ChatResult
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Reply != want.Message ||
			got.Conversation != want.Conversation || got.ToolCalls == nil || len(got.ToolCalls) != 0 {
			t.Fatalf("answer %s to %q: %+v %v", w.Body, body, got, err)
		}
	})
}

// FuzzAutonomousBody sends arbitrary bodies to POST /autonomous. The
// answer is one JSON value: 413 exactly when the body is over the bound;
// otherwise 201 exactly when the body is one strict JSON object with a
// task that is not blank, a conversation id of at most 128 printable
// bytes (or new_conversation), and max_turns in 0..10000, and then one
// run started with that task, conversation and bound, under the id the
// answer names; otherwise 400 with an error code, and no run started.
func FuzzAutonomousBody(f *testing.F) {
	f.Add([]byte(`{"conversation":"c1","task":"do it"}`))
	f.Add([]byte(`{"task":"do it","new_conversation":true,"max_turns":3}`))
	f.Add([]byte(`{"task":"do it"}`))
	f.Add([]byte(`{"conversation":"c1","task":"x","max_turns":-1}`))
	f.Add([]byte(`{"conversation":"c1","task":"x","max_turns":10001}`))
	f.Add([]byte(`{"conversation":"c1","task":"x","max_turns":1.5}`))
	f.Add([]byte(`{"conversation":"\u0000","task":"x"}`))
	f.Add([]byte(`{"conversation":"c","task":" \t"}`))
	f.Add([]byte(`{"conversation":"c","task":"x","extra":1}`))
	f.Add([]byte(`{"conversation":"c","task":"x"}{}`))
	f.Add([]byte(`{"conversation":"c","task":"` + strings.Repeat("a", 1100) + `"}`))
	const maxBody = 1024
	dir := f.TempDir()
	log := fuzzLog(f, dir)
	var (
		mu   sync.Mutex
		runs []AutoRequest
	)
	srv, err := New(Config{Home: dir, Token: token, MaxBodyBytes: maxBody, Queue: approvals.NewQueue(time.Minute), Log: log,
		Autonomous: func(_ context.Context, r AutoRequest) AutoResult {
			mu.Lock()
			runs = append(runs, r)
			mu.Unlock()
			return AutoResult{Conversation: r.Conversation, Stop: "yielded", State: "resting"}
		}})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	do := func(method, path string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		mu.Lock()
		runs = nil
		mu.Unlock()
		w := do("POST", "/autonomous", body)
		if !json.Valid(w.Body.Bytes()) || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q for %q: not a JSON answer", w.Code, w.Body.String(), body)
		}
		var want autoBody
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		okBody := json.Valid(body) && dec.Decode(&want) == nil && !dec.More() &&
			strings.TrimSpace(want.Task) != "" && len(want.Task) <= maxChannelMessage &&
			len(want.Conversation) <= 128 && (want.Conversation != "" || want.NewConversation) &&
			!strings.ContainsFunc(want.Conversation, func(r rune) bool { return r < 0x20 || r == 0x7f }) &&
			want.MaxTurns >= 0 && want.MaxTurns <= 10000
		switch {
		case len(body) > maxBody:
			if w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("%d for a body of %d bytes", w.Code, len(body))
			}
		case okBody:
			if w.Code != http.StatusCreated {
				t.Fatalf("%d %s for %q", w.Code, w.Body, body)
			}
		default:
			if w.Code != http.StatusBadRequest {
				t.Fatalf("%d %s for %q", w.Code, w.Body, body)
			}
		}
		if !srv.waitRuns(time.Minute) {
			t.Fatal("the run did not end")
		}
		mu.Lock()
		got := runs
		mu.Unlock()
		if w.Code != http.StatusCreated {
			var e struct {
				Error approvals.APIError `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code == "" || e.Error.Message == "" || len(got) != 0 {
				t.Fatalf("%d %s for %q, %d runs", w.Code, w.Body, body, len(got))
			}
			return
		}
		var started struct{ Run, Conversation string }
		if err := json.Unmarshal(w.Body.Bytes(), &started); err != nil {
			t.Fatal(err)
		}
		conv := want.Conversation
		if want.NewConversation {
			conv = ""
		}
		if len(got) != 1 || got[0].Run != started.Run || got[0].Task != want.Task || got[0].Conversation != conv ||
			got[0].NewConversation != want.NewConversation || got[0].MaxTurns != want.MaxTurns || started.Conversation != conv {
			t.Fatalf("body %q started %+v, answered %+v", body, got, started)
		}
		st := do("GET", "/autonomous/"+started.Run, nil)
		var s AutoStatus
		if st.Code != http.StatusOK || json.Unmarshal(st.Body.Bytes(), &s) != nil || s.Running || s.Stop != "yielded" || s.Conversation != conv {
			t.Fatalf("status of %s: %d %s", started.Run, st.Code, st.Body)
		}
	})
}

// FuzzGateTestBody sends arbitrary bodies to POST /gate/test. The answer
// is one JSON value: 413 exactly when the body is over the bound; 200 with
// the dry run's answer exactly when the body is one strict JSON object of
// a gate test request, and then that request, as decoded, is the one the
// daemon decides; otherwise 400 with an error code, and nothing decided.
func FuzzGateTestBody(f *testing.F) {
	f.Add([]byte(`{"config":"sha256:x","args":["shell","ls"],"output":"text"}`))
	f.Add([]byte(`{"config":"c","action":"{\"tool\":\"time\"}","explain":true,"output":"json","workspace":"/w","cwd":"/w/s","autonomy":"full"}`))
	f.Add([]byte(`{"config":"c","args":"shell"}`))
	f.Add([]byte(`{"config":"c","output":"text","extra":1}`))
	f.Add([]byte(`{"config":"c"}{}`))
	f.Add([]byte(`{"Config":"c","ARGS":["\u0000"]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"config":"` + strings.Repeat("a", 1100) + `"}`))
	const maxBody = 1024
	dir := f.TempDir()
	log := fuzzLog(f, dir)
	var seen []GateTestRequest
	srv, err := New(Config{Home: dir, Token: token, MaxBodyBytes: maxBody, Queue: approvals.NewQueue(time.Minute), Log: log,
		GateTest: func(_ context.Context, r GateTestRequest) (HookAnswer, error) {
			seen = append(seen, r)
			return HookAnswer{Exit: 3, Stdout: "decision: deny\n"}, nil
		}})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		seen = nil
		req := httptest.NewRequest("POST", "/gate/test", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !json.Valid(w.Body.Bytes()) || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q for %q: not a JSON answer", w.Code, w.Body.String(), body)
		}
		var want GateTestRequest
		okBody := approvals.DecodeStrict(body, &want) == nil
		switch {
		case len(body) > maxBody:
			if w.Code != http.StatusRequestEntityTooLarge || len(seen) != 0 {
				t.Fatalf("%d for a body of %d bytes, %d decided", w.Code, len(body), len(seen))
			}
			return
		case !okBody:
			var e struct {
				Error approvals.APIError `json:"error"`
			}
			if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Code == "" || len(seen) != 0 {
				t.Fatalf("%d %s for %q, %d decided", w.Code, w.Body, body, len(seen))
			}
			return
		}
		if w.Code != http.StatusOK || len(seen) != 1 || !reflect.DeepEqual(seen[0], want) {
			t.Fatalf("%d %s for %q: decided %+v, want one %+v", w.Code, w.Body, body, seen, want)
		}
		var a HookAnswer
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || a.Exit != 3 || a.Stdout != "decision: deny\n" {
			t.Fatalf("answer %s: %+v %v", w.Body, a, err)
		}
	})
}

// fuzzLog opens a receipt log in dir for a fuzzed server, closed when f
// ends.
func fuzzLog(f *testing.F, dir string) *broker.Log {
	f.Helper()
	priv, _ := receipts.GenerateKey(receipts.Ed25519)
	signer, _ := receipts.NewSigner(priv)
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { log.Close() })
	return log
}
