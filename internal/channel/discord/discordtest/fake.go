// Package discordtest is a fake Discord on 127.0.0.1 for tests: the REST
// API (GET /gateway, POST messages and typing, scripted 429s) and the
// gateway v10 (Hello, Identify, heartbeats and their ACKs, READY,
// MESSAGE_CREATE, Resume with replay, Reconnect, close codes), speaking
// the documented JSON wire format, so the real client runs against it
// with nothing changed but its base URL.
package discordtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/coder/websocket"
)

// BotID is the fake bot's user id.
const BotID = "900000000000000001"

// Posted is a message the bot sent.
type Posted struct {
	ChannelID       string
	Content         string
	AllowedMentions json.RawMessage
}

// Server is a fake Discord.
type Server struct {
	Token string
	// HeartbeatInterval is sent in Hello (200 ms when zero).
	HeartbeatInterval time.Duration
	// NoContentIntent is the portal's MESSAGE CONTENT INTENT switched
	// off: an Identify asking for it is closed with 4014.
	NoContentIntent bool

	http *httptest.Server

	mu         sync.Mutex
	changed    chan struct{}
	conn       *websocket.Conn
	connCtx    context.Context
	seq        int64
	events     [][]byte // dispatches of the session, for replay
	session    string
	posted     []Posted
	typing     map[string]int
	identifies int
	dials      int
	resumes    int
	beats      int
	rateLimits []float64 // retry_after of the next message POSTs that answer 429
	limited    int
	withholdAC bool
	closes     []int // close codes the client sent, as seen
	nextID     int64
}

// New starts a fake Discord that accepts token.
func New(token string) *Server {
	s := &Server{Token: token, changed: make(chan struct{}), typing: map[string]int{}, nextID: 1100000000000000000}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v10/gateway", s.handleGateway)
	mux.HandleFunc("POST /api/v10/channels/{id}/messages", s.handleMessage)
	mux.HandleFunc("POST /api/v10/channels/{id}/typing", s.handleTyping)
	mux.HandleFunc("GET /ws", s.handleWS)
	// set before it serves: the handlers read it
	s.http = httptest.NewUnstartedServer(mux)
	s.http.Start()
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.conn != nil {
		s.conn.CloseNow()
	}
	s.mu.Unlock()
	s.http.Close()
}

// API is the REST base to give the client.
func (s *Server) API() string { return s.http.URL + "/api/v10" }

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.http.Listener.Addr().(*net.TCPAddr).String() }

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond (called with the server's state locked) holds,
// or ctx ends.
func (s *Server) Wait(ctx context.Context, cond func(*State) bool) error {
	for {
		s.mu.Lock()
		ok := cond(&State{s})
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fake discord: %w", ctx.Err())
		case <-ch:
		}
	}
}

// State is what Wait's condition reads.
type State struct{ s *Server }

func (st *State) Posted() []Posted            { return append([]Posted(nil), st.s.posted...) }
func (st *State) Identifies() int             { return st.s.identifies }
func (st *State) Dials() int                  { return st.s.dials }
func (st *State) Resumes() int                { return st.s.resumes }
func (st *State) Beats() int                  { return st.s.beats }
func (st *State) Typing(channelID string) int { return st.s.typing[channelID] }
func (st *State) Connected() bool             { return st.s.conn != nil && st.s.session != "" }
func (st *State) RateLimited() int            { return st.s.limited }
func (st *State) ClientCloses() []int         { return append([]int(nil), st.s.closes...) }

// Snapshot runs f on the current state.
func (s *Server) Snapshot(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&State{s})
}

// RateLimitNext makes the next len(retryAfter) message POSTs answer 429
// with those retry_after seconds (per-route, not global).
func (s *Server) RateLimitNext(retryAfter ...float64) {
	s.mu.Lock()
	s.rateLimits = append(s.rateLimits, retryAfter...)
	s.mu.Unlock()
}

// WithholdACKs stops (or restarts) acknowledging heartbeats.
func (s *Server) WithholdACKs(on bool) {
	s.mu.Lock()
	s.withholdAC = on
	s.mu.Unlock()
}

