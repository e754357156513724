package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Backoff between gateway connections: doubling from minBackoff up to
// maxBackoff (each wait between half of it and all of it, so the first is
// 1-2 s, which an invalid session asks for), reset once a session is
// established.
const (
	minBackoff  = 2 * time.Second
	maxBackoff  = 60 * time.Second
	helloWait   = 30 * time.Second
	minInterval = 10 * time.Millisecond
)

// CloseError is a gateway close after which claw does not reconnect
// (4004, 4010-4014): the token or the bot's settings must be fixed first.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("discord gateway closed the connection with %d: %s", e.Code, closeMeaning(e.Code))
}

// gateway keeps one gateway session alive: it identifies, beats, resumes
// after a drop, and hands every MESSAGE_CREATE to onMessage.
type gateway struct {
	token     string
	hc        *http.Client
	clock     Clock
	log       *slog.Logger
	discover  func(ctx context.Context) (string, error)
	onReady   func(selfID string)
	onMessage func(Message)

	url       string // from discover, cached
	sessionID string
	resumeURL string
	seq       atomic.Int64
}

// errReconnect asks run to connect again (and resume when it can).
var errReconnect = errors.New("discord asked to reconnect")

// run connects, and reconnects with backoff, until ctx ends or the
// gateway closes with a code that forbids it.
func (g *gateway) run(ctx context.Context) error {
	backoff := minBackoff
	for {
		established, err := g.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var ce *CloseError
		if errors.As(err, &ce) {
			return err
		}
		if established {
			backoff = minBackoff
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		g.log.Warn("discord gateway disconnected; reconnecting", "event", "discord_reconnect",
			"error", errString(err), "resume", g.sessionID != "", "wait_ms", wait.Milliseconds())
		select {
		case <-ctx.Done():
			return nil
		case <-g.clock.After(wait):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// session runs one connection. established reports whether it reached
// READY or RESUMED.
func (g *gateway) session(ctx context.Context) (established bool, err error) {
	resuming := g.sessionID != "" && g.resumeURL != ""
	base := g.resumeURL
	if !resuming {
		if g.url == "" {
			if g.url, err = g.discover(ctx); err != nil {
				return false, err
			}
		}
		base = g.url
	}
	u, err := gatewayQuery(base)
	if err != nil {
		return false, err
	}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: g.hc})
	if err != nil {
		return false, fmt.Errorf("failed to connect to the gateway: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(maxFrame)

	hctx, cancel := context.WithTimeout(ctx, helloWait)
	f, err := readFrame(hctx, c)
	cancel()
	if err != nil {
		return false, g.closed(err)
	}
	var h hello
	if f.Op != opHello || json.Unmarshal(f.D, &h) != nil || h.HeartbeatInterval <= 0 {
		return false, fmt.Errorf("%w: expected Hello, got opcode %d", errFrame, f.Op)
	}
	interval := max(time.Duration(h.HeartbeatInterval)*time.Millisecond, minInterval)

	send := func(ctx context.Context, op int, d any) error {
		b, err := json.Marshal(outFrame{Op: op, D: d})
		if err != nil {
			return err
		}
		return c.Write(ctx, websocket.MessageText, b)
	}
	if resuming {
		err = send(ctx, opResume, resume{Token: g.token, SessionID: g.sessionID, Seq: g.seq.Load()})
	} else {
		err = send(ctx, opIdentify, identify{Token: g.token, Intents: Intents,
			Properties: map[string]string{"os": "linux", "browser": "claw", "device": "claw"}})
	}
	if err != nil {
		return false, g.closed(err)
	}

	hb := &heartbeat{interval: interval, send: func(ctx context.Context) error { return send(ctx, opHeartbeat, g.lastSeq()) }}
	hb.acked.Store(true)
	bctx, stopBeats := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); hb.run(bctx, c) }()
	defer func() { stopBeats(); wg.Wait() }()

	for {
		f, err := readFrame(ctx, c)
		if errors.Is(err, errFrame) {
			// one frame claw cannot read is dropped, not the session
			g.log.Warn("discord frame dropped", "event", "discord_bad_frame", "error", err.Error())
			continue
		}
		if err != nil {
			if hb.zombie.Load() {
				return established, errors.New("no heartbeat ACK: the connection is a zombie")
			}
			return established, g.closed(err)
		}
		if f.S != nil {
			g.seq.Store(*f.S)
		}
		switch f.Op {
		case opDispatch:
			if g.dispatch(f) {
				established = true
			}
		case opHeartbeat:
			if err := hb.beat(ctx); err != nil {
				return established, g.closed(err)
			}
		case opHeartbeatACK:
			hb.acked.Store(true)
		case opReconnect:
			c.Close(4000, "reconnect")
			return established, errReconnect
		case opInvalidSession:
			var resumable bool
			_ = json.Unmarshal(f.D, &resumable)
			if !resumable {
				g.sessionID, g.resumeURL = "", ""
				g.seq.Store(0)
			}
			c.Close(4000, "invalid session")
			return established, fmt.Errorf("invalid session (resumable %t)", resumable)
		}
	}
}

// dispatch handles an event; it reports whether the session is now
// established.
func (g *gateway) dispatch(f frame) bool {
	switch f.T {
	case "READY":
		var r ready
		if err := json.Unmarshal(f.D, &r); err != nil || r.SessionID == "" || !snowflake(r.User.ID) {
			g.log.Warn("discord READY without a session or user id", "event", "discord_bad_frame")
			return false
		}
		g.sessionID, g.resumeURL = r.SessionID, r.ResumeGatewayURL
		g.log.Info("discord session ready", "event", "discord_ready", "user_id", r.User.ID)
		g.onReady(r.User.ID)
		return true
	case "RESUMED":
		g.log.Info("discord session resumed", "event", "discord_resumed")
		return true
	case "MESSAGE_CREATE":
		m, err := decodeMessage(f.D)
		if err != nil {
			g.log.Warn("discord message dropped", "event", "discord_bad_frame", "error", err.Error())
			return false
		}
		g.onMessage(m)
	}
	return false
}

// lastSeq is the heartbeat's data: the last sequence seen, or null.
func (g *gateway) lastSeq() any {
	if s := g.seq.Load(); s > 0 {
		return s
	}
	return nil
}

// closed turns a read or write error into what run should do: a
// CloseError for the codes that forbid reconnecting, a fresh session for
// 4007 (invalid seq) and 4009 (session timed out), a resume otherwise.
func (g *gateway) closed(err error) error {
	code := int(websocket.CloseStatus(err))
	switch {
	case fatalClose(code):
		return &CloseError{Code: code}
	case code == 4007 || code == 4009:
		g.sessionID, g.resumeURL = "", ""
		g.seq.Store(0)
	}
	return err
}

// gatewayQuery is the gateway's URL with the version and encoding claw
// speaks (v10, JSON, no compression).
func gatewayQuery(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "wss" && u.Scheme != "ws") || u.Host == "" {
		return "", fmt.Errorf("gateway url %q is not a ws(s):// URL", clipID(base))
	}
	if u.Path == "" {
		u.Path = "/"
	}
	u.RawQuery = "v=10&encoding=json"
	return u.String(), nil
}

func readFrame(ctx context.Context, c *websocket.Conn) (frame, error) {
	typ, b, err := c.Read(ctx)
	if err != nil {
		return frame{}, err
	}
	if typ != websocket.MessageText {
		return frame{}, fmt.Errorf("%w: binary frame (claw asks for encoding=json without compression)", errFrame)
	}
	return decodeFrame(b)
}

// heartbeat beats every interval, the first after a random part of it.
// A beat whose ACK has not come by the next one marks the connection a
// zombie: it is closed with a code that keeps the session resumable.
type heartbeat struct {
	interval time.Duration
	send     func(ctx context.Context) error
	acked    atomic.Bool
	zombie   atomic.Bool
}

func (h *heartbeat) beat(ctx context.Context) error {
	h.acked.Store(false)
	return h.send(ctx)
}

func (h *heartbeat) run(ctx context.Context, c *websocket.Conn) {
	t := time.NewTimer(time.Duration(rand.Float64() * float64(h.interval)))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !h.acked.Load() {
			h.zombie.Store(true)
			c.Close(4000, "heartbeat not acknowledged")
			return
		}
		if err := h.beat(ctx); err != nil {
			return
		}
		t.Reset(h.interval)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
