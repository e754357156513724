// Package bridge is claw's side of the SynthesisAgent bridge: a WebSocket
// server (the seed's OpenclawPlugin side) that a ClaudePlugin process
// connects to, binds to a session with hello, and sends its tool calls
// and permission requests through. Every tool call takes the one path
// (gate, approval, sandbox, receipts) as the channel "bridge" and the
// session as its user; docs/bridge.md has the frames as claw speaks them.
//
// # Protocol, in short
//
// One JSON object per text frame, at /bridge on a loopback address. The
// first frame must be hello{openclaw_session, claude_session, pid, token}
// within HelloTimeout; a wrong token (compared in constant time) or a
// session the config does not list closes the socket with 1008. Otherwise
// hello_ack{tools, session_meta} follows, then the inbound messages
// buffered while the session had no client, in order.
//
//   - tool_call{call_id, tool, args} → exactly one tool_result{call_id,
//     ok:true, result{text, status, action_id}} or {call_id, ok:false,
//     error}; a denial reads "denied by policy: <rule ids>".
//   - permission_request{request_id, tool, args, rationale} → the
//     session's approvers through the approvals queue →
//     permission_reply{request_id, behavior: allow|deny}, recorded.
//   - inbound_message{request_id, content, meta} is sent by [Server.Deliver].
//   - ping{ts} every PingInterval; a client that leaves two in a row
//     unanswered (pong{ts}) is dead: the socket is closed and inbound
//     messages are buffered again. A client's ping is answered with pong.
//   - A frame that does not decode, or of a type a client does not send,
//     is answered with error{error} and the connection stays; a binary
//     frame, a second hello, or a frame larger than ReadLimit closes it.
//
// One connection per session: a new hello for a bound session takes it
// over and the older socket is closed. Up to Buffer inbound messages are
// kept per session while no client is bound; beyond that the oldest is
// dropped, with a warning in the log.
package bridge

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/clawsec/claw/internal/channel"
)

// Config of a Server.
type Config struct {
	// Listen is the loopback host:port ("127.0.0.1:18801"; port 0 picks
	// one, see [Server.Addr]).
	Listen string
	// Token is the shared secret a client's hello must carry.
	Token string
	// Sessions are the session ids a client may bind.
	Sessions []string
	// Buffer is how many inbound messages a session keeps while no
	// client is bound (100 if zero).
	Buffer int
	// PingInterval is how often a bound client is pinged (30 s if zero).
	PingInterval time.Duration
	// HelloTimeout bounds the wait for hello (10 s if zero).
	HelloTimeout time.Duration
	// ReadLimit bounds a frame (DefaultReadLimit if zero).
	ReadLimit int64
	// MaxInFlight bounds the tool calls and permission requests a
	// connection may have running at once (16 if zero); one more is
	// answered at once with an error.
	MaxInFlight int
}

// Inbound is a message for a session's client.
type Inbound = channel.Message

// The bridge takes messages for its sessions.
var _ channel.Receiver = (*Server)(nil)

// Server is the bridge.
type Server struct {
	env *channel.Env
	cfg Config

	mu       sync.Mutex
	sessions map[string]*session
	addr     net.Addr
	ready    chan struct{}
}

type session struct {
	id   string
	conn *conn
	buf  [][]byte // encoded inbound frames, oldest first
}

// conn is one bound client connection.
type conn struct {
	ws       *websocket.Conn
	session  string
	inflight chan struct{}

	mu      sync.Mutex
	pending int64 // ts of the ping not yet answered, 0 when none
	missed  int
}

// ErrUnknownSession is returned by Deliver for a session the config does
// not list.
var ErrUnknownSession = errors.New("unknown bridge session")

// New returns a Server for env.
func New(env *channel.Env, cfg Config) (*Server, error) {
	if len(cfg.Token) < 16 {
		return nil, errors.New("the bridge token is missing or shorter than 16 characters")
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 100
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 30 * time.Second
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = 10 * time.Second
	}
	if cfg.ReadLimit <= 0 {
		cfg.ReadLimit = DefaultReadLimit
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 16
	}
	s := &Server{env: env, cfg: cfg, sessions: map[string]*session{}, ready: make(chan struct{})}
	for _, id := range cfg.Sessions {
		s.sessions[id] = &session{id: id}
	}
	return s, nil
}