// MessageCreate is the data of a MESSAGE_CREATE the fake sends.
type MessageCreate struct {
	ChannelID string
	GuildID   string // "" for a DM
	AuthorID  string
	Bot       bool
	WebhookID string
	Content   string
	Mentions  []string
}

// Send dispatches a MESSAGE_CREATE on the current connection.
func (s *Server) Send(ctx context.Context, m MessageCreate) error {
	s.mu.Lock()
	s.nextID++
	d := map[string]any{
		"id": strconv.FormatInt(s.nextID, 10), "channel_id": m.ChannelID, "content": m.Content,
		"author":    map[string]any{"id": m.AuthorID, "username": "u" + m.AuthorID, "bot": m.Bot},
		"timestamp": time.Now().UTC().Format(time.RFC3339), "mentions": []any{},
	}
	if m.GuildID != "" {
		d["guild_id"] = m.GuildID
	}
	if m.WebhookID != "" {
		d["webhook_id"] = m.WebhookID
	}
	var ms []any
	for _, id := range m.Mentions {
		ms = append(ms, map[string]any{"id": id, "username": "u" + id})
	}
	if ms != nil {
		d["mentions"] = ms
	}
	s.mu.Unlock()
	return s.dispatch(ctx, "MESSAGE_CREATE", d)
}

// dispatch sends an op 0 event with the next sequence number, and keeps
// it for a resume's replay.
func (s *Server) dispatch(ctx context.Context, t string, d any) error {
	s.mu.Lock()
	s.seq++
	b, err := json.Marshal(map[string]any{"op": 0, "t": t, "s": s.seq, "d": d})
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.events = append(s.events, b)
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return nil // sent on resume
	}
	return c.Write(ctx, websocket.MessageText, b)
}

// SendRaw writes b as a text frame on the current connection, as it is.
func (s *Server) SendRaw(ctx context.Context, b []byte) error {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("fake discord: no connection")
	}
	return c.Write(ctx, websocket.MessageText, b)
}

// Reconnect sends op 7 on the current connection.
func (s *Server) Reconnect(ctx context.Context) error { return s.sendOp(ctx, 7, nil) }

// InvalidSession sends op 9 with d = resumable.
func (s *Server) InvalidSession(ctx context.Context, resumable bool) error {
	return s.sendOp(ctx, 9, resumable)
}

// CloseWith closes the current connection with code.
func (s *Server) CloseWith(code int, reason string) {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.Close(websocket.StatusCode(code), reason)
	}
}

func (s *Server) sendOp(ctx context.Context, op int, d any) error {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("fake discord: no connection")
	}
	b, _ := json.Marshal(map[string]any{"op": op, "d": d})
	return c.Write(ctx, websocket.MessageText, b)
}

func (s *Server) authorized(r *http.Request) bool {
	return r.Header.Get("Authorization") == "Bot "+s.Token
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) handleGateway(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]string{"url": "ws://" + s.Addr() + "/ws"})
}

