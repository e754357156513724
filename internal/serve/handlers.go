package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/idlegc"
)

// Paging bounds of GET /receipts and /memory/search.
const (
	defaultReceiptPage = 100
	maxReceiptPage     = 1000
	maxSearchHits      = 50
	maxQueryLen        = 1 << 10
)

var (
	writeJSON  = approvals.WriteJSON
	writeError = approvals.WriteError
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /status", s.handleStatus)
	mux.HandleFunc("GET /tools", s.handleTools)
	mux.HandleFunc("POST /chat", s.handleChat)
	mux.HandleFunc("GET /memory/search", s.handleSearch)
	mux.HandleFunc("GET /receipts", s.handleReceipts)
	mux.HandleFunc("POST /estop", func(w http.ResponseWriter, r *http.Request) { s.handleEstop(w, r, true) })
	mux.HandleFunc("DELETE /estop", func(w http.ResponseWriter, r *http.Request) { s.handleEstop(w, r, false) })
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("POST /reload", s.handleReload)
	mux.HandleFunc("POST /channels/{name}/messages", s.handleChannelMessage)
	mux.HandleFunc("POST /hook/{format}", s.handleHook)
	mux.HandleFunc("POST /gate/test", s.handleGateTest)
	mux.HandleFunc("POST /autonomous", s.handleAutoStart)
	mux.HandleFunc("GET /autonomous", s.handleAutoList)
	mux.HandleFunc("GET /autonomous/{id}", s.handleAutoStatus)
	mux.HandleFunc("POST /autonomous/{id}/message", s.handleAutoMessage)
	mux.HandleFunc("DELETE /autonomous/{id}", s.handleAutoStop)
	s.cfg.Queue.Routes(mux, s.cfg.MaxBodyBytes)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint")
	})
	return s.guard(mux)
}

// guard applies the token check, the body bound and the request timeout,
// and counts the request for the idle collector.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Garbage is collected once no request is in flight (between an
		// agent's tool calls), not in the middle of a decision.
		idlegc.Begin()
		defer idlegc.End()
		if !(r.Method == http.MethodGet && r.URL.Path == "/health") && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="claw"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong bearer token")
			return
		}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Status is the body of GET /status.
type Status struct {
	Info
	Estop    bool        `json:"estop"`
	Receipts ReceiptHead `json:"receipts"`
	Pending  int         `json:"pending_approvals"`
}

// ReceiptHead is the last receipt of the log.
type ReceiptHead struct {
	Log  string `json:"log"`
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash,omitempty"`
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	st := Status{Estop: s.estopEngaged(), Pending: len(s.cfg.Queue.Pending())}
	if s.cfg.Info != nil {
		st.Info = s.cfg.Info()
	}
	head, err := Head(s.cfg.Log.Dir())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "receipts", "failed to read the receipt head")
		return
	}
	head.Log = s.cfg.Log.LogID()
	st.Receipts = head
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	tools := []Tool{}
	if s.cfg.Tools != nil {
		tools = append(tools, s.cfg.Tools()...)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
}

// chatBody is the body of POST /chat.
type chatBody struct {
	Conversation    string `json:"conversation"`
	NewConversation bool   `json:"new_conversation"`
	Message         string `json:"message"`
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Chat == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the agent is not available")
		return
	}
	var b chatBody
	if !readJSON(w, r, &b) {
		return
	}
	if strings.TrimSpace(b.Message) == "" {
		writeError(w, http.StatusBadRequest, "bad_request", "message is empty")
		return
	}
	if len(b.Conversation) > 128 || !printable(b.Conversation) {
		writeError(w, http.StatusBadRequest, "bad_request", "bad conversation id")
		return
	}
	key := b.Conversation
	if key != "" && !b.NewConversation {
		full, ok := s.resolve(w, r, key)
		if !ok {
			return
		}
		s.runMu.Lock()
		run := s.runningIn(full)
		s.runMu.Unlock()
		if run != nil {
			writeError(w, http.StatusConflict, "conflict", "an autonomous run works in this conversation: POST /autonomous/"+run.status().Run+"/message")
			return
		}
		key = full
	}
	if b.NewConversation {
		key = "\x00new" + strconv.FormatInt(time.Now().UnixNano(), 36) // nothing to serialize against
	}
	unlock := s.lockConversation(key)
	defer unlock()

	stream := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	var (
		onDelta func(string)
		flusher http.Flusher
		bw      *bufio.Writer
	)
	if stream {
		f, ok := w.(http.Flusher)
		if !ok {
			writeError(w, http.StatusNotAcceptable, "not_acceptable", "streaming is not supported on this connection")
			return
		}
		flusher = f
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		bw = bufio.NewWriter(w)
		onDelta = func(text string) {
			writeEvent(bw, "delta", map[string]string{"text": text})
			bw.Flush()
			flusher.Flush()
		}
	}
	res, err := s.cfg.Chat(r.Context(), ChatRequest{Conversation: b.Conversation, NewConversation: b.NewConversation, Message: b.Message}, onDelta)
	s.count(b, res, err)
	if err != nil {
		code, ecode, msg := chatError(err)
		s.log.Warn("chat failed", "event", "chat_error", "code", ecode, "error", err.Error())
		if stream {
			writeEvent(bw, "error", map[string]any{"error": approvals.APIError{Code: ecode, Message: msg}})
			bw.Flush()
			flusher.Flush()
			return
		}
		writeError(w, code, ecode, msg)
		return
	}
	if res.ToolCalls == nil {
		res.ToolCalls = []ToolCall{}
	}
	if stream {
		writeEvent(bw, "done", res)
		bw.Flush()
		flusher.Flush()
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) count(b chatBody, res ChatResult, err error) {
	var pe *ProviderError
	if errors.As(err, &pe) {
		s.metrics.ProviderErrors.Add(1)
	}
	// A turn without a conversation id continues the latest one: only
	// the chat function knows whether it started one.
	if err == nil && (b.NewConversation || res.NewConversation) {
		s.metrics.Conversations.Add(1)
	}
	for _, c := range res.ToolCalls {
		s.metrics.ToolCall(c.Status)
		switch c.Status {
		case "denied", "rejected", "approval_timeout", "estop", "needs_approval":
			s.metrics.Denials.Add(1)
		}
	}
}

