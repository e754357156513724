package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/estop"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/textesc"
)

// estopBy names the daemon in estop receipts and the ESTOP file.
const estopBy = "serve:http"

// EstopFile is the name of the emergency stop file in the claw home.
const EstopFile = estop.FileName

func (s *Server) estopPath() string { return filepath.Join(s.cfg.Home, EstopFile) }

// estopEngaged fails closed (see estop.Engaged).
func (s *Server) estopEngaged() bool { return estop.Engaged(s.estopPath()) }

// handleEstop engages (on) or clears the emergency stop through the
// broker's log: engaging makes the file first (stopping actions at once)
// and then the receipt; clearing writes the receipt first, and fails
// closed: no receipt, still stopped.
func (s *Server) handleEstop(w http.ResponseWriter, r *http.Request, on bool) {
	ctx := context.WithoutCancel(r.Context())
	if on {
		// An optional body gives the reason: {"reason":"…"}.
		var b struct {
			Reason string `json:"reason"`
		}
		if r.ContentLength != 0 {
			if !readJSON(w, r, &b) {
				return
			}
		}
		_, err := s.cfg.Log.EngageEstop(ctx, s.estopPath(), estopBy, estop.CleanReason(b.Reason, broker.Redact))
		switch {
		case errors.Is(err, broker.ErrNoReceipt):
			writeError(w, http.StatusInternalServerError, "receipt", "the stop is engaged, but its receipt could not be written")
			return
		case errors.Is(err, estop.ErrDetails):
			s.log.Warn("writing the ESTOP details failed; the stop is engaged", "error", err.Error())
		case err != nil:
			writeError(w, http.StatusInternalServerError, "estop", "failed to create the ESTOP file")
			return
		}
		s.log.Warn("emergency stop engaged", logx.Event(logx.EventEstopTriggered), "active", true)
		writeJSON(w, http.StatusOK, map[string]bool{"estop": true})
		return
	}
	engaged, err := s.cfg.Log.ClearEstop(ctx, s.estopPath(), estopBy)
	switch {
	case errors.Is(err, broker.ErrNoReceipt):
		writeError(w, http.StatusInternalServerError, "receipt", "the receipt could not be written; the stop stays engaged")
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "estop", "failed to remove the ESTOP file")
		return
	}
	if engaged {
		s.log.Warn("emergency stop cleared", logx.Event(logx.EventEstopCleared), "active", false)
	}
	writeJSON(w, http.StatusOK, map[string]bool{"estop": false})
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	s.verifyChain(r.Context())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.metrics.WriteTo(w)
}

func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo {
		return 0, fmt.Errorf("%s must be a number ≥ %d", name, lo)
	}
	return min(n, hi), nil
}

func uintParam(r *http.Request, name string) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be a non-negative number", name)
	}
	return n, nil
}

// readJSON decodes a bounded, strict JSON body, answering 413 or 400
// itself when it cannot.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	var buf []byte
	buf, err := readAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body larger than %d bytes", mbe.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, "bad_request", "failed to read the body")
		return false
	}
	if err := decodeChat(buf, v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return false
	}
	return true
}

func printable(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func sanitize(s string) string {
	s = textesc.Prefix(s, 256)
	out := []rune{}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		out = append(out, c)
	}
	return string(out)
}