func (s *Server) handleTyping(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeJSON(w, 401, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	s.mu.Lock()
	s.typing[r.PathValue("id")]++
	s.notify()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeJSON(w, 401, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	var body struct {
		Content         string          `json:"content"`
		AllowedMentions json.RawMessage `json:"allowed_mentions"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
		writeJSON(w, 400, map[string]any{"message": "Invalid JSON", "code": 50109})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rateLimits) > 0 {
		ra := s.rateLimits[0]
		s.rateLimits = s.rateLimits[1:]
		s.limited++
		s.notify()
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(ra, 'f', 3, 64))
		h.Set("X-RateLimit-Bucket", "fakebucket")
		h.Set("X-RateLimit-Scope", "user")
		h.Set("Retry-After", strconv.Itoa(int(ra+0.999)))
		writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": ra, "global": false})
		return
	}
	n := len(utf16.Encode([]rune(body.Content)))
	if n > 2000 || strings.TrimSpace(body.Content) == "" {
		writeJSON(w, 400, map[string]any{"message": "Invalid Form Body", "code": 50035})
		return
	}
	s.posted = append(s.posted, Posted{ChannelID: r.PathValue("id"), Content: body.Content, AllowedMentions: body.AllowedMentions})
	s.notify()
	s.nextID++
	h := w.Header()
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "4")
	h.Set("X-RateLimit-Reset-After", "1.000")
	h.Set("X-RateLimit-Bucket", "fakebucket")
	writeJSON(w, 200, map[string]any{"id": strconv.FormatInt(s.nextID, 10), "channel_id": r.PathValue("id"), "content": body.Content})
}

// handleWS is the gateway: Hello, then Identify (READY) or Resume
// (replay, RESUMED), then heartbeats until the connection ends.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("v") != "10" || q.Get("encoding") != "json" || q.Has("compress") {
		http.Error(w, "fake discord speaks v=10&encoding=json without compression", 400)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	s.mu.Lock()
	s.dials++
	s.notify()
	s.mu.Unlock()
	ctx := r.Context()
	iv := s.HeartbeatInterval
	if iv == 0 {
		iv = 200 * time.Millisecond
	}
	hello, _ := json.Marshal(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": iv.Milliseconds()}})
	if c.Write(ctx, websocket.MessageText, hello) != nil {
		return
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			s.mu.Lock()
			if code := int(websocket.CloseStatus(err)); code >= 0 {
				s.closes = append(s.closes, code)
			}
			if s.conn == c {
				s.conn = nil
			}
			s.notify()
			s.mu.Unlock()
			return
		}
		var f struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(b, &f) != nil {
			c.Close(4002, "decode error")
			return
		}
		switch f.Op {
		case 1:
			s.mu.Lock()
			s.beats++
			hold := s.withholdAC
			s.notify()
			s.mu.Unlock()
			if !hold {
				c.Write(ctx, websocket.MessageText, []byte(`{"op":11}`))
			}
		case 2:
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			json.Unmarshal(f.D, &id)
			if id.Token != s.Token {
				c.Close(4004, "Authentication failed.")
				return
			}
			if s.NoContentIntent && id.Intents&(1<<15) != 0 {
				c.Close(4014, "Disallowed intent(s).")
				return
			}
			s.mu.Lock()
			s.identifies++
			s.session = fmt.Sprintf("session%d", s.identifies)
			s.seq, s.events = 1, nil
			ready, _ := json.Marshal(map[string]any{"op": 0, "t": "READY", "s": 1, "d": map[string]any{
				"v": 10, "session_id": s.session, "resume_gateway_url": "ws://" + s.Addr() + "/ws",
				"user": map[string]any{"id": BotID, "username": "claw", "bot": true}}})
			s.events = append(s.events, ready)
			// READY comes first on a session, as on Discord: the
			// connection takes other frames only once it is written
			err := c.Write(ctx, websocket.MessageText, ready)
			if err == nil {
				s.conn = c
				s.notify()
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		case 6:
			var rs struct {
				Token     string `json:"token"`
				SessionID string `json:"session_id"`
				Seq       int64  `json:"seq"`
			}
			json.Unmarshal(f.D, &rs)
			if rs.Token != s.Token {
				c.Close(4004, "Authentication failed.")
				return
			}
			s.mu.Lock()
			if rs.SessionID != s.session {
				s.mu.Unlock()
				c.Write(ctx, websocket.MessageText, []byte(`{"op":9,"d":false}`))
				continue
			}
			s.resumes++
			var replay [][]byte
			if rs.Seq >= 0 && rs.Seq < int64(len(s.events)) {
				replay = append(replay, s.events[rs.Seq:]...)
			}
			s.seq++
			resumed, _ := json.Marshal(map[string]any{"op": 0, "t": "RESUMED", "s": s.seq, "d": nil})
			s.events = append(s.events, resumed)
			// the replay and RESUMED go out before any new event: the
			// state stays locked until the connection takes them
			var err error
			for _, e := range append(replay, resumed) {
				if err = c.Write(ctx, websocket.MessageText, e); err != nil {
					break
				}
			}
			if err == nil {
				s.conn = c
				s.notify()
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		default:
			c.Close(4001, "unknown opcode")
			return
		}
	}
}
