package approvals

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/broker"
)

// FuzzDecodeBodies feeds the request decoders of the HTTP API and the
// queue's validation with arbitrary bytes: no panic, and nothing invalid
// gets into the queue.
func FuzzDecodeBodies(f *testing.F) {
	f.Add([]byte(`{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"tool":"shell","summary":"ls","risk":"low","reasons":[{"id":"a","msg":"b"}],"action_sha256":"` + digestA + `","requester":"x"}`))
	f.Add([]byte(`{"tool":"shell","summary":"ls","args":{"command":"ls"},"risk":"low","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"tool":"sh\u0000","reasons":null}`))
	f.Add([]byte(`{}{}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"decision":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		q := NewQueue(time.Minute)
		var rb RequestBody
		if DecodeStrict(data, &rb) == nil {
			id, _, err := q.Submit(Pending{Tool: rb.Tool, Summary: rb.Summary, Args: rb.Args, Risk: rb.Risk, Reasons: rb.Reasons,
				ActionSHA256: rb.ActionSHA256, Requester: rb.Requester})
			if err == nil {
				if !validDigest(rb.ActionSHA256) || rb.Tool == "" || len(rb.Args) > broker.MaxArgs || len(rb.Args) > 0 && !json.Valid(rb.Args) {
					t.Fatalf("invalid request accepted: %+v", rb)
				}
				var db DecideBody
				if DecodeStrict(data, &db) == nil {
					_ = q.Decide(id, db.Decision, db.Approver, db.ActionSHA256)
				}
			}
		}
		var db DecideBody
		if DecodeStrict(data, &db) == nil {
			_ = q.Decide("apr_x", db.Decision, db.Approver, db.ActionSHA256)
		}
	})
}

// FuzzParseError: server error bodies are untrusted input to the client.
func FuzzParseError(f *testing.F) {
	f.Add([]byte(`{"error":{"code":"not_found","message":"no such approval request"}}`))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte("{\"error\":{\"message\":\"\x1b[2Jfake prompt\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := parseError(500, data)
		for _, r := range err.Error() {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("control character in %q", err.Error())
			}
		}
	})
}
