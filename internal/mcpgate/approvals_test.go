package mcpgate

import (
	"crypto/subtle"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
)

const testToken = "0123456789abcdef0123456789abcdef"

// daemon serves a real approvals queue on 127.0.0.1 behind a bearer token,
// as claw serve does.
func daemon(t *testing.T) (*approvals.Queue, string) {
	t.Helper()
	q := approvals.NewQueue(time.Minute)
	mux := http.NewServeMux()
	q.Routes(mux, 1<<16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(testToken)) != 1 {
			approvals.WriteError(w, http.StatusUnauthorized, "unauthorized", "bad token")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return q, srv.URL
}

// decideNext waits for one pending request and decides it.
func decideNext(t *testing.T, q *approvals.Queue, decision string) <-chan approvals.Pending {
	done := make(chan approvals.Pending, 1)
	go func() {
		for range 500 {
			if ps := q.Pending(); len(ps) > 0 {
				p := ps[0]
				if err := q.Decide(p.ID, decision, "alice", p.ActionSHA256); err != nil {
					t.Errorf("decide: %v", err)
				}
				done <- p
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Error("no approval request arrived")
		close(done)
	}()
	return done
}

// TestProxyApprovalsFromDaemon: at supervised autonomy a proxied call
// asks; the approvals client puts it in the daemon's queue, with the
// call's arguments (a key planted in them redacted), and a human's
// decision there lets it run or not.
func TestProxyApprovalsFromDaemon(t *testing.T) {
	r := newRig(t, "supervised")
	q, url := daemon(t)
	cl, err := approvals.NewClient(url, testToken)
	if err != nil {
		t.Fatal(err)
	}
	cl.Requester = "mcp"
	r.cfg.Approver = cl
	pins, _ := OpenPins(filepath.Join(r.root, "mcp-pins.json"))
	cs, _ := proxied(t, r, pins, "echoes")

	seen := decideNext(t, q, "approve")
	planted := "sk-ant-api03-" + strings.Repeat("PLANTED0123", 9)
	res := call(t, cs, "up__echo", map[string]any{"msg": "approved " + planted})
	if res.IsError || !strings.HasPrefix(text(res), "echo: approved ") {
		t.Fatalf("approved call: %v %q", res.IsError, text(res))
	}
	p := <-seen
	if p.Tool != "tool" || p.Requester != "mcp" || !strings.Contains(p.Summary, "echo") {
		t.Errorf("pending request %+v", p)
	}
	if args := string(p.Args); !strings.Contains(args, `{"msg":"approved [REDACTED]"}`) || strings.Contains(args, planted) || strings.Contains(p.Summary, planted) {
		t.Errorf("pending args %s, summary %s", args, p.Summary)
	}

	decideNext(t, q, "reject")
	res = call(t, cs, "up__echo", map[string]any{"msg": "no"})
	if !res.IsError || !strings.Contains(text(res), "rejected by alice") {
		t.Fatalf("rejected call: %v %q", res.IsError, text(res))
	}

	types := r.receiptTypes(t)
	approvalsSeen := 0
	for _, ts := range types {
		if strings.Join(ts, ",") == "decision,approval,outcome" {
			approvalsSeen++
		}
	}
	if approvalsSeen != 2 {
		t.Fatalf("receipts %v", types)
	}
}

// TestServeApprovalsUnreachable: a daemon that is not there means the
// action does not run.
func TestServeApprovalsUnreachable(t *testing.T) {
	r := newRig(t, "supervised")
	cl, err := approvals.NewClient("unix:"+filepath.Join(t.TempDir(), "none.sock"), testToken)
	if err != nil {
		t.Fatal(err)
	}
	r.cfg.Approver = cl
	cs := connect(t, NewServer(broker.New(r.cfg), Options{}))
	res := call(t, cs, "shell", map[string]any{"command": "rm -rf build"})
	if !res.IsError {
		t.Fatalf("ran without approval: %s", text(res))
	}
}
