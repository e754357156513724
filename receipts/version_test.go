package receipts_test

import (
	"strings"
	"testing"

	"github.com/clawsec/claw/receipts"
)

// TestBodyVersions checks that readers accept version 1 and 2 bodies, that
// a version 1 body with a version 2 field is malformed, and that the writer
// picks the version a body needs.
func TestBodyVersions(t *testing.T) {
	line := func(body string) string {
		return `{"body":` + body + `,"kid":"00112233445566778899aabbccddeeff","sig":"AAAA"}`
	}
	const head = `"log":"claw/h/1","seq":1,"ts":"2026-11-22T02:31:00.123456Z","type":"decision","action_id":"a1",`
	const prev = `"prev":"` + receipts.GenesisPrev + `"}`
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"v1", `{"v":1,` + head + `"action":{"tool":"shell","summary":"ls"},"decision":{"result":"allow"},` + prev, true},
		{"v2 with args", `{"v":2,` + head + `"action":{"tool":"shell","summary":"ls","args":"{\"command\":\"ls\"}"},"decision":{"result":"allow","grant":"g-1"},` + prev, true},
		{"v1 with args", `{"v":1,` + head + `"action":{"tool":"shell","args":"{}"},"decision":{"result":"allow"},` + prev, false},
		{"v1 with a grant", `{"v":1,` + head + `"action":{"tool":"shell"},"decision":{"result":"allow","grant":"g-1"},` + prev, false},
		{"v1 grant_added", `{"v":1,"log":"claw/h/1","seq":1,"ts":"2026-11-22T02:31:00.123456Z","type":"grant_added","grant":{"id":"g-1","by":"cli"},` + prev, false},
		{"v2 grant_added", `{"v":2,"log":"claw/h/1","seq":1,"ts":"2026-11-22T02:31:00.123456Z","type":"grant_added","grant":{"id":"g-1","by":"cli"},` + prev, true},
		{"v2 autonomous run", `{"v":2,` + head + `"autonomous_run":"run_1","action":{"tool":"shell","summary":"ls"},"decision":{"result":"allow"},` + prev, true},
		{"v1 autonomous run", `{"v":1,` + head + `"autonomous_run":"run_1","action":{"tool":"shell","summary":"ls"},"decision":{"result":"allow"},` + prev, false},
		{"v2 parent action", `{"v":2,` + head + `"parent_action":"a_1","action":{"tool":"shell","summary":"ls"},"decision":{"result":"allow"},` + prev, true},
		{"v1 parent action", `{"v":1,` + head + `"parent_action":"a_1","action":{"tool":"shell","summary":"ls"},"decision":{"result":"allow"},` + prev, false},
		{"v2 with run and step", `{"v":2,` + head + `"run":"r-1","step":"write","action":{"tool":"shell"},"decision":{"result":"allow"},` + prev, true},
		{"v1 with a run", `{"v":1,` + head + `"run":"r-1","action":{"tool":"shell"},"decision":{"result":"allow"},` + prev, false},
		{"v1 with a step", `{"v":1,` + head + `"step":"write","action":{"tool":"shell"},"decision":{"result":"allow"},` + prev, false},
		{"v3", `{"v":3,` + head + prev, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := receipts.ParseLine([]byte(line(tt.body)))
			if (err == nil) != tt.ok {
				t.Fatalf("ParseLine: %v, want ok=%v", err, tt.ok)
			}
		})
	}
	for _, b := range []struct {
		body receipts.Body
		want int
	}{
		{receipts.Body{Type: receipts.TypeDecision, Action: &receipts.Action{Tool: "shell"}}, 1},
		{receipts.Body{Type: receipts.TypeDecision, Action: &receipts.Action{Tool: "shell", Args: "{}"}}, 2},
		{receipts.Body{Type: receipts.TypeDecision, Decision: &receipts.Decision{Result: "allow", Grant: "g"}}, 2},
		{receipts.Body{Type: receipts.TypeGrantRevoked, Grant: &receipts.Grant{ID: "g"}}, 2},
		{receipts.Body{Type: receipts.TypeEstop, Estop: &receipts.Estop{}}, 1},
		{receipts.Body{Type: receipts.TypeOutcome, AutonomousRun: "run_1", Outcome: &receipts.Outcome{Status: "ok"}}, 2},
		{receipts.Body{Type: receipts.TypeOutcome, ParentAction: "a_1", Outcome: &receipts.Outcome{Status: "ok"}}, 2},
		{receipts.Body{Type: receipts.TypeOutcome, Run: "r-1"}, 2},
		{receipts.Body{Type: receipts.TypeOutcome, Step: "list"}, 2},
	} {
		if got := b.body.Version(); got != b.want {
			t.Errorf("%s: Version() = %d, want %d", strings.TrimSpace(string(b.body.Type)), got, b.want)
		}
	}
}
