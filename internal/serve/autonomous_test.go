package serve

import (
	"context"
	"testing"
	"time"
)

// fakeRun stands for the agent's autonomous loop: each message of the
// person is a turn; it stops when the emergency stop is engaged or its
// context ends, as the agent does.
func fakeRun(ctx context.Context, r AutoRequest) AutoResult {
	res := AutoResult{Conversation: r.Conversation, State: "resting"}
	if res.Conversation == "" {
		res.Conversation = "c-new"
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			res.Stop = "cancelled"
			return res
		case <-tick.C:
			if r.Estopped() {
				res.Stop = "estop"
				return res
			}
		case m := <-r.User:
			res.Turns++
			r.OnTurn(AutoTurn{N: res.Turns, Next: "engaged", Conversation: res.Conversation, ToolCalls: []ToolCall{{ID: "1", Name: m, Status: "ok"}}})
			res.ToolCalls++
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Runs of the daemon: one per conversation, /chat refused in it; a
// message is a turn; DELETE, the emergency stop, a reload and the
// shutdown each stop runs, and the status says which.
func TestAutonomousRuns(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Autonomous = fakeRun })
	uc, u := r.unixClient(), "http://claw"
	start := func(body string) string {
		t.Helper()
		res := do(t, uc, "POST", u+"/autonomous", token, body)
		if res.code != 201 {
			t.Fatalf("start %s: %d %s", body, res.code, res.raw)
		}
		return res.body["run"].(string)
	}
	status := func(run string) map[string]any {
		t.Helper()
		res := do(t, uc, "GET", u+"/autonomous/"+run, token, "")
		if res.code != 200 {
			t.Fatalf("status %s: %d %s", run, res.code, res.raw)
		}
		return res.body
	}
	stoppedWith := func(run, why string) {
		t.Helper()
		waitFor(t, run+" to stop", func() bool { return status(run)["running"] == false })
		if st := status(run); st["stop"] != why {
			t.Errorf("run %s stopped with %v, want %s", run, st["stop"], why)
		}
	}

	a := start(`{"conversation":"c1","task":"work"}`)
	if res := do(t, uc, "POST", u+"/autonomous", token, `{"conversation":"c1","task":"more"}`); res.code != 409 || errCode(res) != "conflict" {
		t.Errorf("a second run in c1: %d %s", res.code, res.raw)
	}
	if res := do(t, uc, "POST", u+"/chat", token, `{"conversation":"c1","message":"hi"}`); res.code != 409 || errCode(res) != "conflict" {
		t.Errorf("/chat in c1: %d %s", res.code, res.raw)
	}
	if res := do(t, uc, "POST", u+"/autonomous/"+a+"/message", token, `{"message":"look"}`); res.code != 202 {
		t.Fatalf("message: %d %s", res.code, res.raw)
	}
	waitFor(t, "the turn", func() bool { return status(a)["turns"] == float64(1) })
	if st := status(a); st["tool_calls"] != float64(1) || st["state"] != "engaged" {
		t.Errorf("after a message: %v", st)
	}
	if res := do(t, uc, "DELETE", u+"/autonomous/"+a, token, ""); res.code != 200 || res.body["stop"] != "stopped" || res.body["running"] != false {
		t.Errorf("DELETE: %d %s", res.code, res.raw)
	}
	if res := do(t, uc, "GET", u+"/autonomous/run_0000000000000000", token, ""); res.code != 404 || errCode(res) != "not_found" {
		t.Errorf("an unknown run: %d %s", res.code, res.raw)
	}

	// the emergency stop stops every run, and starts none
	b, c := start(`{"conversation":"c1","task":"again"}`), start(`{"new_conversation":true,"task":"other"}`)
	do(t, uc, "POST", u+"/estop", token, "")
	stoppedWith(b, "estop")
	stoppedWith(c, "estop")
	if res := do(t, uc, "POST", u+"/autonomous", token, `{"conversation":"c2","task":"x"}`); res.code != 409 || errCode(res) != "estop" {
		t.Errorf("a run under the estop: %d %s", res.code, res.raw)
	}
	do(t, uc, "DELETE", u+"/estop", token, "")

	// a reload stops runs: none goes on under replaced policies
	d := start(`{"conversation":"c2","task":"x"}`)
	if res := do(t, uc, "POST", u+"/reload", token, ""); res.code != 200 {
		t.Fatalf("reload: %d %s", res.code, res.raw)
	}
	stoppedWith(d, "reload")

	// the shutdown stops the last run before Serve returns
	e := start(`{"conversation":"c3","task":"x"}`)
	r.stop()
	r.srv.runMu.Lock()
	st := r.srv.runs[e].status()
	r.srv.runMu.Unlock()
	if st.Running || st.Stop != "shutdown" {
		t.Errorf("after the shutdown: %+v", st)
	}
}
