package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/broker/brokertest"
	"github.com/clawsec/claw/internal/idlegc"
	"github.com/clawsec/claw/internal/toolkind"
	"github.com/clawsec/claw/receipts"
)

const token = "tok-0123456789abcdef0123456789abcdef"

type rig struct {
	srv    *Server
	home   string
	rdir   string
	sock   string
	tcp    string // http://127.0.0.1:port
	cancel context.CancelFunc
	done   chan error
	queue  *approvals.Queue
	log    *broker.Log
	broker *broker.Broker
	latest atomic.Value // the fake chat's latest conversation id
}

// newRig starts a real server on a unix socket and a loopback port, with
// a real gate, receipt log and broker behind a ChatFunc: a message
// "tool NAME" makes the broker run the external tool NAME (which asks),
// anything else is echoed back in two deltas.
func newRig(t *testing.T, mutate func(*Config)) *rig {
	t.Helper()
	home, err := os.MkdirTemp("", "claw-serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	eng, err := gate.New(context.Background(), gate.Options{Home: filepath.Join(home, "user"), ClawHome: home, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rdir := filepath.Join(home, "receipts")
	log := brokertest.NewLog(t, rdir)
	q := approvals.NewQueue(time.Minute)
	b := broker.New(broker.Config{Gate: eng, Log: log, Approver: q, Autonomy: "supervised", Workspace: home,
		Home: filepath.Join(home, "user"), Channel: "serve", EstopFile: filepath.Join(home, EstopFile),
		InProcess: map[toolkind.Kind]broker.ToolFunc{"tool": func(context.Context, map[string]any) (json.RawMessage, error) {
			return json.RawMessage(`{"ok":true}`), nil
		}}})
	r := &rig{home: home, rdir: rdir, sock: filepath.Join(home, "serve", "claw.sock"), queue: q, log: log, broker: b}
	r.latest.Store("")
	cfg := Config{
		Home: home, Socket: r.sock, Listen: "127.0.0.1:0", Token: token,
		MaxBodyBytes: 4096, ReadHeaderTimeout: 2 * time.Second, RequestTimeout: 30 * time.Second,
		Queue: q, Log: log,
		Chat: func(ctx context.Context, req ChatRequest, onDelta func(string)) (ChatResult, error) {
			// Like the agent: no id continues the latest conversation.
			conv, started := req.Conversation, false
			if conv == "" && !req.NewConversation {
				conv = r.latest.Load().(string)
			}
			if conv == "" || req.NewConversation {
				conv, started = fmt.Sprintf("c-%d", time.Now().UnixNano()), true
				r.latest.Store(conv)
			}
			if name, ok := strings.CutPrefix(req.Message, "tool "); ok {
				out, err := b.Invoke(ctx, gate.Action{Tool: "tool", Args: map[string]any{"server": "s", "name": name, "args": map[string]any{}}}, conv)
				if err != nil {
					return ChatResult{}, err
				}
				return ChatResult{Conversation: conv, NewConversation: started, Reply: "done", ToolCalls: []ToolCall{{ID: "1", Name: "tool", Status: out.Status, ActionID: out.ActionID}}}, nil
			}
			if req.Message == "provider down" {
				return ChatResult{}, &ProviderError{Err: errors.New("503 from upstream sk-test-PLANTED-0123456789abcdef")}
			}
			if onDelta != nil {
				onDelta("you said: ")
				onDelta(req.Message)
			}
			return ChatResult{Conversation: conv, NewConversation: started, Reply: "you said: " + req.Message}, nil
		},
		Tools:  func() []Tool { return []Tool{{Name: "shell", Description: "run a command"}} },
		Info:   func() Info { return Info{Autonomy: "supervised", PolicyDigest: eng.Digest()} },
		Reload: func(ctx context.Context) (string, error) { return eng.Digest(), eng.Reload(ctx) },
		VerifyChain: func(ctx context.Context) (bool, error) {
			return true, nil
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- srv.Serve(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-r.done:
		t.Fatalf("Serve: %v", err)
	}
	for _, a := range srv.Addrs() {
		if a.Network() == "tcp" {
			r.tcp = "http://" + a.String()
		}
	}
	t.Cleanup(r.stop)
	return r
}

func (r *rig) stop() {
	r.cancel()
	<-r.done
	r.done <- nil // idempotent
}

// unixClient speaks HTTP over the rig's socket.
func (r *rig) unixClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", r.sock)
	}}}
}

