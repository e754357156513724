package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/serve"
	"github.com/clawsec/claw/internal/termtest"
	"github.com/clawsec/claw/receipts"
)

// autoDaemon is a claw serve running in process on home, and its client.
type autoDaemon struct {
	t           *testing.T
	target, tok string
	stop        func()
	code        chan int
	stderr      *termtest.LockedBuffer
}

func startAutoDaemon(t *testing.T, home string) *autoDaemon {
	t.Helper()
	return startDaemon(t, home, "--autonomy", "full")
}

// startDaemon starts claw serve on home, with args, in process.
func startDaemon(t *testing.T, home string, args ...string) *autoDaemon {
	t.Helper()
	tok := strings.Repeat("ab", 20)
	if err := os.WriteFile(filepath.Join(home, "token"), []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &autoDaemon{t: t, target: "unix:" + filepath.Join(home, "run", "claw.sock"), tok: tok, stop: cancel,
		code: make(chan int, 1), stderr: &termtest.LockedBuffer{}}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		d.code <- runClawContext(ctx, &globals{stdin: strings.NewReader(""), stdout: &termtest.LockedBuffer{}, stderr: d.stderr},
			home, append([]string{"serve"}, args...)...)
	}()
	// The daemon writes its last receipts as it stops: the test's
	// directories are removed after that.
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Error("claw serve still runs a minute after it was stopped")
		}
	})
	waitUntil(t, "the daemon", func() bool {
		code, _, err := runtime.ServeCall(context.Background(), d.target, "", "GET", "/health", "", nil)
		return err == nil && code == http.StatusOK
	})
	return d
}

// call sends a request and decodes the answer into out (when not nil).
func (d *autoDaemon) call(method, path, body string, out any) int {
	d.t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	code, data, err := runtime.ServeCall(context.Background(), d.target, d.tok, method, path, "", b)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			d.t.Fatalf("%s %s: %d %s: %v", method, path, code, data, err)
		}
	}
	return code
}

func (d *autoDaemon) status(run string) serve.AutoStatus {
	var st serve.AutoStatus
	if code := d.call("GET", "/autonomous/"+run, "", &st); code != http.StatusOK {
		d.t.Fatalf("GET /autonomous/%s: %d", run, code)
	}
	return st
}

type apiErr struct {
	Error struct{ Code string } `json:"error"`
}