func chatError(err error) (int, string, string) {
	var pe *ProviderError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "timeout", "the turn did not finish within the request timeout"
	case errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable, "cancelled", "the turn was cancelled"
	case errors.As(err, &pe):
		return http.StatusBadGateway, "provider_error", "the model provider failed"
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest, "bad_request", err.Error()
	}
	return http.StatusInternalServerError, "internal", "the turn failed"
}

// ErrNotFound marks a Resolve error for a conversation that does not exist.
var ErrNotFound = errors.New("not found")

// ErrBadRequest marks a ChatFunc error caused by the request (answered
// 400 with its message).
var ErrBadRequest = errors.New("bad request")

// writeEvent writes one server-sent event.
func writeEvent(w *bufio.Writer, event string, v any) {
	data, _ := json.Marshal(v)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Search == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "memory search is not available")
		return
	}
	q := r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" || len(q) > maxQueryLen {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("q must be 1..%d bytes", maxQueryLen))
		return
	}
	limit, err := intParam(r, "limit", 10, 1, maxSearchHits)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	hits, err := s.cfg.Search(r.Context(), q, limit)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "search failed: "+sanitize(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"hits": hits})
}

// ReceiptLine is one signed receipt as GET /receipts returns it.
type ReceiptLine struct {
	seq  uint64
	Body json.RawMessage `json:"body"`
	KID  string          `json:"kid"`
	Sig  string          `json:"sig"`
}

func (s *Server) handleReceipts(w http.ResponseWriter, r *http.Request) {
	after, err := uintParam(r, "after")
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	limit, err := intParam(r, "limit", defaultReceiptPage, 1, maxReceiptPage)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	out, next, err := Page(r.Context(), s.cfg.Log.Dir(), after, limit)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "receipts", "failed to read the receipt log")
		return
	}
	body := map[string]any{"receipts": out}
	if next > 0 {
		body["next"] = next
	}
	writeJSON(w, http.StatusOK, body)
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// decodeChat decodes a strict JSON body.
func decodeChat(data []byte, v any) error { return approvals.DecodeStrict(data, v) }

// handleReload is SIGHUP over HTTP: it answers once the reload is done.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Reload == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "reload is not configured")
		return
	}
	digest, err := s.Reload(r.Context())
	if err != nil {
		writeError(w, http.StatusConflict, "reload_failed", "the previous policies stay in force: "+sanitize(err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"policy_digest": digest})
}

// maxChannelMessage bounds the content of a message for a channel.
const maxChannelMessage = 64 << 10

// handleChannelMessage sends a message to a session of a channel (the
// bridge's inbound_message).
func (s *Server) handleChannelMessage(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Deliver == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "no channel takes messages")
		return
	}
	var m ChannelMessage
	if !readJSON(w, r, &m) {
		return
	}
	name := r.PathValue("name")
	switch {
	case m.Session == "" || len(m.Session) > 128 || !printable(m.Session):
		writeError(w, http.StatusBadRequest, "bad_request", "session must be 1..128 printable characters")
		return
	case m.Content == "" || len(m.Content) > maxChannelMessage:
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("content must be 1..%d bytes", maxChannelMessage))
		return
	case len(m.RequestID) > 128 || !printable(m.RequestID):
		writeError(w, http.StatusBadRequest, "bad_request", "request_id must be at most 128 printable characters")
		return
	}
	if m.RequestID == "" {
		m.RequestID = "msg_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if err := s.cfg.Deliver(r.Context(), name, m); err != nil {
		if errors.Is(err, ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", sanitize(err.Error()))
			return
		}
		writeError(w, http.StatusBadRequest, "bad_request", sanitize(err.Error()))
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"request_id": m.RequestID})
}