type resp struct {
	code int
	body map[string]any
	raw  string
	hdr  http.Header
}

func do(t *testing.T, c *http.Client, method, url, tok, body string, hdr ...string) resp {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	out := resp{code: res.StatusCode, raw: string(data), hdr: res.Header}
	_ = json.Unmarshal(data, &out.body)
	return out
}

func errCode(r resp) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func TestEndpoints(t *testing.T) {
	r := newRig(t, nil)
	uc := r.unixClient()
	u := "http://claw"
	tests := []struct {
		name     string
		method   string
		path     string
		tok      string
		body     string
		wantCode int
		wantErr  string
		want     string // substring of the raw body
	}{
		{name: "health needs no token", method: "GET", path: "/health", wantCode: 200, want: `"ok"`},
		{name: "status without token", method: "GET", path: "/status", wantCode: 401, wantErr: "unauthorized"},
		{name: "status with a wrong token", method: "GET", path: "/status", tok: token + "x", wantCode: 401, wantErr: "unauthorized"},
		{name: "approvals without token", method: "GET", path: "/approvals", wantCode: 401, wantErr: "unauthorized"},
		{name: "metrics without token", method: "GET", path: "/metrics", wantCode: 401, wantErr: "unauthorized"},
		{name: "status", method: "GET", path: "/status", tok: token, wantCode: 200, want: `"autonomy":"supervised"`},
		{name: "tools", method: "GET", path: "/tools", tok: token, wantCode: 200, want: `"name":"shell"`},
		{name: "unknown endpoint", method: "GET", path: "/nope", tok: token, wantCode: 404, wantErr: "not_found"},
		{name: "chat", method: "POST", path: "/chat", tok: token, body: `{"message":"hi"}`, wantCode: 200, want: `"reply":"you said: hi"`},
		{name: "chat empty", method: "POST", path: "/chat", tok: token, body: `{"message":"  "}`, wantCode: 400, wantErr: "bad_request"},
		{name: "chat unknown field", method: "POST", path: "/chat", tok: token, body: `{"message":"hi","admin":true}`, wantCode: 400, wantErr: "bad_request"},
		{name: "chat malformed", method: "POST", path: "/chat", tok: token, body: `{"message":`, wantCode: 400, wantErr: "bad_request"},
		{name: "chat too large", method: "POST", path: "/chat", tok: token, body: `{"message":"` + strings.Repeat("a", 5000) + `"}`, wantCode: 413, wantErr: "too_large"},
		{name: "provider error hides details", method: "POST", path: "/chat", tok: token, body: `{"message":"provider down"}`, wantCode: 502, wantErr: "provider_error"},
		{name: "search unavailable", method: "GET", path: "/memory/search?q=x", tok: token, wantCode: 503, wantErr: "unavailable"},
		{name: "receipts bad after", method: "GET", path: "/receipts?after=-1", tok: token, wantCode: 400, wantErr: "bad_request"},
		{name: "receipts", method: "GET", path: "/receipts?limit=5", tok: token, wantCode: 200, want: `"receipts":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := do(t, uc, tt.method, u+tt.path, tt.tok, tt.body)
			if got.code != tt.wantCode || errCode(got) != tt.wantErr || !strings.Contains(got.raw, tt.want) {
				t.Fatalf("%s %s = %d %s", tt.method, tt.path, got.code, got.raw)
			}
			if strings.Contains(got.raw, "sk-test-PLANTED") {
				t.Fatalf("secret in the response: %s", got.raw)
			}
			if ct := got.hdr.Get("Content-Type"); ct != "application/json" && tt.path != "/metrics" {
				t.Fatalf("content type %q", ct)
			}
		})
	}
	// The same over the loopback TCP listener.
	if got := do(t, http.DefaultClient, "GET", r.tcp+"/status", token, ""); got.code != 200 {
		t.Fatalf("tcp status = %d %s", got.code, got.raw)
	}
	if got := do(t, http.DefaultClient, "GET", r.tcp+"/status", "", ""); got.code != 401 {
		t.Fatalf("tcp status without token = %d", got.code)
	}
}

func TestSocketModes(t *testing.T) {
	r := newRig(t, nil)
	fi, err := os.Stat(r.sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v", fi.Mode().Perm())
	}
	di, err := os.Stat(filepath.Dir(r.sock))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v", di.Mode().Perm())
	}
	// A second server on the same socket is refused.
	if _, err := ListenUnix(r.sock); err == nil || !strings.Contains(err.Error(), "another claw serve") {
		t.Fatalf("second listener: %v", err)
	}
}

// TestApprovalOverHTTP: a chat whose tool asks blocks until a second
// client approves it over the socket; the receipts record the approver.
func TestApprovalOverHTTP(t *testing.T) {
	r := newRig(t, nil)
	approver, err := approvals.NewClient("unix:"+r.sock, token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			ps, err := approver.Pending(ctx)
			if err == nil && len(ps) > 0 {
				if _, err := approver.Decide(ctx, ps[0].ID, "approve", "alice", ps[0].ActionSHA256); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	got := do(t, r.unixClient(), "POST", "http://claw/chat", token, `{"message":"tool deploy"}`)
	if got.code != 200 || !strings.Contains(got.raw, `"status":"ok"`) {
		t.Fatalf("chat = %d %s", got.code, got.raw)
	}
	calls := got.body["tool_calls"].([]any)
	actionID := calls[0].(map[string]any)["action_id"].(string)
	var by string
	receipts.Walk(ctx, r.rdir, func(rec receipts.Record) error {
		if rec.Line != nil && rec.Line.Decoded.ActionID == actionID && rec.Line.Decoded.Approval != nil {
			by = rec.Line.Decoded.Approval.By
		}
		return nil
	})
	if by != "alice" {
		t.Fatalf("approval receipt by %q", by)
	}
	m := do(t, r.unixClient(), "GET", "http://claw/metrics", token, "")
	for _, want := range []string{`claw_tool_calls_total{status="ok"} 1`, "claw_conversations_total 1", "claw_receipt_chain_valid 1", "claw_decision_seconds_bucket", "claw_denials_total 0", "claw_provider_errors_total 0"} {
		if !strings.Contains(m.raw, want) {
			t.Errorf("metrics lack %q:\n%s", want, m.raw)
		}
	}
}

// TestPendingShowsArgs: the listing of pending approvals shows the
// action's arguments, with a key planted in them redacted, and a decision
// on it binds to the digest as before.
// TestConversationsCounted: a turn without a conversation id continues
// the latest conversation, so only turns that start one are counted.
func TestConversationsCounted(t *testing.T) {
	r := newRig(t, nil)
	for _, body := range []string{`{"message":"a"}`, `{"message":"b"}`, `{"message":"c","new_conversation":true}`, `{"message":"d"}`} {
		if got := do(t, r.unixClient(), "POST", "http://claw/chat", token, body); got.code != 200 {
			t.Fatalf("chat %s = %d %s", body, got.code, got.raw)
		}
	}
	m := do(t, r.unixClient(), "GET", "http://claw/metrics", token, "")
	if !strings.Contains(m.raw, "claw_conversations_total 2\n") {
		t.Errorf("four turns, two of them starting a conversation:\n%s", m.raw)
	}
}

func TestPendingShowsArgs(t *testing.T) {
	r := newRig(t, nil)
	planted := "sk-ant-api03-" + strings.Repeat("PLANTED0123", 9)
	uc := r.unixClient()
	chat := make(chan resp, 1)
	go func() {
		chat <- do(t, uc, "POST", "http://claw/chat", token, `{"message":"tool deploy --key `+planted+`"}`)
	}()
	var p map[string]any
	for deadline := time.Now().Add(20 * time.Second); p == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no pending approval")
		}
		got := do(t, uc, "GET", "http://claw/approvals", token, "")
		if strings.Contains(got.raw, planted[:20]) {
			t.Fatalf("the listing holds the planted key: %s", got.raw)
		}
		if ps, _ := got.body["pending"].([]any); len(ps) > 0 {
			p = ps[0].(map[string]any)
			if !strings.Contains(got.raw, `"args":{"args":{},"name":"deploy --key [REDACTED]","server":"s"}`) {
				t.Fatalf("the listing lacks the arguments: %s", got.raw)
			}
		}
	}
	body := fmt.Sprintf(`{"decision":"reject","approver":"alice","action_sha256":%q}`, p["action_sha256"])
	if got := do(t, uc, "POST", "http://claw/approvals/"+p["id"].(string), token, body); got.code != 200 {
		t.Fatalf("reject = %d %s", got.code, got.raw)
	}
	if got := <-chat; got.code != 200 || !strings.Contains(got.raw, `"status":"rejected"`) {
		t.Fatalf("chat = %d %s", got.code, got.raw)
	}
}

// TestRequestArgsTooLarge: a client whose request, with arguments of
// the largest size a broker gives, is far past the daemon's body limit is
// refused by the guard before the body is read (413), and submits it
// again with a note in place of the arguments, so a person can still
// decide it.
func TestRequestArgsTooLarge(t *testing.T) {
	r := newRig(t, nil) // MaxBodyBytes 4096
	cl, err := approvals.NewClient("unix:"+r.sock, token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	digest := "sha256:" + strings.Repeat("ab", 32)
	args := json.RawMessage(`{"content":"` + strings.Repeat("z", broker.MaxArgs-16) + `"}`)
	done := make(chan broker.Answer, 1)
	go func() {
		ans, err := cl.Approve(ctx, broker.Request{Tool: "file_write", Summary: "file_write big.txt", Args: args, ActionSHA256: digest})
		if err != nil {
			t.Error(err)
		}
		done <- ans
	}()
	var ps []approvals.Pending
	for ctx.Err() == nil && len(ps) == 0 {
		time.Sleep(10 * time.Millisecond)
		ps = r.queue.Pending()
	}
	if len(ps) != 1 || !strings.Contains(string(ps[0].Args), "not sent: more than the daemon accepts") {
		t.Fatalf("pending = %+v", ps)
	}
	if err := r.queue.Decide(ps[0].ID, "approve", "alice", digest); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; ans.Result != "approved" {
		t.Fatalf("answer = %+v", ans)
	}
}

func TestChatStream(t *testing.T) {
	r := newRig(t, nil)
	req, _ := http.NewRequest("POST", "http://claw/chat", strings.NewReader(`{"message":"hello","new_conversation":true}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	res, err := r.unixClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var events []string
	var done map[string]any
	sc := bufio.NewScanner(res.Body)
	var ev string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
			events = append(events, ev)
		case strings.HasPrefix(line, "data: ") && ev == "done":
			json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &done)
		}
	}
	if strings.Join(events, ",") != "delta,delta,done" {
		t.Fatalf("events %v", events)
	}
	if done["reply"] != "you said: hello" || done["conversation"] == "" {
		t.Fatalf("done = %v", done)
	}
}