// Ready is closed once the server listens.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the address the server listens on, once Ready.
func (s *Server) Addr() net.Addr { return s.addr }

// Run listens on Config.Listen and serves /bridge until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("bridge: failed to listen on %s: %w", s.cfg.Listen, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bridge", func(w http.ResponseWriter, r *http.Request) { s.handle(ctx, w, r) })
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 16 << 10}
	s.addr = ln.Addr()
	close(s.ready)
	s.env.Log.Info("bridge listening", "event", "channel_listening", "channel", s.env.Name, "url", "ws://"+ln.Addr().String()+"/bridge")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return fmt.Errorf("bridge: %w", err)
	}
	s.mu.Lock()
	for _, se := range s.sessions {
		if se.conn != nil {
			se.conn.ws.Close(websocket.StatusGoingAway, "claw is shutting down")
		}
	}
	s.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return nil
}

// Deliver sends an inbound message to the session's client, or keeps it
// until one binds (dropping the oldest kept beyond Config.Buffer).
func (s *Server) Deliver(ctx context.Context, sessionID string, m Inbound) error {
	frame, err := json.Marshal(struct {
		Type string `json:"type"`
		Inbound
	}{TypeInbound, m})
	if err != nil {
		return fmt.Errorf("failed to encode the inbound message: %w", err)
	}
	s.mu.Lock()
	se, ok := s.sessions[sessionID]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	c := se.conn
	if c == nil {
		s.keepLocked(se, frame)
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if err := s.write(ctx, c, frame); err != nil {
		s.mu.Lock()
		s.keepLocked(se, frame)
		s.mu.Unlock()
	}
	return nil
}

// keepLocked buffers an inbound frame, dropping the oldest beyond Buffer.
func (s *Server) keepLocked(se *session, frame []byte) {
	se.buf = append(se.buf, frame)
	if over := len(se.buf) - s.cfg.Buffer; over > 0 {
		se.buf = slices.Delete(se.buf, 0, over)
		s.env.Log.Warn("bridge buffer full: oldest inbound message dropped", "event", "bridge_inbound_dropped",
			"channel", s.env.Name, "session", se.id, "dropped", over, "kept", len(se.buf))
	}
}

// Buffered is how many inbound messages the session keeps.
func (s *Server) Buffered(sessionID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if se, ok := s.sessions[sessionID]; ok {
		return len(se.buf)
	}
	return 0
}

func (s *Server) handle(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil) // refuses cross-origin browsers
	if err != nil {
		return
	}
	ws.SetReadLimit(s.cfg.ReadLimit)
	c, h, ok := s.hello(ctx, ws)
	if !ok {
		return
	}
	defer s.unbind(c)
	s.env.Log.Info("bridge client bound", "event", "bridge_bound", "channel", s.env.Name, "session", h.Session,
		"claude_session", h.ClaudeSession, "pid", h.PID)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.pinger(cctx, c)
	s.serve(cctx, c)
}

