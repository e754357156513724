package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/channeltest"
)

const testToken = "0123456789abcdef-bridge-token"

// client is a bridge client written from the protocol document. A
// reader answers the server's pings (unless mute) and queues the other
// frames.
type client struct {
	t      *testing.T
	ws     *websocket.Conn
	frames chan map[string]any
	end    chan error
	pings  atomic.Int32
}

// startServer runs a bridge; log, when given, receives its log.
func startServer(t *testing.T, o channeltest.Options, cfg Config, log ...io.Writer) (*Server, *channeltest.Rig) {
	t.Helper()
	if o.ToolsAllow == nil {
		o.ToolsAllow = []string{"time", "shell", "file_write"}
	}
	rig := channeltest.New(t, "bridge", o)
	if len(log) > 0 {
		rig.Env.Log = slog.New(slog.NewTextHandler(log[0], nil))
	}
	cfg.Listen, cfg.Token = "127.0.0.1:0", testToken
	if cfg.Sessions == nil {
		cfg.Sessions = []string{"s1", "s2"}
	}
	s, err := New(rig.Env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	<-s.Ready()
	return s, rig
}

func dial(t *testing.T, s *Server) *client { return dialMute(t, s, false) }

func dialMute(t *testing.T, s *Server, mute bool) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+s.Addr().String()+"/bridge", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	c := &client{t: t, ws: ws, frames: make(chan map[string]any, 64), end: make(chan error, 1)}
	go func() {
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				c.end <- err
				return
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				c.end <- fmt.Errorf("frame %s: %w", data, err)
				return
			}
			if m["type"] == "ping" {
				c.pings.Add(1)
				if !mute {
					b, _ := json.Marshal(map[string]any{"type": "pong", "ts": m["ts"]})
					ws.Write(context.Background(), websocket.MessageText, b)
				}
				continue
			}
			c.frames <- m
		}
	}()
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, ok := v.([]byte)
	if !ok {
		b, _ = json.Marshal(v)
	}
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next frame other than a ping.
func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case m := <-c.frames:
		return m
	case err := <-c.end:
		c.t.Fatalf("read: %v", err)
	case <-time.After(10 * time.Second):
		c.t.Fatal("no frame in 10 s")
	}
	return nil
}

// closed waits for the server to close the socket and returns the code.
func (c *client) closed() websocket.StatusCode {
	c.t.Helper()
	for {
		select {
		case <-c.frames:
		case err := <-c.end:
			return websocket.CloseStatus(err)
		case <-time.After(10 * time.Second):
			c.t.Fatal("the server did not close the socket")
		}
	}
}

func hello(session, token string) map[string]any {
	return map[string]any{"type": "hello", "openclaw_session": session, "claude_session": "c-" + session, "pid": 4242, "token": token}
}

func (c *client) hello(session string) map[string]any {
	c.t.Helper()
	c.send(hello(session, testToken))
	ack := c.next()
	if ack["type"] != "hello_ack" {
		c.t.Fatalf("hello answered %v", ack)
	}
	return ack
}

func TestHelloRefused(t *testing.T) {
	s, _ := startServer(t, channeltest.Options{}, Config{HelloTimeout: 200 * time.Millisecond})
	for name, first := range map[string]any{
		"bad token":       hello("s1", testToken+"x"),
		"unknown session": hello("nobody", testToken),
		"not a hello":     map[string]any{"type": "ping", "ts": 1},
		"not JSON":        []byte("hello"),
	} {
		c := dial(t, s)
		c.send(first)
		if code := c.closed(); code != websocket.StatusPolicyViolation {
			t.Errorf("%s: closed with %v, want 1008", name, code)
		}
	}
	c := dial(t, s) // says nothing
	if code := c.closed(); code != websocket.StatusPolicyViolation {
		t.Errorf("no hello: closed with %v, want 1008", code)
	}
}