// TestConversationSerialized: two turns of one conversation never run at
// once; turns of different conversations do.
func TestConversationSerialized(t *testing.T) {
	var (
		mu      sync.Mutex
		running = map[string]int{}
		overlap atomic.Bool
		both    = make(chan struct{})
		seen    atomic.Int32
	)
	r := newRig(t, func(c *Config) {
		c.Chat = func(ctx context.Context, req ChatRequest, _ func(string)) (ChatResult, error) {
			mu.Lock()
			running[req.Conversation]++
			if running[req.Conversation] > 1 {
				overlap.Store(true)
			}
			mu.Unlock()
			if req.Conversation == "b" {
				if seen.Add(1) == 1 {
					// the first "b" turn waits until an "a" turn runs beside it
					select {
					case <-both:
					case <-time.After(10 * time.Second):
					}
				}
			} else if req.Conversation == "a" {
				select {
				case <-both:
				default:
					close(both)
				}
			}
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			running[req.Conversation]--
			mu.Unlock()
			return ChatResult{Conversation: req.Conversation, Reply: "ok"}, nil
		}
	})
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		conv := "a"
		if i%2 == 1 {
			conv = "b"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := do(t, r.unixClient(), "POST", "http://claw/chat", token, `{"conversation":"`+conv+`","message":"x"}`); got.code != 200 {
				t.Errorf("chat = %d %s", got.code, got.raw)
			}
		}()
	}
	wg.Wait()
	if overlap.Load() {
		t.Fatal("two turns of one conversation ran at once")
	}
}

