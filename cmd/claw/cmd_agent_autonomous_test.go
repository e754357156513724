package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/termtest"
	"github.com/clawsec/claw/receipts"
)

// autonomousScript is a mock model that works through a three-step task
// one step per turn, yields, and on the person's message starts a long
// command.
const autonomousScript = `turns:
  - step: 2
    reply: "Done: {{tool_result}}"
  - contains: three steps
    tool_calls:
      - name: file_write
        arguments: {path: step1.txt, content: one}
  - contains: autonomous turn 2 of
    tool_calls:
      - name: file_write
        arguments: {path: step2.txt, content: two}
  - contains: autonomous turn 3 of
    tool_calls:
      - name: file_write
        arguments: {path: step3.txt, content: three}
  - contains: autonomous turn
    tool_calls:
      - name: yield_to_user
        arguments: {reason: the three steps are done}
  - contains: count to a million
    tool_calls:
      - name: shell
        arguments: {command: "touch started && sleep 60"}
default:
  reply: "You said: {{user}}"
`

// autonomousHome is a claw home whose model is autonomousScript, with
// short intervals except Resting, and extra appended to [autonomous].
func autonomousHome(t *testing.T, extra string) (home, ws string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte(autonomousScript), 0o600); err != nil {
		t.Fatal(err)
	}
	home = agentHome(t, `default_provider = "fixture"
[providers.fixture]
kind = "mock"
script = "`+script+`"
[autonomous]
engaged = "20ms"
working = "20ms"
foraging = "20ms"
resting = "1h"
`+extra)
	var cfg struct {
		WorkspaceDir string `json:"workspace_dir"`
	}
	out, stderr, code := operatorRun(t, home, "config", "show", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &cfg) != nil {
		t.Fatalf("config show: exit %d: %s", code, stderr)
	}
	return home, cfg.WorkspaceDir
}

// waitUntil polls cond for up to a minute (sandboxed steps on a loaded
// machine).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// An autonomous run works through a three-step task one turn at a time,
// yields and rests; the person's message preempts the rest at once; the
// emergency stop cancels the command that message started and ends the
// run. Every action's receipts carry the run id, and the log verifies.
func TestAgentAutonomousRun(t *testing.T) {
	requireSandboxForTest(t)
	home, ws := autonomousHome(t, "max_turns = 8\n")
	stdin, typed := io.Pipe()
	var stdout, stderr termtest.LockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- runClaw(&globals{stdin: stdin, stdout: &stdout, stderr: &stderr}, home,
			"agent", "--autonomous", "--autonomy", "full", "--new", "-m", "do the three steps")
	}()
	t.Cleanup(func() { typed.Close() })

	waitUntil(t, "the yield", func() bool { return strings.Contains(stderr.String(), "→ resting") })
	for i, want := range []string{"one", "two", "three"} {
		b, err := os.ReadFile(filepath.Join(ws, "step"+string(rune('1'+i))+".txt"))
		if err != nil || string(b) != want {
			t.Errorf("step %d: %q, %v", i+1, b, err)
		}
	}
	if _, err := io.WriteString(typed, "now count to a million\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(ws, "started"))
		return err == nil
	})
	if _, errOut, code := operatorRun(t, home, "estop", "--reason", "test"); code != 0 {
		t.Fatalf("estop: exit %d: %s", code, errOut)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the run did not stop on the emergency stop:\n%s", stderr.String())
	}
	errs := stderr.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
	for _, want := range []string{
		"claw: turn 1 (engaged, your message) → working",
		"claw: turn 2 (working, autonomous) → working",
		"claw: turn 3 (working, autonomous) → working",
		"claw: turn 4 (working, autonomous) → resting",
		"claw: turn 5 (engaged, your message) → working",
		"stopped (estop) after 5 turns, 5 tool calls",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	run := regexp.MustCompile(`autonomous run (run_[0-9a-f]{16}) stopped`).FindStringSubmatch(errs)
	if run == nil {
		t.Fatalf("no run id in:\n%s", errs)
	}

	// every decision and outcome of the run names it; the shell command
	// was stopped by the emergency stop
	tools := map[string]int{}
	estopped := false
	for _, b := range receiptBodies(t, filepath.Join(home, "receipts")) {
		if b.Type != receipts.TypeDecision && b.Type != receipts.TypeOutcome {
			continue
		}
		if b.AutonomousRun != run[1] || b.V != receipts.Version {
			t.Errorf("receipt %d: run %q, v%d", b.Seq, b.AutonomousRun, b.V)
		}
		if b.Action != nil {
			tools[b.Action.Tool]++
		}
		if b.Outcome != nil && b.Outcome.Status == "estop" {
			estopped = true
		}
	}
	if tools["file_write"] != 3 || tools["yield_to_user"] != 1 || tools["shell"] != 1 {
		t.Errorf("decisions by tool: %v", tools)
	}
	if !estopped {
		t.Error("no outcome says the emergency stop stopped the command")
	}
	out, errOut, code := operatorRun(t, home, "audit", "verify")
	if code != 0 || !strings.Contains(out, "VERIFIED") {
		t.Fatalf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
}

// The run stops at its bound of turns, however much the model would go
// on; the bound is counted before each turn.
func TestAgentAutonomousMaxTurns(t *testing.T) {
	home, _ := autonomousHome(t, "")
	// "go on forever" matches no scripted turn: the model only talks, so
	// the run winds down to resting; a short resting interval keeps it
	// ticking until the bound stops it.
	out, errs, code := operatorRun(t, home, "agent", "--autonomous", "--max-turns", "3", "-o", "json", "-m", "go on forever")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Turns int    `json:"turns"`
		Stop  string `json:"stop"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Turns != 3 || res.Stop != "max_turns" {
		t.Errorf("turns %d, stop %q:\n%s", res.Turns, res.Stop, errs)
	}
	if strings.Contains(errs, "claw: turn 4 ") {
		t.Errorf("a fourth turn ran:\n%s", errs)
	}
}

// receiptBodies reads every receipt body under dir.
func receiptBodies(t *testing.T, dir string) []receipts.Body {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no receipt files in %s: %v", dir, err)
	}
	var out []receipts.Body
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r struct {
				Body receipts.Body `json:"body"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, r.Body)
		}
	}
	return out
}
