package approvals

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
)

const testToken = "0123456789abcdef0123456789abcdef"

// requireToken is the bearer check the daemon puts in front of the routes.
func requireToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(testToken)) != 1 {
			WriteError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func newServer(t *testing.T, q *Queue, maxBody int64) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	q.Routes(mux, maxBody)
	srv := httptest.NewServer(requireToken(mux))
	t.Cleanup(srv.Close)
	return srv
}

// newUnixServer serves the routes on a unix socket, as claw serve does.
func newUnixServer(t *testing.T, q *Queue) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "apr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "claw.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	q.Routes(mux, 1<<16)
	srv := &http.Server{Handler: requireToken(mux), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

func call(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: content type %q", method, url, ct)
	}
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s %s: body %q is not JSON: %v", method, url, data, err)
	}
	return resp.StatusCode, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestHTTP(t *testing.T) {
	q := NewQueue(time.Minute)
	srv := newServer(t, q, 4096)
	u := srv.URL

	code, m := call(t, "POST", u+"/approvals/requests", testToken,
		`{"tool":"shell","summary":"rm -rf ./build","risk":"medium","reasons":[{"id":"cmd.rm.workspace","msg":"m"}],"action_sha256":"`+digestA+`","requester":"hook:claude-code"}`)
	if code != 201 {
		t.Fatalf("submit = %d %v", code, m)
	}
	id, _ := m["id"].(string)
	if id == "" || m["expires"] == nil {
		t.Fatalf("submit body %v", m)
	}

	tests := []struct {
		name     string
		method   string
		path     string
		token    string
		body     string
		wantCode int
		wantErr  string
	}{
		{name: "no token", method: "GET", path: "/approvals", wantCode: 401, wantErr: "unauthorized"},
		{name: "wrong token", method: "GET", path: "/approvals", token: "nope", wantCode: 401, wantErr: "unauthorized"},
		{name: "unknown id", method: "POST", path: "/approvals/apr_nope", token: testToken,
			body: `{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `"}`, wantCode: 404, wantErr: "not_found"},
		{name: "digest mismatch", method: "POST", path: "/approvals/" + id, token: testToken,
			body: `{"decision":"approve","approver":"alice","action_sha256":"` + digestB + `"}`, wantCode: 409, wantErr: "digest_mismatch"},
		{name: "unknown field", method: "POST", path: "/approvals/" + id, token: testToken,
			body: `{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `","force":true}`, wantCode: 400, wantErr: "bad_request"},
		{name: "trailing data", method: "POST", path: "/approvals/" + id, token: testToken,
			body: `{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `"}{}`, wantCode: 400, wantErr: "bad_request"},
		{name: "too large", method: "POST", path: "/approvals/requests", token: testToken,
			body: `{"tool":"` + strings.Repeat("x", 5000) + `"}`, wantCode: 413, wantErr: "too_large"},
		{name: "bad wait timeout", method: "GET", path: "/approvals/" + id + "/wait?timeout=soon", token: testToken, wantCode: 400, wantErr: "bad_request"},
		{name: "still pending", method: "GET", path: "/approvals/" + id + "/wait?timeout=1ms", token: testToken, wantCode: 200},
		{name: "approve", method: "POST", path: "/approvals/" + id, token: testToken,
			body: `{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `"}`, wantCode: 200},
		{name: "replay", method: "POST", path: "/approvals/" + id, token: testToken,
			body: `{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `"}`, wantCode: 409, wantErr: "already_decided"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, m := call(t, tt.method, u+tt.path, tt.token, tt.body)
			if code != tt.wantCode || errCode(m) != tt.wantErr {
				t.Fatalf("%s %s = %d %v, want %d %q", tt.method, tt.path, code, m, tt.wantCode, tt.wantErr)
			}
		})
	}
	code, m = call(t, "GET", u+"/approvals/"+id+"/wait?timeout=1s", testToken, "")
	if code != 200 || m["status"] != "approved" || m["by"] != "alice" {
		t.Fatalf("wait = %d %v", code, m)
	}
	code, m = call(t, "GET", u+"/approvals", testToken, "")
	if ps, _ := m["pending"].([]any); code != 200 || ps == nil || len(ps) != 0 {
		t.Fatalf("list = %d %v", code, m)
	}
}

func TestClient(t *testing.T) {
	for _, transport := range []string{"unix", "http"} {
		t.Run(transport, func(t *testing.T) {
			q := NewQueue(time.Minute)
			var target string
			if transport == "unix" {
				target = "unix:" + newUnixServer(t, q)
			} else {
				target = newServer(t, q, 1<<16).URL
			}
			requester, err := NewClient(target, testToken)
			if err != nil {
				t.Fatal(err)
			}
			requester.Requester = "hook:test"
			requester.Poll = 50 * time.Millisecond // several long-poll rounds
			approver, err := NewClient(target, testToken)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := make(chan broker.Answer, 1)
			go func() {
				ans, err := requester.Approve(ctx, broker.Request{Tool: "shell", Summary: "make clean", Args: json.RawMessage(`{"command":"make clean > out\n"}`), ActionSHA256: digestA,
					Decision: gate.Decision{Risk: "medium", Reasons: []gate.Reason{{ID: "r1", Msg: "m"}}}})
				if err != nil {
					t.Error(err)
				}
				done <- ans
			}()
			var ps []Pending
			for len(ps) == 0 && ctx.Err() == nil {
				if ps, err = approver.Pending(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			p := ps[0]
			if p.Requester != "hook:test" || p.Summary != "make clean" || string(p.Args) != `{"command":"make clean > out\n"}` {
				t.Fatalf("pending = %+v", p)
			}
			time.Sleep(120 * time.Millisecond) // let the requester poll more than once
			_, err = approver.Decide(ctx, p.ID, "approve", "alice", digestB)
			var se *StatusError
			if !errors.As(err, &se) || se.Status != 409 || se.Code != "digest_mismatch" {
				t.Fatalf("Decide with the wrong digest = %v", err)
			}
			res, err := approver.Decide(ctx, p.ID, "approve", "alice", p.ActionSHA256)
			if err != nil || res != "approved" {
				t.Fatalf("Decide = %q, %v", res, err)
			}
			if ans := <-done; ans.Result != "approved" || ans.By != "alice" {
				t.Fatalf("answer = %+v", ans)
			}
		})
	}
}

// TestClientArgsTooLarge: arguments larger than the daemon accepts are
// replaced by a note that says so, and the request still reaches the
// queue, bound to the same digest.
func TestClientArgsTooLarge(t *testing.T) {
	q := NewQueue(time.Minute)
	c, err := NewClient(newServer(t, q, 4096).URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := json.RawMessage(`{"content":"` + strings.Repeat("z", 8000) + `"}`)
	done := make(chan broker.Answer, 1)
	go func() {
		ans, err := c.Approve(ctx, broker.Request{Tool: "file_write", Summary: "file_write big.txt", Args: args, ActionSHA256: digestA})
		if err != nil {
			t.Error(err)
		}
		done <- ans
	}()
	p := waitPending(t, q)
	if want := `"(arguments of 8014 bytes not sent: more than the daemon accepts)"`; string(p.Args) != want || p.ActionSHA256 != digestA {
		t.Fatalf("pending args %s digest %s, want %s and %s", p.Args, p.ActionSHA256, want, digestA)
	}
	if err := q.Decide(p.ID, "reject", "alice", digestA); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; ans.Result != "rejected" || ans.By != "alice" {
		t.Fatalf("answer = %+v", ans)
	}
}

func TestClientExpired(t *testing.T) {
	q := NewQueue(100 * time.Millisecond)
	c, err := NewClient(newServer(t, q, 1<<16).URL, testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ans, err := c.Approve(ctx, broker.Request{Tool: "shell", ActionSHA256: digestA})
	if err != nil || ans.Result != "timeout" {
		t.Fatalf("Approve = %+v, %v; want timeout", ans, err)
	}
}

func TestClientWrongToken(t *testing.T) {
	q := NewQueue(time.Minute)
	c, err := NewClient(newServer(t, q, 1<<16).URL, "wrong")
	if err != nil {
		t.Fatal(err)
	}
	ans, err := c.Approve(context.Background(), broker.Request{Tool: "shell", ActionSHA256: digestA})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 401 || ans.Result != "timeout" {
		t.Fatalf("Approve = %+v, %v", ans, err)
	}
}

func TestNewClientTargets(t *testing.T) {
	tests := []struct {
		target string
		ok     bool
	}{
		{target: "unix:/run/claw.sock", ok: true},
		{target: "http://127.0.0.1:8787", ok: true},
		{target: "http://[::1]:8787", ok: true},
		{target: "http://localhost:8787", ok: true},
		{target: "http://10.0.0.1:8787"},
		{target: "http://example.com"},
		{target: "https://127.0.0.1:8787"},
		{target: "http://u:p@127.0.0.1:8787"},
		{target: "unix:"},
		{target: "/run/claw.sock"},
	}
	for _, tt := range tests {
		_, err := NewClient(tt.target, testToken)
		if (err == nil) != tt.ok {
			t.Errorf("NewClient(%q) = %v, want ok=%v", tt.target, err, tt.ok)
		}
	}
	if _, err := NewClient("unix:/x", ""); err == nil {
		t.Error("empty token accepted")
	}
}