func TestEstop(t *testing.T) {
	r := newRig(t, nil)
	uc := r.unixClient()
	if got := do(t, uc, "POST", "http://claw/estop", token, `{"reason":"runaway\nagent key=sk-test-PLANTED-0123456789abcdef"}`); got.code != 200 || got.body["estop"] != true {
		t.Fatalf("POST /estop = %d %s", got.code, got.raw)
	}
	data, err := os.ReadFile(filepath.Join(r.home, EstopFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nby serve:http\nreason runaway agent key=") || strings.Contains(string(data), "PLANTED") {
		t.Fatalf("ESTOP file:\n%s", data)
	}
	if got := do(t, uc, "GET", "http://claw/status", token, ""); got.body["estop"] != true {
		t.Fatalf("status after estop: %s", got.raw)
	}
	// An action while stopped does not run.
	got := do(t, uc, "POST", "http://claw/chat", token, `{"message":"tool x"}`)
	if !strings.Contains(got.raw, `"status":"estop"`) {
		t.Fatalf("chat while stopped = %s", got.raw)
	}
	if got := do(t, uc, "DELETE", "http://claw/estop", token, ""); got.code != 200 || got.body["estop"] != false {
		t.Fatalf("DELETE /estop = %d %s", got.code, got.raw)
	}
	if _, err := os.Stat(filepath.Join(r.home, EstopFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ESTOP still there: %v", err)
	}
	var states []bool
	receipts.Walk(context.Background(), r.rdir, func(rec receipts.Record) error {
		if rec.Line != nil && rec.Line.Decoded.Estop != nil {
			states = append(states, rec.Line.Decoded.Estop.Active)
		}
		if rec.Line != nil && strings.Contains(string(rec.Line.Body), "PLANTED") {
			t.Errorf("secret in a receipt: %s", rec.Line.Body)
		}
		return nil
	})
	if fmt.Sprint(states) != "[true false]" {
		t.Fatalf("estop receipts %v", states)
	}
	if m := do(t, uc, "GET", "http://claw/metrics", token, ""); !strings.Contains(m.raw, "claw_denials_total 1") {
		t.Fatalf("estop-blocked call not counted as a denial:\n%s", m.raw)
	}
}

func TestReceiptsPaging(t *testing.T) {
	r := newRig(t, nil)
	for i := 0; i < 5; i++ {
		if _, err := r.log.AppendFixture(context.Background(), receipts.Body{Type: receipts.TypeEstop, Estop: &receipts.Estop{Active: i%2 == 0, By: "test"}}); err != nil {
			t.Fatal(err)
		}
	}
	var seqs []uint64
	after := uint64(0)
	for pages := 0; pages < 10; pages++ {
		got := do(t, r.unixClient(), "GET", fmt.Sprintf("http://claw/receipts?after=%d&limit=2", after), token, "")
		if got.code != 200 {
			t.Fatalf("receipts = %d %s", got.code, got.raw)
		}
		var page struct {
			Receipts []ReceiptLine `json:"receipts"`
			Next     uint64        `json:"next"`
		}
		json.Unmarshal([]byte(got.raw), &page)
		for _, l := range page.Receipts {
			pl, err := receipts.ParseLine([]byte(`{"body":` + string(l.Body) + `,"kid":"` + l.KID + `","sig":"` + l.Sig + `"}`))
			if err != nil {
				t.Fatalf("receipt line does not reparse: %v", err)
			}
			seqs = append(seqs, pl.Decoded.Seq)
		}
		if page.Next == 0 {
			break
		}
		after = page.Next
	}
	if len(seqs) != 5 || seqs[0] != 1 || seqs[4] != 5 {
		t.Fatalf("paged seqs %v", seqs)
	}
	head, err := Head(r.rdir)
	if err != nil || head.Seq != 5 || !strings.HasPrefix(head.Hash, "sha256:") {
		t.Fatalf("head = %+v, %v", head, err)
	}
}

func TestReload(t *testing.T) {
	fail := errors.New("policy.rego:3: rego_parse_error")
	var broken atomic.Bool
	r := newRig(t, func(c *Config) {
		c.Reload = func(context.Context) (string, error) {
			if broken.Load() {
				return "", fail
			}
			return "sha256:" + strings.Repeat("1", 64), nil
		}
	})
	broken.Store(true)
	if _, err := r.srv.Reload(context.Background()); !errors.Is(err, fail) {
		t.Fatalf("Reload = %v", err)
	}
	broken.Store(false)
	if d, err := r.srv.Reload(context.Background()); err != nil || !strings.HasPrefix(d, "sha256:111") {
		t.Fatalf("Reload = %q, %v", d, err)
	}
	var digests []string
	receipts.Walk(context.Background(), r.rdir, func(rec receipts.Record) error {
		if rec.Line != nil && rec.Line.Decoded.Policy != nil {
			digests = append(digests, rec.Line.Decoded.Policy.Digest)
		}
		return nil
	})
	if len(digests) != 1 || !strings.HasPrefix(digests[0], "sha256:111") {
		t.Fatalf("policy_loaded receipts %v", digests)
	}
}

// TestShutdown: cancelling Serve's context stops it cleanly, removes the
// socket, and leaves a final checkpoint as the last receipt.
func TestShutdown(t *testing.T) {
	r := newRig(t, nil)
	if got := do(t, r.unixClient(), "POST", "http://claw/estop", token, ""); got.code != 200 {
		t.Fatal(got.raw)
	}
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Serve = %v", err)
		}
		r.done <- nil
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := os.Stat(r.sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
	var last receipts.Type
	receipts.Walk(context.Background(), r.rdir, func(rec receipts.Record) error {
		if rec.Line != nil {
			last = rec.Line.Decoded.Type
		}
		return nil
	})
	if last != receipts.TypeCheckpoint {
		t.Fatalf("last receipt is %q, want a checkpoint", last)
	}
}

// TestSlowClient: a client that never finishes its headers is cut off.
func TestSlowClient(t *testing.T) {
	r := newRig(t, func(c *Config) { c.ReadHeaderTimeout = 200 * time.Millisecond })
	c, err := net.Dial("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /status HTTP/1.1\r\nHost: claw\r\nX-Slow: ")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept a slow client's connection open")
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		wantErr string
	}{
		{name: "ok", content: strings.Repeat("ab", 32) + "\n", mode: 0o600},
		{name: "group readable", content: strings.Repeat("ab", 32), mode: 0o640, wantErr: "must be 0600"},
		{name: "world readable", content: strings.Repeat("ab", 32), mode: 0o644, wantErr: "must be 0600"},
		{name: "short", content: "abc", mode: 0o600, wantErr: "at least 32"},
		{name: "two tokens", content: strings.Repeat("ab", 32) + " " + strings.Repeat("cd", 32), mode: 0o600, wantErr: "one token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			os.WriteFile(p, []byte(tt.content), tt.mode)
			os.Chmod(p, tt.mode)
			tok, err := LoadToken(p)
			if tt.wantErr == "" {
				if err != nil || tok != strings.TrimSpace(tt.content) {
					t.Fatalf("LoadToken = %q, %v", tok, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadToken = %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := LoadToken(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing token file accepted")
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{addr: "127.0.0.1:8787", ok: true},
		{addr: "[::1]:8787", ok: true},
		{addr: "localhost:8787", ok: true},
		{addr: "0.0.0.0:8787"},
		{addr: ":8787"},
		{addr: "192.168.1.2:8787"},
		{addr: "example.com:80"},
		{addr: "127.0.0.1"},
	}
	for _, tt := range tests {
		if err := CheckLoopback(tt.addr); (err == nil) != tt.ok {
			t.Errorf("CheckLoopback(%q) = %v", tt.addr, err)
		}
	}
}

// TestSIGHUP: a SIGHUP to the process reloads; a failing reload keeps
// the old policies and writes no receipt.
func TestSIGHUP(t *testing.T) {
	var calls atomic.Int32
	results := make(chan error, 4)
	r := newRig(t, func(c *Config) {
		c.ReloadOnSIGHUP = true
		c.Reload = func(context.Context) (string, error) {
			if calls.Add(1) == 1 {
				return "", errors.New("broken.rego:1: rego_parse_error")
			}
			return "sha256:" + strings.Repeat("2", 64), nil
		}
		c.OnReload = func(_ string, err error) { results <- err }
	})
	for i, wantErr := range []bool{true, false} {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-results:
			if (err != nil) != wantErr {
				t.Fatalf("reload %d: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("SIGHUP did not reload")
		}
	}
	got := do(t, r.unixClient(), "POST", "http://claw/reload", token, "")
	if got.code != 200 || got.body["policy_digest"] != "sha256:"+strings.Repeat("2", 64) {
		t.Fatalf("POST /reload = %d %s", got.code, got.raw)
	}
	var n int
	receipts.Walk(context.Background(), r.rdir, func(rec receipts.Record) error {
		if rec.Line != nil && rec.Line.Decoded.Policy != nil {
			n++
		}
		return nil
	})
	if n != 2 {
		t.Fatalf("%d policy_loaded receipts, want 2", n)
	}
}

// TestResolve: a conversation named by a prefix is serialized with its
// full id; an unknown one is 404.
func TestResolve(t *testing.T) {
	var (
		mu      sync.Mutex
		running int
		overlap atomic.Bool
	)
	r := newRig(t, func(c *Config) {
		c.Resolve = func(_ context.Context, id string) (string, error) {
			if strings.HasPrefix("conv-0123456789", id) && len(id) >= 4 {
				return "conv-0123456789", nil
			}
			return "", fmt.Errorf("conversation %q: %w", id, ErrNotFound)
		}
		c.Chat = func(_ context.Context, req ChatRequest, _ func(string)) (ChatResult, error) {
			mu.Lock()
			running++
			if running > 1 {
				overlap.Store(true)
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return ChatResult{Conversation: "conv-0123456789", Reply: "ok"}, nil
		}
	})
	if got := do(t, r.unixClient(), "POST", "http://claw/chat", token, `{"conversation":"nope","message":"x"}`); got.code != 404 || errCode(got) != "not_found" {
		t.Fatalf("unknown conversation = %d %s", got.code, got.raw)
	}
	var wg sync.WaitGroup
	for i, id := range []string{"conv", "conv-01", "conv-0123456789", "conv-0123", "conv-0123456"} {
		wg.Add(1)
		go func(i int, id string) {
			defer wg.Done()
			if got := do(t, r.unixClient(), "POST", "http://claw/chat", token, `{"conversation":"`+id+`","message":"x"}`); got.code != 200 {
				t.Errorf("chat %d = %d %s", i, got.code, got.raw)
			}
		}(i, id)
	}
	wg.Wait()
	if overlap.Load() {
		t.Fatal("turns of one conversation named by different prefixes ran at once")
	}
}

// TestPageSegments pages through a log of many segments.
func TestPageSegments(t *testing.T) {
	dir := t.TempDir()
	priv, _ := receipts.GenerateKey(receipts.Ed25519)
	signer, _ := receipts.NewSigner(priv)
	log, err := broker.OpenLog(dir, signer, broker.LogOptions{CheckpointInterval: -1, CheckpointEvery: 1000, SegmentBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		if _, err := log.AppendFixture(context.Background(), receipts.Body{Type: receipts.TypeEstop, Estop: &receipts.Estop{Active: i%2 == 0, By: "test"}}); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	if segs, _ := receipts.Segments(dir); len(segs) < 3 {
		t.Fatalf("only %d segments", len(segs))
	}
	var all []uint64
	var after uint64
	for {
		page, next, err := Page(context.Background(), dir, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range page {
			all = append(all, l.seq)
		}
		if next == 0 {
			break
		}
		after = next
	}
	head, _ := Head(dir)
	if uint64(len(all)) != head.Seq {
		t.Fatalf("paged %d receipts, head is %d", len(all), head.Seq)
	}
	for i, s := range all {
		if s != uint64(i+1) {
			t.Fatalf("seq %d at %d", s, i)
		}
	}
}

// TestApproveWhileStopped: a request submitted by a remote requester
// cannot be approved through the API while the emergency stop is engaged.
func TestApproveWhileStopped(t *testing.T) {
	r := newRig(t, nil)
	uc := r.unixClient()
	digest := "sha256:" + strings.Repeat("c", 64)
	sub := do(t, uc, "POST", "http://claw/approvals/requests", token,
		`{"tool":"shell","summary":"make deploy","risk":"high","reasons":[],"action_sha256":"`+digest+`","requester":"remote"}`)
	if sub.code != 201 {
		t.Fatalf("submit = %d %s", sub.code, sub.raw)
	}
	id := sub.body["id"].(string)
	if got := do(t, uc, "POST", "http://claw/estop", token, ""); got.code != 200 {
		t.Fatalf("POST /estop = %d %s", got.code, got.raw)
	}
	got := do(t, uc, "POST", "http://claw/approvals/"+id, token, `{"decision":"approve","approver":"alice","action_sha256":"`+digest+`"}`)
	if got.code != 409 || errCode(got) != "estop" {
		t.Fatalf("approve while stopped = %d %s", got.code, got.raw)
	}
	if w := do(t, uc, "GET", "http://claw/approvals/"+id+"/wait?timeout=0s", token, ""); w.body["status"] != "pending" {
		t.Fatalf("wait after a refused approval = %s", w.raw)
	}
	if got := do(t, uc, "POST", "http://claw/approvals/"+id, token, `{"decision":"reject","approver":"alice","action_sha256":"`+digest+`"}`); got.code != 200 {
		t.Fatalf("reject while stopped = %d %s", got.code, got.raw)
	}
}

// TestChannelMessages: POST /channels/{name}/messages hands a checked
// message to Deliver (with a request id when none was given); an unknown
// channel or session is a 404, a bad body a 400, no Deliver a 503.
func TestChannelMessages(t *testing.T) {
	var got []string
	r := newRig(t, func(c *Config) {
		c.Deliver = func(ctx context.Context, channel string, m ChannelMessage) error {
			if channel != "bridge" || m.Session != "main" {
				return fmt.Errorf("%w: no %s session %s", ErrNotFound, channel, m.Session)
			}
			got = append(got, m.RequestID+" "+m.Content+" "+fmt.Sprint(m.Meta["source_channel"]))
			return nil
		}
	})
	uc := r.unixClient()
	for _, c := range []struct {
		path, body string
		code       int
		want       string
	}{
		{"/channels/bridge/messages", `{"session":"main","request_id":"msg_1","content":"hi","meta":{"source_channel":"discord"}}`, 202, `"request_id":"msg_1"`},
		{"/channels/bridge/messages", `{"session":"main","content":"no id"}`, 202, `"request_id":"msg_`},
		{"/channels/bridge/messages", `{"session":"other","content":"x"}`, 404, `"not_found"`},
		{"/channels/discord/messages", `{"session":"main","content":"x"}`, 404, `"not_found"`},
		{"/channels/bridge/messages", `{"session":"main","content":""}`, 400, `"bad_request"`},
		{"/channels/bridge/messages", `{"session":"ma\nin","content":"x"}`, 400, `"bad_request"`},
		{"/channels/bridge/messages", `{"session":"main","content":"x","admin":true}`, 400, `"bad_request"`},
	} {
		res := do(t, uc, "POST", "http://claw"+c.path, token, c.body)
		if res.code != c.code || !strings.Contains(res.raw, c.want) {
			t.Errorf("%s %s: %d %s", c.path, c.body, res.code, res.raw)
		}
	}
	if len(got) != 2 || got[0] != "msg_1 hi discord" || !strings.HasSuffix(got[1], " no id <nil>") {
		t.Errorf("delivered %q", got)
	}
	none := newRig(t, nil)
	if res := do(t, none.unixClient(), "POST", "http://claw/channels/bridge/messages", token, `{"session":"main","content":"x"}`); res.code != 503 {
		t.Errorf("without Deliver: %d %s", res.code, res.raw)
	}
}

// TestRequestsCountForIdleCollector: a request is in flight for the idle
// collector while it is answered, so that no collection is started
// under it, and no longer once answered.
func TestRequestsCountForIdleCollector(t *testing.T) {
	var during atomic.Int32
	r := newRig(t, func(c *Config) {
		c.Chat = func(context.Context, ChatRequest, func(string)) (ChatResult, error) {
			during.Store(int32(idlegc.InFlight()))
			return ChatResult{Conversation: "c-idle", Reply: "ok"}, nil
		}
	})
	before := idlegc.InFlight()
	u := "http://claw"
	if got := do(t, r.unixClient(), "POST", u+"/chat", token, `{"message":"hi"}`); got.code != 200 {
		t.Fatalf("chat = %d %s", got.code, got.raw)
	}
	if n := int(during.Load()); n != before+1 {
		t.Fatalf("%d requests in flight while answering, %d before", n, before)
	}
	// The count ends after the answer is written: wait for it, boundedly.
	for end := time.Now().Add(5 * time.Second); idlegc.InFlight() != before; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d requests in flight after the answer, %d before", idlegc.InFlight(), before)
		}
	}
}
