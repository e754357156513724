package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// AutoRequest starts an autonomous run (POST /autonomous).
type AutoRequest struct {
	Run             string // "run_" and 16 hex digits
	Conversation    string // the full id, or empty with NewConversation
	NewConversation bool
	Task            string
	// MaxTurns lowers the configured bound of turns; 0 keeps it.
	MaxTurns int
	// User carries the person's messages; each preempts the run.
	User <-chan string
	// Estopped is the daemon's emergency stop, to be polled by the run.
	Estopped func() bool
	// OnTurn is told about each turn when it ends.
	OnTurn func(AutoTurn)
}

// AutoTurn is one turn of a run, as the daemon shows it.
type AutoTurn struct {
	N            int
	Next         string // the state the turn left the run in
	Conversation string
	ToolCalls    []ToolCall
	Error        string // why the turn failed, redacted, or ""
}

// AutoResult is the end of a run.
type AutoResult struct {
	Conversation string
	Turns        int
	ToolCalls    int
	State        string
	Stop         string
}

// AutoFunc runs an autonomous run until it stops; it returns then.
type AutoFunc func(ctx context.Context, r AutoRequest) AutoResult

// AutoStatus is the body of GET /autonomous/{id}.
type AutoStatus struct {
	Run          string `json:"run"`
	Conversation string `json:"conversation"`
	Running      bool   `json:"running"`
	// State is the run's DMN state: engaged, working, foraging, resting.
	State     string `json:"state"`
	Turns     int    `json:"turns"`
	ToolCalls int    `json:"tool_calls"`
	// LastTurn is what the last turn's tool calls did.
	LastTurn []ToolCall `json:"last_turn"`
	// LastError is why the last turn failed, if it did.
	LastError string `json:"last_error,omitempty"`
	// Stop says why the run stopped: the agent's reasons (max_turns,
	// estop, …), or "stopped" (DELETE), "shutdown", "reload".
	Stop    string    `json:"stop,omitempty"`
	Started time.Time `json:"started"`
}

// Bounds of the runs the daemon keeps.
const (
	maxRunningRuns  = 16
	maxFinishedRuns = 64
	// maxQueuedMessages bounds the person's messages waiting for a run.
	maxQueuedMessages = 8
	maxAutoTurns      = 10000
)

// Why the daemon cancelled a run, in its status.
var (
	errRunStopped  = errors.New("stopped")
	errRunShutdown = errors.New("shutdown")
	errRunReload   = errors.New("reload")
)

type autoRun struct {
	user   chan string
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu sync.Mutex
	st AutoStatus
}

func (r *autoRun) status() AutoStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.LastTurn = slices.Clone(st.LastTurn)
	if st.LastTurn == nil {
		st.LastTurn = []ToolCall{}
	}
	return st
}

func (r *autoRun) turn(t AutoTurn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st.Turns = t.N
	r.st.State = t.Next
	r.st.ToolCalls += len(t.ToolCalls)
	r.st.LastTurn = t.ToolCalls
	r.st.LastError = sanitize(t.Error)
	if t.Conversation != "" {
		r.st.Conversation = t.Conversation
	}
}

// autoBody is the body of POST /autonomous.
type autoBody struct {
	Conversation    string `json:"conversation"`
	NewConversation bool   `json:"new_conversation"`
	Task            string `json:"task"`
	MaxTurns        int    `json:"max_turns"`
}

// check says what is wrong with b, or "".
func (b autoBody) check() string {
	switch {
	case strings.TrimSpace(b.Task) == "" || len(b.Task) > maxChannelMessage:
		return fmt.Sprintf("task must be 1..%d bytes, not blank", maxChannelMessage)
	case len(b.Conversation) > 128 || !printable(b.Conversation):
		return "bad conversation id"
	case b.Conversation == "" && !b.NewConversation:
		return "give a conversation, or new_conversation: true"
	case b.MaxTurns < 0 || b.MaxTurns > maxAutoTurns:
		return fmt.Sprintf("max_turns must be 0..%d", maxAutoTurns)
	}
	return ""
}

func newRunID() string {
	var b [8]byte
	rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}

