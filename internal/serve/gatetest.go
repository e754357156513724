package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// GateTestRequest is one `claw gate test` of a single action handed to the
// daemon (POST /gate/test): a dry run, decided with the policies the
// daemon compiled and answered as the command prints it. Nothing runs and
// no receipt is written.
type GateTestRequest struct {
	// Config identifies the claw home, config and user policies the
	// caller runs with; the daemon answers only when it runs with the same.
	Config    string   `json:"config"`
	Args      []string `json:"args,omitempty"`   // TOOL ARG…
	Action    string   `json:"action,omitempty"` // --action JSON
	Autonomy  string   `json:"autonomy,omitempty"`
	Workspace string   `json:"workspace,omitempty"` // absolute, or "" for the config's
	Cwd       string   `json:"cwd,omitempty"`       // absolute, or "" for the workspace
	Explain   bool     `json:"explain,omitempty"`
	Output    string   `json:"output"`
}

// GateTestFunc decides one dry run in the daemon. An error wrapping
// ErrOtherConfig is answered 409; any error makes the caller decide in
// process.
type GateTestFunc func(ctx context.Context, r GateTestRequest) (HookAnswer, error)

// maxGateTestAnswer bounds the answer read by AskGateTest (--explain -o
// json repeats the whole input).
const maxGateTestAnswer = 1 << 20

func (s *Server) handleGateTest(w http.ResponseWriter, r *http.Request) {
	if s.cfg.GateTest == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "this daemon does not answer gate tests")
		return
	}
	var req GateTestRequest
	if !readJSON(w, r, &req) {
		return
	}
	var a HookAnswer
	var err error
	onWarmStack(func() { a, err = s.cfg.GateTest(r.Context(), req) })
	switch {
	case errors.Is(err, ErrOtherConfig):
		writeError(w, http.StatusConflict, "other_config", err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "gate_test", "the daemon could not answer the gate test")
	default:
		writeJSON(w, http.StatusOK, a)
	}
}

// AskGateTest sends one dry run to the daemon on the unix socket, checking
// the peer's uid as AskHook does. Any error means the daemon did not
// answer: the caller decides in process. The caller checks the answer.
func AskGateTest(ctx context.Context, socket, token string, wantUID int, r GateTestRequest) (HookAnswer, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return HookAnswer{}, err
	}
	return ask(ctx, socket, token, wantUID, "/gate/test", nil, b, maxGateTestAnswer)
}