// TestToolCalls: hello_ack offers the channel's tools; an allowed call
// runs, a denied one and one outside tools_allow are refused with their
// rules; every attempt is receipted under the channel and the session.
func TestToolCalls(t *testing.T) {
	s, rig := startServer(t, channeltest.Options{}, Config{})
	c := dial(t, s)
	ack := c.hello("s1")
	var names []string
	for _, tl := range ack["tools"].([]any) {
		m := tl.(map[string]any)
		names = append(names, m["name"].(string))
		if _, ok := m["inputSchema"].(map[string]any); !ok {
			t.Errorf("tool %v has no inputSchema", m)
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "file_write,shell,time" {
		t.Errorf("tools = %v", names)
	}
	meta := ack["session_meta"].(map[string]any)
	if meta["session"] != "s1" || meta["channel"] != "bridge" || meta["autonomy"] != "supervised" {
		t.Errorf("session_meta = %v", meta)
	}

	c.send(map[string]any{"type": "tool_call", "call_id": "tc_001", "tool": "time", "args": map[string]any{}})
	r := c.next()
	res, _ := r["result"].(map[string]any)
	if r["type"] != "tool_result" || r["call_id"] != "tc_001" || r["ok"] != true || !strings.Contains(fmt.Sprint(res["text"]), "2026-11-27") {
		t.Fatalf("allowed call = %v", r)
	}
	c.send(map[string]any{"type": "tool_call", "call_id": "tc_002", "tool": "shell", "args": map[string]any{"command": "rm -rf /"}})
	r = c.next()
	if r["call_id"] != "tc_002" || r["ok"] != false || !strings.HasPrefix(fmt.Sprint(r["error"]), "denied by policy: ") {
		t.Fatalf("denied call = %v", r)
	}
	c.send(map[string]any{"type": "tool_call", "call_id": "tc_003", "tool": "file_list", "args": map[string]any{"path": "."}})
	r = c.next()
	if r["ok"] != false || !strings.Contains(fmt.Sprint(r["error"]), broker.RuleToolNotAllowed) {
		t.Fatalf("call outside tools_allow = %v", r)
	}
	// a write asks, and this channel names no approver
	c.send(map[string]any{"type": "tool_call", "call_id": "tc_004", "tool": "file_write", "args": map[string]any{"path": "notes.txt", "content": "x"}})
	r = c.next()
	if r["ok"] != false || !strings.Contains(fmt.Sprint(r["error"]), "needs approval and nobody could be asked") {
		t.Fatalf("call that asks = %v", r)
	}
	n := 0
	for _, b := range rig.Bodies(t) {
		if b.Type == "decision" {
			n++
			if b.Channel != "bridge" || b.User != "s1" {
				t.Errorf("receipt %d: channel %q user %q", b.Seq, b.Channel, b.User)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d decision receipts, want 4", n)
	}
}

// TestBadFrames: a frame that does not decode or has an unknown type is
// answered with an error frame and the connection stays; a second hello,
// a binary frame and an oversized frame close it.
func TestBadFrames(t *testing.T) {
	s, _ := startServer(t, channeltest.Options{}, Config{ReadLimit: 4096})
	c := dial(t, s)
	c.hello("s1")
	for _, f := range []string{`{"type":"launch_missiles"}`, `{"type":"tool_call","call_id":"a","tool":"time","extra":1}`, `[1]`, `{"type":"ping","ts":1} {}`} {
		c.send([]byte(f))
		if r := c.next(); r["type"] != "error" || r["error"] == "" {
			t.Fatalf("%s answered %v", f, r)
		}
	}
	c.send(map[string]any{"type": "ping", "ts": 7})
	if r := c.next(); r["type"] != "pong" || r["ts"] != float64(7) {
		t.Fatalf("ping answered %v", r)
	}
	c.send(hello("s1", testToken))
	if r := c.next(); r["type"] != "error" {
		t.Fatalf("second hello answered %v", r)
	}
	if code := c.closed(); code != websocket.StatusPolicyViolation {
		t.Errorf("second hello: closed with %v", code)
	}

	c = dial(t, s)
	c.hello("s1")
	if err := c.ws.Write(context.Background(), websocket.MessageBinary, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if code := c.closed(); code != websocket.StatusUnsupportedData {
		t.Errorf("binary frame: closed with %v", code)
	}

	c = dial(t, s)
	c.hello("s1")
	c.send([]byte(`{"type":"ping","ts":1,"pad":"` + strings.Repeat("x", 5000) + `"}`))
	if code := c.closed(); code != websocket.StatusMessageTooBig {
		t.Errorf("oversized frame: closed with %v", code)
	}
}

// TestPermissionRoundTrip: a permission request reaches the approvals
// queue as the session's, an allowed approver answers, the client gets
// permission_reply allow, and the receipts record it.
func TestPermissionRoundTrip(t *testing.T) {
	s, rig := startServer(t, channeltest.Options{Approvers: []string{"cli:alice"}}, Config{})
	c := dial(t, s)
	c.hello("s1")
	go func() {
		if err := channeltest.ApproveNext(context.Background(), rig.Env.Queue, "approve", "cli:alice"); err != nil {
			t.Error(err)
		}
	}()
	c.send(map[string]any{"type": "permission_request", "request_id": "abxyz", "tool": "Bash", "args": map[string]any{"command": "make"}, "rationale": "build"})
	r := c.next()
	if r["type"] != "permission_reply" || r["request_id"] != "abxyz" || r["behavior"] != "allow" {
		t.Fatalf("reply = %v", r)
	}
	go channeltest.ApproveNext(context.Background(), rig.Env.Queue, "reject", "cli:alice")
	c.send(map[string]any{"type": "permission_request", "request_id": "qwert", "tool": "Bash", "args": map[string]any{"command": "rm x"}})
	if r := c.next(); r["behavior"] != "deny" || r["request_id"] != "qwert" {
		t.Fatalf("reply = %v", r)
	}
	// Claude Code's own field names
	go channeltest.ApproveNext(context.Background(), rig.Env.Queue, "approve", "cli:alice")
	c.send(map[string]any{"type": "permission_request", "request_id": "zyxwv", "tool_name": "Write", "description": "write a file", "input_preview": "{\"file_path\":\"a\"}"})
	if r := c.next(); r["behavior"] != "allow" || r["request_id"] != "zyxwv" {
		t.Fatalf("reply = %v", r)
	}
	var got []string
	for _, b := range rig.Bodies(t) {
		if b.Decision != nil && b.Action.Tool == "permission:Write" && !strings.Contains(b.Action.Summary, "input_preview") {
			t.Errorf("summary %q", b.Action.Summary)
		}
		if b.Approval != nil {
			got = append(got, b.Channel+"/"+b.User+":"+b.Approval.Result+":"+b.Approval.By)
		}
	}
	if strings.Join(got, " ") != "bridge/s1:approved:cli:alice bridge/s1:rejected:cli:alice bridge/s1:approved:cli:alice" {
		t.Fatalf("approval receipts = %v", got)
	}
}

// TestReconnectBuffer: inbound messages for a session without a client
// are kept (the oldest dropped beyond Buffer) and flushed in order after
// the next hello_ack; a new hello takes the session over from an older
// connection.
func TestReconnectBuffer(t *testing.T) {
	var logged syncBuffer
	s, _ := startServer(t, channeltest.Options{}, Config{Buffer: 3}, &logged)
	ctx := context.Background()
	c := dial(t, s)
	c.hello("s1")
	if err := s.Deliver(ctx, "s1", Inbound{RequestID: "msg_0", Content: "live"}); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m["type"] != "inbound_message" || m["content"] != "live" {
		t.Fatalf("live message = %v", m)
	}
	c.ws.Close(websocket.StatusNormalClosure, "")
	for i := 0; i < 100 && s.Buffered("s1") == 0; i++ {
		s.Deliver(ctx, "s1", Inbound{RequestID: "probe", Content: "probe"})
		time.Sleep(10 * time.Millisecond)
	}
	for i := 1; i <= 5; i++ {
		if err := s.Deliver(ctx, "s1", Inbound{RequestID: fmt.Sprintf("msg_%d", i), Content: fmt.Sprint(i), Meta: map[string]any{"source_channel": "discord"}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := logged.String(); !strings.Contains(got, "event=bridge_inbound_dropped") || !strings.Contains(got, "session=s1") {
		t.Errorf("no warning for the dropped messages; the log:\n%s", got)
	}
	if !errors.Is(s.Deliver(ctx, "nobody", Inbound{}), ErrUnknownSession) {
		t.Error("delivered to an unknown session")
	}
	c = dial(t, s)
	ack := c.hello("s1")
	if ack["session_meta"].(map[string]any)["buffered"] != float64(3) {
		t.Errorf("hello_ack = %v", ack)
	}
	for _, want := range []string{"3", "4", "5"} {
		if m := c.next(); m["type"] != "inbound_message" || m["content"] != want {
			t.Fatalf("buffered message = %v, want content %s", m, want)
		}
	}
	newer := dial(t, s)
	newer.hello("s1")
	if code := c.closed(); code != websocket.StatusPolicyViolation {
		t.Errorf("taken over: closed with %v", code)
	}
	s.Deliver(ctx, "s1", Inbound{RequestID: "msg_6", Content: "6"})
	if m := newer.next(); m["content"] != "6" {
		t.Fatalf("after takeover = %v", m)
	}
}

// TestPingDead: a client that answers pings stays; one that does not is
// closed after two unanswered pings.
func TestPingDead(t *testing.T) {
	s, _ := startServer(t, channeltest.Options{}, Config{PingInterval: 30 * time.Millisecond})
	live := dial(t, s)
	live.hello("s1")
	mute := dialMute(t, s, true)
	mute.hello("s2")
	if code := mute.closed(); code != websocket.StatusPolicyViolation {
		t.Fatalf("mute client closed with %v", code)
	}
	if n := mute.pings.Load(); n < 2 {
		t.Errorf("closed after %d pings", n)
	}
	// The live client answered every ping (next does) and is still bound.
	live.send(map[string]any{"type": "tool_call", "call_id": "t", "tool": "time"})
	if r := live.next(); r["ok"] != true {
		t.Fatalf("live client: %v", r)
	}
}

// TestNodeClient runs the node client in testdata against the server: it
// says hello, calls an allowed and a denied tool, and completes a
// permission round trip.
func TestNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	s, rig := startServer(t, channeltest.Options{Approvers: []string{"cli:alice"}}, Config{})
	go channeltest.ApproveNext(context.Background(), rig.Env.Queue, "approve", "cli:alice")
	cmd := exec.Command(node, "--experimental-websocket", "../../../testdata/bridge/client.mjs", "ws://"+s.Addr().String()+"/bridge", "s1")
	cmd.Env = append(os.Environ(), "SYNTHESIS_BRIDGE_TOKEN="+testToken, "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	want := "hello_ack tools=file_write,shell,time session=s1\ntc_001 ok ok\ntc_002 error denied by policy: "
	if !strings.HasPrefix(string(out), want) || !strings.HasSuffix(string(out), "permission abxyz allow\n") {
		t.Fatalf("node client said:\n%s", out)
	}
}

// BenchmarkToolCall is one allowed tool call (the in-process time tool)
// over the bridge, from tool_call to tool_result, next to the same call
// straight through Env.Call (the anchor: the broker path without the
// bridge).
func BenchmarkToolCall(b *testing.B) {
	rig := channeltest.New(b, "bridge", channeltest.Options{ToolsAllow: []string{"time"}})
	s, err := New(rig.Env, Config{Listen: "127.0.0.1:0", Token: testToken, Sessions: []string{"s1"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	<-s.Ready()
	b.Run("env_call", func(b *testing.B) {
		for b.Loop() {
			if r := rig.Env.Call(ctx, "s1", "s1", "time", json.RawMessage(`{}`)); r.IsError {
				b.Fatal(r.Content)
			}
		}
	})
	b.Run("bridge", func(b *testing.B) {
		ws, _, err := websocket.Dial(ctx, "ws://"+s.Addr().String()+"/bridge", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ws.CloseNow()
		h, _ := json.Marshal(hello("s1", testToken))
		ws.Write(ctx, websocket.MessageText, h)
		if _, _, err := ws.Read(ctx); err != nil {
			b.Fatal(err)
		}
		call := []byte(`{"type":"tool_call","call_id":"tc","tool":"time","args":{}}`)
		for b.Loop() {
			if err := ws.Write(ctx, websocket.MessageText, call); err != nil {
				b.Fatal(err)
			}
			_, data, err := ws.Read(ctx)
			if err != nil || !strings.Contains(string(data), `"ok":true`) {
				b.Fatalf("%s %v", data, err)
			}
		}
	})
}

// syncBuffer is a bytes.Buffer a logger and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