// hello reads and checks the first frame, binds the session, answers
// hello_ack and flushes what the session kept.
func (s *Server) hello(ctx context.Context, ws *websocket.Conn) (*conn, *Hello, bool) {
	// A read whose context ends drops the socket without a close frame:
	// a timer closes it properly instead.
	late := time.AfterFunc(s.cfg.HelloTimeout, func() { ws.Close(websocket.StatusPolicyViolation, "no hello in time") })
	typ, data, err := ws.Read(ctx)
	if !late.Stop() || err != nil {
		ws.Close(websocket.StatusPolicyViolation, "no hello")
		return nil, nil, false
	}
	f, err := DecodeFrame(data)
	if typ != websocket.MessageText || err != nil || f.Type != TypeHello || !s.tokenOK(f.Hello.Token) {
		s.env.Log.Warn("bridge hello refused", "event", "bridge_refused", "channel", s.env.Name)
		ws.Close(websocket.StatusPolicyViolation, "hello refused")
		return nil, nil, false
	}
	h := f.Hello
	c := &conn{ws: ws, session: h.Session, inflight: make(chan struct{}, s.cfg.MaxInFlight)}
	s.mu.Lock()
	se, ok := s.sessions[h.Session]
	if !ok {
		s.mu.Unlock()
		s.env.Log.Warn("bridge hello for an unknown session", "event", "bridge_refused", "channel", s.env.Name, "session", h.Session)
		ws.Close(websocket.StatusPolicyViolation, "hello refused")
		return nil, nil, false
	}
	old := se.conn
	se.conn = c
	kept := se.buf
	se.buf = nil
	s.mu.Unlock()
	if old != nil {
		old.ws.Close(websocket.StatusPolicyViolation, "session bound by a newer hello")
	}
	ack, _ := json.Marshal(map[string]any{"type": TypeHelloAck, "tools": mcpTools(s.env), "session_meta": map[string]any{
		"session": h.Session, "channel": s.env.Name, "autonomy": s.env.Autonomy, "buffered": len(kept),
		"ping_interval_ms": s.cfg.PingInterval.Milliseconds(),
	}})
	if err := s.write(ctx, c, ack); err != nil {
		s.unbind(c)
		s.requeue(h.Session, kept)
		return nil, nil, false
	}
	for i, m := range kept {
		if err := s.write(ctx, c, m); err != nil {
			s.unbind(c)
			s.requeue(h.Session, kept[i:])
			return nil, nil, false
		}
	}
	return c, h, true
}