// The daemon's autonomous run works through a three-step task, yields and
// rests; a message of the person preempts it and starts a command; the
// emergency stop over the API cancels the command and stops the run. One
// run per conversation, /chat refused in it, yield_to_user only in the
// run's catalog; a run is stopped by DELETE and by the daemon's shutdown.
// Every action is receipted with the run id and the log verifies.
func TestServeAutonomousRun(t *testing.T) {
	requireSandboxForTest(t)
	home, ws := autonomousHome(t, "max_turns = 8\n")
	d := startAutoDaemon(t, home)

	var tools struct{ Tools []serve.Tool }
	d.call("GET", "/tools", "", &tools)
	for _, tl := range tools.Tools {
		if tl.Name == "yield_to_user" {
			t.Error("yield_to_user is offered to /chat")
		}
	}
	var started struct{ Run, Conversation string }
	if code := d.call("POST", "/autonomous", `{"new_conversation":true,"task":"do the three steps"}`, &started); code != http.StatusCreated {
		t.Fatalf("POST /autonomous: %d", code)
	}
	run := started.Run
	waitUntil(t, "the yield", func() bool { return d.status(run).State == "resting" })
	st := d.status(run)
	if !st.Running || st.Turns != 4 || st.ToolCalls != 4 || len(st.LastTurn) != 1 || st.LastTurn[0].Name != "yield_to_user" || st.Conversation == "" {
		t.Fatalf("after the yield: %+v", st)
	}
	for i, want := range []string{"one", "two", "three"} {
		b, err := os.ReadFile(filepath.Join(ws, "step"+string(rune('1'+i))+".txt"))
		if err != nil || string(b) != want {
			t.Errorf("step %d: %q, %v", i+1, b, err)
		}
	}

	// the conversation is the run's
	var e apiErr
	if code := d.call("POST", "/autonomous", `{"conversation":"`+st.Conversation+`","task":"more"}`, &e); code != http.StatusConflict || e.Error.Code != "conflict" {
		t.Errorf("a second run in the conversation: %d %+v", code, e)
	}
	if code := d.call("POST", "/chat", `{"conversation":"`+st.Conversation+`","message":"hi"}`, &e); code != http.StatusConflict || e.Error.Code != "conflict" {
		t.Errorf("/chat in the run's conversation: %d %+v", code, e)
	}

	// the person's message preempts the rest, and starts a long command
	if code := d.call("POST", "/autonomous/"+run+"/message", `{"message":"now count to a million"}`, nil); code != http.StatusAccepted {
		t.Fatalf("message: %d", code)
	}
	waitUntil(t, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(ws, "started"))
		return err == nil
	})
	if code := d.call("POST", "/estop", `{"reason":"test"}`, nil); code != http.StatusOK {
		t.Fatalf("estop: %d", code)
	}
	waitUntil(t, "the run to stop", func() bool { return !d.status(run).Running })
	if st := d.status(run); st.Stop != "estop" || st.Turns != 5 || st.ToolCalls != 5 {
		t.Errorf("after the estop: %+v", st)
	}
	if code := d.call("POST", "/autonomous", `{"new_conversation":true,"task":"go on forever"}`, &e); code != http.StatusConflict || e.Error.Code != "estop" {
		t.Errorf("a run under the estop: %d %+v", code, e)
	}
	if code := d.call("POST", "/autonomous/"+run+"/message", `{"message":"hello?"}`, &e); code != http.StatusConflict || e.Error.Code != "not_running" {
		t.Errorf("a message to a stopped run: %d %+v", code, e)
	}
	d.call("DELETE", "/estop", "", nil)

	// DELETE stops a resting run; the daemon's shutdown stops the last
	// (the mock model answers their turns as it did the first run's)
	runs := map[string]bool{run: true}
	if code := d.call("POST", "/autonomous", `{"conversation":"`+st.Conversation+`","task":"go on forever"}`, &started); code != http.StatusCreated {
		t.Fatalf("a run after the estop: %d", code)
	}
	runs[started.Run] = true
	waitUntil(t, "the second run to rest", func() bool { return d.status(started.Run).State == "resting" })
	var stopped serve.AutoStatus
	if code := d.call("DELETE", "/autonomous/"+started.Run, "", &stopped); code != http.StatusOK || stopped.Running || stopped.Stop != "stopped" {
		t.Errorf("DELETE: %d %+v", code, stopped)
	}
	if code := d.call("POST", "/autonomous", `{"new_conversation":true,"task":"go on forever"}`, &started); code != http.StatusCreated {
		t.Fatalf("a third run: %d", code)
	}
	runs[started.Run] = true
	waitUntil(t, "the third run to rest", func() bool { return d.status(started.Run).State == "resting" })
	d.stop()
	select {
	case code := <-d.code:
		if code != 0 || strings.Contains(d.stderr.String(), "did not stop in time") {
			t.Fatalf("serve: exit %d:\n%s", code, d.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the daemon did not stop:\n%s", d.stderr.String())
	}

	tally := map[string]int{}
	estopped := false
	for _, b := range receiptBodies(t, filepath.Join(home, "receipts")) {
		if b.Type != receipts.TypeDecision && b.Type != receipts.TypeOutcome {
			continue
		}
		if !runs[b.AutonomousRun] || len(runs) != 3 {
			t.Errorf("receipt %d: run %q, not one of %v", b.Seq, b.AutonomousRun, runs)
		}
		if b.AutonomousRun != run {
			continue
		}
		if b.Action != nil {
			tally[b.Action.Tool]++
		}
		if b.Outcome != nil && b.Outcome.Status == "estop" {
			estopped = true
		}
	}
	if tally["file_write"] != 3 || tally["yield_to_user"] != 1 || tally["shell"] != 1 {
		t.Errorf("decisions by tool: %v", tally)
	}
	if !estopped {
		t.Error("no outcome says the emergency stop stopped the command")
	}
	out, errOut, code := operatorRun(t, home, "audit", "verify")
	if code != 0 || !strings.Contains(out, "VERIFIED") {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}
