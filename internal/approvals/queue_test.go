package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func pending(tool string) Pending {
	return Pending{RequestBody: RequestBody{Tool: tool, Summary: "rm -rf ./build", Risk: "medium",
		Reasons: []Reason{{ID: "cmd.rm.workspace", Msg: "rm inside the workspace"}}, ActionSHA256: digestA, Requester: "test"}}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		decision string
		approver string
		digest   string
		before   func(q *Queue, id string) // something that happens first
		wantErr  error
		want     string // result Wait sees
	}{
		{name: "approve", decision: "approve", approver: "alice", digest: digestA, want: StatusApproved},
		{name: "reject", decision: "reject", approver: "bob", digest: digestA, want: StatusRejected},
		{name: "wrong digest", decision: "approve", approver: "alice", digest: digestB, wantErr: ErrDigestMismatch},
		{name: "empty digest", decision: "approve", approver: "alice", digest: "", wantErr: ErrDigestMismatch},
		{name: "bad decision", decision: "yes", approver: "alice", digest: digestA, wantErr: ErrInvalid},
		{name: "no approver", decision: "approve", approver: "", digest: digestA, wantErr: ErrInvalid},
		{name: "approver with newline", decision: "approve", approver: "a\nb", digest: digestA, wantErr: ErrInvalid},
		{name: "replayed", decision: "approve", approver: "alice", digest: digestA,
			before: func(q *Queue, id string) { mustDecide(t, q, id, "reject") }, wantErr: ErrAlreadyDecided},
		{name: "late", decision: "approve", approver: "alice", digest: digestA,
			before: func(q *Queue, id string) { q.expire(id) }, wantErr: ErrExpired},
		{name: "withdrawn", decision: "approve", approver: "alice", digest: digestA,
			before: func(q *Queue, id string) { q.Withdraw(id) }, wantErr: ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewQueue(time.Minute)
			id, exp, err := q.Submit(pending("shell"))
			if err != nil {
				t.Fatal(err)
			}
			if !exp.After(time.Now()) {
				t.Fatalf("expires %v is not in the future", exp)
			}
			if tt.before != nil {
				tt.before(q, id)
			}
			err = q.Decide(id, tt.decision, tt.approver, tt.digest)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Decide = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if tt.before == nil && len(q.Pending()) != 1 {
					t.Fatalf("a refused decision must leave the request pending")
				}
				return
			}
			ans, err := q.Wait(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Result != tt.want || ans.By != tt.approver {
				t.Fatalf("answer = %+v, want %s by %s", ans, tt.want, tt.approver)
			}
			if len(q.Pending()) != 0 {
				t.Fatalf("decided request still pending")
			}
		})
	}
}

func mustDecide(t *testing.T, q *Queue, id, d string) {
	t.Helper()
	if err := q.Decide(id, d, "carol", digestA); err != nil {
		t.Fatal(err)
	}
}

func TestUnknown(t *testing.T) {
	q := NewQueue(time.Minute)
	if err := q.Decide("apr_nope", "approve", "alice", digestA); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Decide = %v", err)
	}
	if _, err := q.Wait(context.Background(), "apr_nope"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("Wait = %v", err)
	}
}