// requeue puts back messages that could not be sent, ahead of newer ones.
func (s *Server) requeue(id string, frames [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[id]
	newer := se.buf
	se.buf = nil
	for _, f := range append(slices.Clone(frames), newer...) {
		s.keepLocked(se, f)
	}
}

func (s *Server) tokenOK(tok string) bool {
	a, b := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(s.cfg.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// unbind forgets c as its session's connection (if it still is).
func (s *Server) unbind(c *conn) {
	s.mu.Lock()
	if se := s.sessions[c.session]; se != nil && se.conn == c {
		se.conn = nil
	}
	s.mu.Unlock()
	c.ws.CloseNow()
}

// serve reads the client's frames until the connection ends.
func (s *Server) serve(ctx context.Context, c *conn) {
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.ws.Close(websocket.StatusUnsupportedData, "text frames only")
			return
		}
		f, err := DecodeFrame(data)
		if err != nil {
			s.sendError(ctx, c, err.Error())
			continue
		}
		switch f.Type {
		case TypeHello:
			s.sendError(ctx, c, "this connection is already bound to a session")
			c.ws.Close(websocket.StatusPolicyViolation, "one session per connection")
			return
		case TypePing:
			s.write(ctx, c, tsFrame(TypePong, f.TS))
		case TypePong:
			c.mu.Lock()
			if f.TS != 0 && f.TS <= c.pending { // this ping or an earlier one
				c.pending, c.missed = 0, 0
			}
			c.mu.Unlock()
		case TypeToolCall:
			s.spawn(ctx, c, func() { s.toolCall(ctx, c, f.ToolCall) }, func() {
				s.sendResult(ctx, c, f.ToolCall.CallID, nil, "too many calls in flight on this connection")
			})
		case TypePermissionRequest:
			s.spawn(ctx, c, func() { s.permission(ctx, c, f.Permission) }, func() {
				s.sendError(ctx, c, "too many requests in flight on this connection")
			})
		}
	}
}

// spawn runs fn in its own goroutine when the connection has room, else
// runs full.
func (s *Server) spawn(ctx context.Context, c *conn, fn, full func()) {
	select {
	case c.inflight <- struct{}{}:
		go func() {
			defer func() { <-c.inflight }()
			fn()
		}()
	default:
		full()
	}
}

// ToolResult is the result of a successful tool call.
type ToolResult struct {
	Text     string `json:"text"`
	Status   string `json:"status"`
	ActionID string `json:"action_id,omitempty"`
}

func (s *Server) toolCall(ctx context.Context, c *conn, tc *ToolCall) {
	r := s.env.Call(ctx, c.session, c.session, tc.Tool, tc.Args)
	if !r.IsError {
		s.sendResult(ctx, c, tc.CallID, &ToolResult{Text: r.Content, Status: r.Status, ActionID: r.ActionID}, "")
		return
	}
	msg := channel.Denial(r)
	if msg == "" {
		msg = strings.TrimPrefix(r.Content, "error: ")
	}
	s.sendResult(ctx, c, tc.CallID, nil, msg)
}

func (s *Server) permission(ctx context.Context, c *conn, p *PermissionRequest) {
	var args map[string]any
	_ = json.Unmarshal(p.Args, &args)
	if p.InputPreview != "" {
		if args == nil {
			args = map[string]any{}
		}
		args["input_preview"] = p.InputPreview
	}
	allow, out, err := s.env.Permission(ctx, c.session, c.session, channel.Permission{Tool: p.Tool, Args: args, Rationale: p.Rationale})
	behavior := "deny"
	if allow {
		behavior = "allow"
	}
	if err != nil {
		s.env.Log.Warn("bridge permission request failed", "event", "bridge_permission_error", "channel", s.env.Name,
			"session", c.session, "error", err.Error())
	}
	attrs := []any{"event", "bridge_permission", "channel", s.env.Name, "session", c.session, "request_id", p.RequestID, "behavior", behavior}
	if out != nil {
		attrs = append(attrs, "action_id", out.ActionID, "status", out.Status)
	}
	s.env.Log.Info("bridge permission answered", attrs...)
	reply, _ := json.Marshal(map[string]string{"type": TypePermissionReply, "request_id": p.RequestID, "behavior": behavior})
	s.writeSession(ctx, c, reply)
}

func (s *Server) sendResult(ctx context.Context, c *conn, callID string, res *ToolResult, errMsg string) {
	v := map[string]any{"type": TypeToolResult, "call_id": callID, "ok": res != nil}
	if res != nil {
		v["result"] = res
	} else {
		v["error"] = errMsg
	}
	b, _ := json.Marshal(v)
	s.writeSession(ctx, c, b)
}

func (s *Server) sendError(ctx context.Context, c *conn, msg string) {
	b, _ := json.Marshal(map[string]string{"type": TypeError, "error": msg})
	s.write(ctx, c, b)
}

// writeSession sends an answer to the session's current connection: the
// one that asked, or the one that took over since.
func (s *Server) writeSession(ctx context.Context, c *conn, frame []byte) {
	s.mu.Lock()
	cur := c
	if se := s.sessions[c.session]; se != nil && se.conn != nil {
		cur = se.conn
	}
	s.mu.Unlock()
	if err := s.write(ctx, cur, frame); err != nil {
		s.env.Log.Warn("bridge answer lost: the client is gone", "event", "bridge_answer_lost", "channel", s.env.Name, "session", c.session)
	}
}

func (s *Server) write(ctx context.Context, c *conn, frame []byte) error {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.ws.Write(wctx, websocket.MessageText, frame)
}

func tsFrame(typ string, ts int64) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "ts": ts})
	return b
}

// pinger pings every PingInterval; two pings in a row left unanswered
// mean the client is dead.
func (s *Server) pinger(ctx context.Context, c *conn) {
	t := time.NewTicker(s.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.mu.Lock()
			if c.pending != 0 {
				c.missed++
			}
			dead := c.missed >= 2
			ts := now.UnixMilli()
			c.pending = ts
			c.mu.Unlock()
			if dead {
				s.env.Log.Warn("bridge client missed two pings: closing", "event", "bridge_dead", "channel", s.env.Name, "session", c.session)
				c.ws.Close(websocket.StatusPolicyViolation, "missed two pings")
				return
			}
			s.write(ctx, c, tsFrame(TypePing, ts))
		}
	}
}

// mcpTools is the catalog as MCP tools: {name, description, inputSchema}.
func mcpTools(env *channel.Env) []map[string]any {
	out := []map[string]any{}
	for _, t := range env.Tools {
		out = append(out, map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.Schema()})
	}
	return out
}
