package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/receipts"
)

// estopBy names the daemon in estop receipts and the ESTOP file.
const estopBy = "serve:http"

// cleanReason makes a reason one bounded line without control characters
// or secrets.
func cleanReason(s string) string {
	s = strings.Join(strings.Fields(sanitize(s)), " ")
	return broker.Redact(s)
}

// EstopFile is the name of the emergency stop file in the claw home.
const EstopFile = "ESTOP"

func (s *Server) estopPath() string { return filepath.Join(s.cfg.Home, EstopFile) }

// estopEngaged fails closed: anything at the path, or a stat that fails
// for another reason than its absence, is an engaged stop.
func (s *Server) estopEngaged() bool {
	_, err := os.Stat(s.estopPath())
	return !errors.Is(err, os.ErrNotExist)
}

// handleEstop engages (on) or clears the emergency stop. Engaging makes
// the file first (stopping actions at once) and then the receipt;
// clearing writes the receipt first, and fails closed: no receipt, still
// stopped.
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
		reason := cleanReason(b.Reason)
		// Same file format as 'claw estop'; details already there are kept.
		content := "engaged " + time.Now().UTC().Format(time.RFC3339) + "\nby " + estopBy + "\nreason " + reason + "\n"
		f, err := os.OpenFile(s.estopPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case err == nil:
			_, werr := f.WriteString(content)
			if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
				s.log.Warn("writing the ESTOP details failed; the stop is engaged", "error", err.Error())
			}
		case errors.Is(err, os.ErrExist):
		default:
			writeError(w, http.StatusInternalServerError, "estop", "failed to create the ESTOP file")
			return
		}
		if _, err := s.cfg.Log.Estop(ctx, receipts.Estop{Active: true, By: estopBy, Reason: reason}); err != nil {
			writeError(w, http.StatusInternalServerError, "receipt", "the stop is engaged, but its receipt could not be written")
			return
		}
		s.log.Warn("emergency stop engaged", logx.Event(logx.EventEstopTriggered), "active", true)
		writeJSON(w, http.StatusOK, map[string]bool{"estop": true})
		return
	}
	if !s.estopEngaged() {
		writeJSON(w, http.StatusOK, map[string]bool{"estop": false})
		return
	}
	if _, err := s.cfg.Log.Estop(ctx, receipts.Estop{Active: false, By: estopBy}); err != nil {
		writeError(w, http.StatusInternalServerError, "receipt", "the receipt could not be written; the stop stays engaged")
		return
	}
	if err := os.Remove(s.estopPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		writeError(w, http.StatusInternalServerError, "estop", "failed to remove the ESTOP file")
		return
	}
	s.log.Warn("emergency stop cleared", logx.Event(logx.EventEstopCleared), "active", false)
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
	if len(s) > 256 {
		s = s[:256]
	}
	out := []rune{}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		out = append(out, c)
	}
	return string(out)
}
