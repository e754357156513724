package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
)

// TestSOPApprover: an SOP run asks the daemon it was pointed at, and
// fails when that one does not answer; with no daemon named and none on
// the configured socket, it asks the terminal.
func TestSOPApprover(t *testing.T) {
	ctx := context.Background()
	cfg := &config.Config{}
	cfg.Serve.Socket = filepath.Join(t.TempDir(), "claw.sock")
	env := func() (*Env, error) { return &Env{Config: cfg}, nil }
	client := func(target string) (*approvals.Client, error) { return approvals.NewClient(target, "token") }
	tty := &approvals.Client{}
	var toldTo string
	ask := func(target string) (broker.Approver, error) {
		toldTo = ""
		return SOPApprover(ctx, env, target, client, func() broker.Approver { return tty }, func(t string) { toldTo = t })
	}

	if a, err := ask(""); err != nil || a != broker.Approver(tty) || toldTo != "" {
		t.Errorf("no daemon: approver %v, err %v, told %q; want the terminal, untold", a, err, toldTo)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"pending":[]}`))
	}))
	defer srv.Close()
	if a, err := ask(srv.URL); err != nil || a == broker.Approver(tty) || a == nil || toldTo != srv.URL {
		t.Errorf("daemon at %s: approver %v, err %v, told %q; want the daemon, told", srv.URL, a, err, toldTo)
	}

	gone := srv.URL
	srv.Close()
	a, err := ask(gone)
	if ExitCode(err) != ExitError || a != nil || toldTo != "" || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("daemon gone: approver %v, err %v, told %q; want exit 1 and no approver", a, err, toldTo)
	}
}