func TestSubmitValidates(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Pending)
	}{
		{name: "no tool", mutate: func(p *Pending) { p.Tool = "" }},
		{name: "control in tool", mutate: func(p *Pending) { p.Tool = "sh\x1b[2J" }},
		{name: "bad digest", mutate: func(p *Pending) { p.ActionSHA256 = "sha256:xyz" }},
		{name: "upper-case digest", mutate: func(p *Pending) { p.ActionSHA256 = strings.ToUpper(digestA) }},
		{name: "huge summary", mutate: func(p *Pending) { p.Summary = strings.Repeat("x", maxSummaryLen+1) }},
		{name: "huge args", mutate: func(p *Pending) { p.Args = json.RawMessage(`"` + strings.Repeat("x", broker.MaxArgs-1) + `"`) }},
		{name: "args not JSON", mutate: func(p *Pending) { p.Args = json.RawMessage(`{"command":`) }},
		{name: "too many reasons", mutate: func(p *Pending) { p.Reasons = make([]Reason, maxReasons+1) }},
		{name: "bad requester", mutate: func(p *Pending) { p.Requester = "a b" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pending("shell")
			tt.mutate(&p)
			if _, _, err := NewQueue(time.Minute).Submit(p); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Submit = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	q := NewQueue(50 * time.Millisecond)
	id, _, err := q.Submit(pending("shell"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ans, err := q.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait = %v (the request should have expired on its own)", err)
	}
	if ans.Result != StatusTimeout {
		t.Fatalf("answer = %+v, want timeout", ans)
	}
	if err := q.Decide(id, "approve", "alice", digestA); !errors.Is(err, ErrExpired) {
		t.Fatalf("late Decide = %v, want ErrExpired", err)
	}
	if n := len(q.Pending()); n != 0 {
		t.Fatalf("%d pending after expiry", n)
	}
}

// TestDecideAtDeadline: a decision that arrives after the deadline but
// before the timer fired is still refused.
func TestDecideAtDeadline(t *testing.T) {
	q := NewQueue(time.Hour)
	now := time.Now()
	q.now = func() time.Time { return now }
	id, _, err := q.Submit(pending("shell"))
	if err != nil {
		t.Fatal(err)
	}
	q.now = func() time.Time { return now.Add(time.Hour) }
	if err := q.Decide(id, "approve", "alice", digestA); !errors.Is(err, ErrExpired) {
		t.Fatalf("Decide = %v, want ErrExpired", err)
	}
	if n := len(q.Pending()); n != 0 {
		t.Fatalf("an expired request is listed as pending")
	}
}

func TestFull(t *testing.T) {
	q := NewQueue(time.Minute)
	for i := 0; i < MaxPending; i++ {
		if _, _, err := q.Submit(pending("shell")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := q.Submit(pending("shell")); !errors.Is(err, ErrFull) {
		t.Fatalf("Submit = %v, want ErrFull", err)
	}
}

func TestApproveBrokerRequest(t *testing.T) {
	q := NewQueue(time.Minute)
	r := broker.Request{ActionID: "a1", Tool: "shell", Summary: "rm -rf ./build", Args: json.RawMessage(`{"command":"rm -rf ./build"}`), ActionSHA256: digestA,
		Decision: gate.Decision{Decision: gate.Ask, Risk: "medium", Reasons: []gate.Reason{{ID: "cmd.rm.workspace", Msg: "m"}}}}
	done := make(chan broker.Answer, 1)
	go func() {
		ans, err := q.Approve(context.Background(), r)
		if err != nil {
			t.Error(err)
		}
		done <- ans
	}()
	p := waitPending(t, q)
	if p.Tool != "shell" || p.Risk != "medium" || len(p.Reasons) != 1 || p.Reasons[0].ID != "cmd.rm.workspace" || p.Requester != "serve" ||
		string(p.Args) != `{"command":"rm -rf ./build"}` {
		t.Fatalf("pending = %+v", p)
	}
	if err := q.Decide(p.ID, "approve", "alice", digestA); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; ans.Result != "approved" || ans.By != "alice" {
		t.Fatalf("answer = %+v", ans)
	}
}

func TestApproveCancelled(t *testing.T) {
	q := NewQueue(time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		ans, err := q.Approve(ctx, broker.Request{Tool: "shell", ActionSHA256: digestA})
		if ans.Result != StatusTimeout {
			t.Errorf("answer = %+v, want timeout", ans)
		}
		done <- err
	}()
	p := waitPending(t, q)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Approve = %v", err)
	}
	if err := q.Decide(p.ID, "approve", "alice", digestA); !errors.Is(err, ErrExpired) {
		t.Fatalf("decision after the requester left = %v, want ErrExpired", err)
	}
}

func waitPending(t *testing.T, q *Queue) Pending {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ps := q.Pending(); len(ps) > 0 {
			return ps[0]
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no pending request")
	return Pending{}
}

// TestConcurrentDecide: of many racing decisions on one request, exactly
// one wins; the rest are refused.
func TestConcurrentDecide(t *testing.T) {
	q := NewQueue(time.Minute)
	id, _, err := q.Submit(pending("shell"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			d := "approve"
			if i%2 == 1 {
				d = "reject"
			}
			err := q.Decide(id, d, "u", digestA)
			switch {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
			case !errors.Is(err, ErrAlreadyDecided):
				t.Errorf("Decide = %v", err)
			}
			_ = q.Pending()
		}(i)
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d decisions won, want 1", wins)
	}
}

// TestDecideWhileStopped: while the emergency stop is engaged nothing is
// approved (a rejection still is recorded); once it is cleared the
// request, still pending, may be approved.
func TestDecideWhileStopped(t *testing.T) {
	q := NewQueue(time.Minute)
	stopped := true
	q.Stopped = func() bool { return stopped }
	id, _, err := q.Submit(pending("shell"))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Decide(id, "approve", "alice", digestA); !errors.Is(err, ErrStopped) {
		t.Fatalf("approve while stopped = %v, want ErrStopped", err)
	}
	if st, _, _ := q.status(id); st != StatusPending {
		t.Fatalf("status after a refused approval = %q", st)
	}
	stopped = false
	if err := q.Decide(id, "approve", "alice", digestA); err != nil {
		t.Fatalf("approve once cleared: %v", err)
	}
	id2, _, err := q.Submit(pending("shell"))
	if err != nil {
		t.Fatal(err)
	}
	stopped = true
	if err := q.Decide(id2, "reject", "alice", digestA); err != nil {
		t.Fatalf("reject while stopped: %v", err)
	}
}
