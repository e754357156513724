package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Wait bounds of GET /approvals/{id}/wait.
const (
	DefaultWait = 25 * time.Second
	MaxWait     = 60 * time.Second
)

// DecideBody is the body of POST /approvals/{id}.
type DecideBody struct {
	Decision     string `json:"decision"`
	Approver     string `json:"approver"`
	ActionSHA256 string `json:"action_sha256"`
}

// RequestBody is the body of POST /approvals/requests.
type RequestBody struct {
	Tool    string `json:"tool"`
	Summary string `json:"summary"`
	// Args is the action's arguments as the broker shows them (see
	// broker.Request): JSON, secrets redacted, at most broker.MaxArgs
	// bytes. Not escaped: show it escaped. Absent when the requester sent
	// none.
	Args         json.RawMessage `json:"args,omitempty"`
	Risk         string          `json:"risk"`
	Reasons      []Reason        `json:"reasons"`
	ActionSHA256 string          `json:"action_sha256"`
	Requester    string          `json:"requester"`
	// Proposal is the grant the approver may accept instead of a one-time
	// approval (decision "approve_conversation" or "approve_grant");
	// absent when none can cover the action.
	Proposal *Proposal `json:"proposal,omitempty"`
}

// Proposal is a grant offered with a request: its scope in the grant
// syntax and in words. Show both, escaped, before it is accepted.
type Proposal struct {
	Scope       string `json:"scope"`
	Description string `json:"description"`
}

// WaitResult is the body GET /approvals/{id}/wait answers with.
type WaitResult struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	By     string `json:"by,omitempty"`
	// Remember is what an approval covers: "once", "conversation" or
	// "grant" (see broker.Answer).
	Remember string `json:"remember,omitempty"`
}

// Routes mounts the approval endpoints on mux. Bodies larger than maxBody
// are refused with 413. Authentication is the caller's: mount mux behind
// it.
func (q *Queue) Routes(mux *http.ServeMux, maxBody int64) {
	if maxBody <= 0 {
		maxBody = 1 << 20
	}
	mux.HandleFunc("GET /approvals", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]any{"pending": q.Pending()})
	})
	mux.HandleFunc("POST /approvals/requests", func(w http.ResponseWriter, r *http.Request) {
		var b RequestBody
		if !decodeBody(w, r, maxBody, &b) {
			return
		}
		id, exp, err := q.Submit(Pending{RequestBody: b})
		if err != nil {
			writeQueueError(w, err)
			return
		}
		WriteJSON(w, http.StatusCreated, map[string]any{"id": id, "expires": exp})
	})
	mux.HandleFunc("POST /approvals/{id}", func(w http.ResponseWriter, r *http.Request) {
		var b DecideBody
		if !decodeBody(w, r, maxBody, &b) {
			return
		}
		id := r.PathValue("id")
		if err := q.Decide(id, b.Decision, b.Approver, b.ActionSHA256); err != nil {
			writeQueueError(w, err)
			return
		}
		st, _, _ := q.status(id)
		WriteJSON(w, http.StatusOK, map[string]string{"id": id, "result": st})
	})
	mux.HandleFunc("GET /approvals/{id}/wait", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		d, err := parseWait(r.URL.Query().Get("timeout"))
		if err != nil {
			WriteError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		ans, err := q.Wait(ctx, id)
		switch {
		case errors.Is(err, ErrUnknown):
			writeQueueError(w, err)
		case err != nil && r.Context().Err() != nil:
			return // the client went away
		case err != nil:
			WriteJSON(w, http.StatusOK, WaitResult{ID: id, Status: StatusPending})
		case ans.Result == StatusTimeout:
			WriteJSON(w, http.StatusOK, WaitResult{ID: id, Status: StatusTimeout})
		default:
			WriteJSON(w, http.StatusOK, WaitResult{ID: id, Status: ans.Result, By: ans.By, Remember: ans.Remember})
		}
	})
}

func parseWait(s string) (time.Duration, error) {
	if s == "" {
		return DefaultWait, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("timeout %q is not a duration like 25s", s)
	}
	return min(d, MaxWait), nil
}

func writeQueueError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnknown):
		WriteError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, ErrExpired):
		WriteError(w, http.StatusConflict, "expired", err.Error())
	case errors.Is(err, ErrStopped):
		WriteError(w, http.StatusConflict, "estop", err.Error())
	case errors.Is(err, ErrAlreadyDecided):
		WriteError(w, http.StatusConflict, "already_decided", err.Error())
	case errors.Is(err, ErrNotAllowed):
		WriteError(w, http.StatusForbidden, "not_allowed", err.Error())
	case errors.Is(err, ErrDigestMismatch):
		WriteError(w, http.StatusConflict, "digest_mismatch", err.Error())
	case errors.Is(err, ErrInvalid):
		WriteError(w, http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, ErrFull):
		WriteError(w, http.StatusServiceUnavailable, "queue_full", err.Error())
	default:
		WriteError(w, http.StatusInternalServerError, "internal", "internal error")
	}
}

// decodeBody reads a bounded JSON body into v, answering 413 or 400
// itself when it cannot.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			WriteError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body larger than %d bytes", limit))
			return false
		}
		WriteError(w, http.StatusBadRequest, "bad_request", "failed to read the body")
		return false
	}
	if err := DecodeStrict(data, v); err != nil {
		WriteError(w, http.StatusBadRequest, "bad_request", err.Error())
		return false
	}
	return true
}

// DecodeStrict decodes one JSON value into v, rejecting unknown fields
// and trailing data.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed JSON body: %w", err)
	}
	if dec.More() {
		return errors.New("malformed JSON body: trailing data after the object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("malformed JSON body: trailing data after the object")
	}
	return nil
}

// WriteJSON writes v as the JSON response with status code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// APIError is the error shape of every claw HTTP API.
type APIError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WriteError writes {"error":{"code":…,"message":…}} with status code.
func WriteError(w http.ResponseWriter, code int, errCode, msg string) {
	WriteJSON(w, code, map[string]APIError{"error": {Code: errCode, Message: msg}})
}