// handleAutoStart starts a run: one per conversation, none while the
// emergency stop is engaged.
func (s *Server) handleAutoStart(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Autonomous == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "autonomous runs are not available")
		return
	}
	var b autoBody
	if !readJSON(w, r, &b) {
		return
	}
	if why := b.check(); why != "" {
		writeError(w, http.StatusBadRequest, "bad_request", why)
		return
	}
	conv := b.Conversation
	if conv != "" && !b.NewConversation {
		full, ok := s.resolve(w, r, conv)
		if !ok {
			return
		}
		conv = full
	}
	if b.NewConversation {
		conv = ""
	}
	if s.estopEngaged() {
		writeError(w, http.StatusConflict, "estop", "the emergency stop is engaged; clear it to start a run")
		return
	}
	run := &autoRun{user: make(chan string, maxQueuedMessages), done: make(chan struct{}),
		st: AutoStatus{Run: newRunID(), Conversation: conv, Running: true, State: "engaged", Started: time.Now().UTC()}}
	s.runMu.Lock()
	if s.runsClosed {
		s.runMu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "shutting_down", "the daemon is stopping")
		return
	}
	if conv != "" && s.runningIn(conv) != nil {
		s.runMu.Unlock()
		writeError(w, http.StatusConflict, "conflict", "an autonomous run is already working in this conversation; send it a message or stop it")
		return
	}
	if s.running() >= maxRunningRuns {
		s.runMu.Unlock()
		writeError(w, http.StatusTooManyRequests, "too_many_runs", fmt.Sprintf("%d runs are running; stop one first", maxRunningRuns))
		return
	}
	ctx, cancel := context.WithCancelCause(s.runCtx)
	run.cancel = cancel
	s.runs[run.st.Run] = run
	s.runOrder = append(s.runOrder, run.st.Run)
	s.forgetFinished()
	s.runWG.Add(1)
	s.runMu.Unlock()

	req := AutoRequest{Run: run.st.Run, Conversation: conv, NewConversation: b.NewConversation, Task: b.Task,
		MaxTurns: b.MaxTurns, User: run.user, Estopped: s.estopEngaged,
		OnTurn: func(t AutoTurn) {
			run.turn(t)
			for _, c := range t.ToolCalls {
				s.metrics.ToolCall(c.Status)
			}
		}}
	s.log.Info("autonomous run requested", "event", "autonomous_requested", "run", run.st.Run, "conversation", conv)
	go func() {
		defer s.runWG.Done()
		defer close(run.done)
		defer cancel(nil)
		res := s.cfg.Autonomous(ctx, req)
		run.mu.Lock()
		run.st.Running, run.st.Stop, run.st.Turns, run.st.ToolCalls = false, res.Stop, res.Turns, res.ToolCalls
		if res.State != "" {
			run.st.State = res.State
		}
		if res.Conversation != "" {
			run.st.Conversation = res.Conversation
		}
		if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
			// the daemon stopped it: say which way
			run.st.Stop = cause.Error()
		}
		run.mu.Unlock()
	}()
	writeJSON(w, http.StatusCreated, map[string]string{"run": run.st.Run, "conversation": conv})
}

// resolve maps a conversation id or prefix to its full id, answering 404
// or 500 itself when it cannot.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, id string) (string, bool) {
	if s.cfg.Resolve == nil {
		return id, true
	}
	full, err := s.cfg.Resolve(r.Context(), id)
	switch {
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "no such conversation")
		return "", false
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal", "failed to find the conversation")
		return "", false
	}
	return full, true
}

// runningIn is the run working in conversation conv, or nil. runMu held.
func (s *Server) runningIn(conv string) *autoRun {
	for _, run := range s.runs {
		if st := run.status(); st.Running && st.Conversation == conv {
			return run
		}
	}
	return nil
}

// running counts the running runs. runMu held.
func (s *Server) running() int {
	n := 0
	for _, run := range s.runs {
		if run.status().Running {
			n++
		}
	}
	return n
}

// forgetFinished keeps the last maxFinishedRuns finished runs. runMu held.
func (s *Server) forgetFinished() {
	finished := 0
	for i := len(s.runOrder) - 1; i >= 0; i-- {
		id := s.runOrder[i]
		if s.runs[id].status().Running {
			continue
		}
		if finished++; finished > maxFinishedRuns {
			delete(s.runs, id)
			s.runOrder = slices.Delete(s.runOrder, i, i+1)
		}
	}
}

func (s *Server) findRun(w http.ResponseWriter, r *http.Request) *autoRun {
	s.runMu.Lock()
	run := s.runs[r.PathValue("id")]
	s.runMu.Unlock()
	if run == nil {
		writeError(w, http.StatusNotFound, "not_found", "no such autonomous run")
	}
	return run
}

func (s *Server) handleAutoList(w http.ResponseWriter, r *http.Request) {
	s.runMu.Lock()
	out := []AutoStatus{}
	for _, id := range s.runOrder {
		out = append(out, s.runs[id].status())
	}
	s.runMu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

func (s *Server) handleAutoStatus(w http.ResponseWriter, r *http.Request) {
	if run := s.findRun(w, r); run != nil {
		writeJSON(w, http.StatusOK, run.status())
	}
}

// handleAutoMessage gives a run a message of the person: it preempts the
// turn in progress, and is the next turn.
func (s *Server) handleAutoMessage(w http.ResponseWriter, r *http.Request) {
	run := s.findRun(w, r)
	if run == nil {
		return
	}
	var b struct {
		Message string `json:"message"`
	}
	if !readJSON(w, r, &b) {
		return
	}
	if strings.TrimSpace(b.Message) == "" || len(b.Message) > maxChannelMessage {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("message must be 1..%d bytes, not blank", maxChannelMessage))
		return
	}
	if !run.status().Running {
		writeError(w, http.StatusConflict, "not_running", "the run has stopped; start another")
		return
	}
	select {
	case run.user <- b.Message:
		writeJSON(w, http.StatusAccepted, map[string]string{"run": r.PathValue("id")})
	default:
		writeError(w, http.StatusTooManyRequests, "busy", fmt.Sprintf("%d messages are already waiting for the run", maxQueuedMessages))
	}
}

// handleAutoStop stops a run and answers with its final status once it
// has stopped (its running action cancelled).
func (s *Server) handleAutoStop(w http.ResponseWriter, r *http.Request) {
	run := s.findRun(w, r)
	if run == nil {
		return
	}
	run.cancel(errRunStopped)
	select {
	case <-run.done:
		writeJSON(w, http.StatusOK, run.status())
	case <-r.Context().Done():
		writeError(w, http.StatusGatewayTimeout, "timeout", "the run is stopping but has not stopped yet")
	}
}

// stopRuns cancels every run with cause; closed also refuses new runs.
func (s *Server) stopRuns(cause error, closed bool) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.runsClosed = s.runsClosed || closed
	for _, run := range s.runs {
		run.cancel(cause)
	}
}

// waitRuns waits up to d for every run to end.
func (s *Server) waitRuns(d time.Duration) bool {
	done := make(chan struct{})
	go func() { s.runWG.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
