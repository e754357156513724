package approvals

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/clawsec/claw/internal/broker"
)

var (
	approvalID = regexp.MustCompile(`^apr_[0-9a-f]{24}$`)
	digestRE   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	nameRE     = regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,64}$`)
)

// FuzzDecodeBodies feeds the request decoders of the HTTP API and the
// queue with arbitrary bytes. A body that decodes is one JSON value. A
// request the queue takes keeps every documented bound (checked here on
// their own), is listed exactly as submitted with a fresh id and its
// deadline, is decided only with its own digest, and only once; a request
// it refuses is ErrInvalid and leaves the queue empty. A decision is taken
// exactly when it is "approve" or "reject" from a well-formed approver
// quoting the request's digest, and is recorded as given; anything else
// leaves the request pending.
func FuzzDecodeBodies(f *testing.F) {
	f.Add([]byte(`{"decision":"approve","approver":"alice","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"decision":"reject","approver":"a.b@c:d-e_f","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"decision":"approve","approver":"al ice","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"decision":"Approve","approver":"alice","action_sha256":"` + strings.ToUpper(digestA) + `"}`))
	f.Add([]byte(`{"tool":"shell","summary":"ls","risk":"low","reasons":[{"id":"a","msg":"b"}],"action_sha256":"` + digestA + `","requester":"x"}`))
	f.Add([]byte(`{"tool":"shell","summary":"ls","args":{"command":"ls"},"risk":"low","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"tool":"sh\u0085","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"tool":"x","args":"","action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{"tool":"sh\u0000","reasons":null}`))
	f.Add([]byte(`{"action_sha256":"` + digestA + `"}`))
	f.Add([]byte(`{}{}`))
	f.Add([]byte(`{}]`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"decision":1}`))
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		var rb RequestBody
		if DecodeStrict(data, &rb) == nil {
			if !json.Valid(data) {
				t.Fatalf("decoded %q: not one JSON value", data)
			}
			checkSubmit(t, now, rb)
		}
		var db DecideBody
		if DecodeStrict(data, &db) == nil {
			if !json.Valid(data) {
				t.Fatalf("decoded %q: not one JSON value", data)
			}
			checkDecide(t, db)
		}
	})
}

func checkSubmit(t *testing.T, now time.Time, rb RequestBody) {
	t.Helper()
	q := NewQueue(time.Minute)
	q.now = func() time.Time { return now }
	id, exp, err := q.Submit(Pending{RequestBody: rb})
	if err != nil {
		if !errors.Is(err, ErrInvalid) || id != "" || !exp.IsZero() || len(q.Pending()) != 0 {
			t.Fatalf("refused %+v: %q %v %v, %d pending", rb, id, exp, err, len(q.Pending()))
		}
		return
	}
	bad := func(what string) { t.Helper(); t.Fatalf("accepted %s: %+v", what, rb) }
	switch {
	case rb.Tool == "" || len(rb.Tool) > maxToolLen || !printableText(rb.Tool):
		bad("tool")
	case len(rb.Summary) > maxSummaryLen:
		bad("summary")
	case len(rb.Args) > broker.MaxArgs || len(rb.Args) > 0 && !json.Valid(rb.Args):
		bad("args")
	case len(rb.Risk) > maxNameLen || !printableText(rb.Risk):
		bad("risk")
	case len(rb.Reasons) > maxReasons:
		bad("reasons")
	case !digestRE.MatchString(rb.ActionSHA256):
		bad("digest")
	case rb.Requester != "" && !nameRE.MatchString(rb.Requester):
		bad("requester")
	}
	for _, r := range rb.Reasons {
		if len(r.ID) > maxReasonLen || len(r.Msg) > maxReasonLen {
			bad("reason")
		}
	}
	want := Pending{ID: id, RequestBody: rb, Created: now, Expires: now.Add(time.Minute)}
	if want.Requester == "" {
		want.Requester = "unknown"
	}
	pend := q.Pending()
	if len(pend) != 1 || !approvalID.MatchString(id) || !exp.Equal(want.Expires) {
		t.Fatalf("submitted %+v as %q, expiring %v; pending %+v", rb, id, exp, pend)
	}
	if diff := cmp.Diff(want, pend[0], cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("pending request differs from the submitted one (-want +got):\n%s", diff)
	}
	other := "sha256:" + strings.Repeat("0", 64)
	if rb.ActionSHA256 == other {
		other = digestA
	}
	if err := q.Decide(id, "approve", "alice", other); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("decision with another digest: %v", err)
	}
	if err := q.Decide(id, "reject", "alice", rb.ActionSHA256); err != nil {
		t.Fatalf("decision with the digest: %v", err)
	}
	if st, by, _ := q.status(id); st != StatusRejected || by != "alice" || len(q.Pending()) != 0 {
		t.Fatalf("after a rejection: %s by %q, %d pending", st, by, len(q.Pending()))
	}
	if err := q.Decide(id, "approve", "alice", rb.ActionSHA256); !errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("second decision: %v", err)
	}
}

func checkDecide(t *testing.T, db DecideBody) {
	t.Helper()
	q := NewQueue(time.Minute)
	id, _, err := q.Submit(Pending{RequestBody: RequestBody{Tool: "shell", ActionSHA256: digestA}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Decide("apr_x", db.Decision, db.Approver, db.ActionSHA256); err == nil {
		t.Fatalf("decided an unknown request with %+v", db)
	}
	valid := (db.Decision == "approve" || db.Decision == "reject") && nameRE.MatchString(db.Approver) && db.ActionSHA256 == digestA
	err = q.Decide(id, db.Decision, db.Approver, db.ActionSHA256)
	st, by, _ := q.status(id)
	switch {
	case valid && err != nil:
		t.Fatalf("refused %+v: %v", db, err)
	case !valid && err == nil:
		t.Fatalf("took %+v", db)
	case err != nil && (st != StatusPending || by != ""):
		t.Fatalf("refused %+v (%v) but the request is %s by %q", db, err, st, by)
	case err == nil && (st != map[string]string{"approve": StatusApproved, "reject": StatusRejected}[db.Decision] || by != db.Approver):
		t.Fatalf("took %+v but the request is %s by %q", db, st, by)
	}
}

// printableText is what the queue lets through to an approver's
// terminal: no C0 or C1 control character, no DEL.
func printableText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return false
		}
	}
	return true
}

// FuzzParseError: server error bodies are untrusted input to the client.
// The error is always a *StatusError with the status given; its message
// is at most 512 bytes of valid UTF-8 without control characters, the
// server's message itself when that is short and printable, and empty
// when the body is not an error object.
func FuzzParseError(f *testing.F) {
	f.Add(500, []byte(`{"error":{"code":"not_found","message":"no such approval request"}}`))
	f.Add(404, []byte(`{"error":"x"}`))
	f.Add(409, []byte("{\"error\":{\"message\":\"\x1b[2Jfake prompt\"}}"))
	f.Add(502, []byte(`{"error":{"message":"\u009b2Jfake prompt"}}`))
	f.Add(413, []byte(`{"error":{"message":"`+strings.Repeat("é", 300)+`"}}`))
	f.Add(400, []byte(`{"error":{"message":"`+strings.Repeat("a", 511)+`€"}}`))
	f.Add(503, []byte(`not json`))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		err := parseError(status, data)
		var se *StatusError
		if !errors.As(err, &se) || se.Status != status {
			t.Fatalf("parseError(%d, %q) = %#v", status, data, err)
		}
		msg := se.Message
		if len(msg) > 512 || !utf8.ValidString(msg) || !printableText(msg) {
			t.Fatalf("parseError(%d, %q): message %q is not short, printable UTF-8", status, data, msg)
		}
		if !printableText(err.Error()) || !utf8.ValidString(err.Error()) {
			t.Fatalf("parseError(%d, %q) = %q", status, data, err.Error())
		}
		var e struct {
			Error APIError `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil {
			if se.Code != "" || se.Message != "" {
				t.Fatalf("parseError(%d, %q) made up %q %q", status, data, se.Code, se.Message)
			}
			return
		}
		if len(e.Error.Message) <= 512 && printableText(e.Error.Message) && msg != e.Error.Message {
			t.Fatalf("parseError(%d, %q) changed the message %q into %q", status, data, e.Error.Message, msg)
		}
		blank := func(r rune) rune {
			if !printableText(string(r)) {
				return ' '
			}
			return r
		}
		if !strings.HasPrefix(strings.Map(blank, e.Error.Message), msg) {
			t.Fatalf("parseError(%d, %q): message %q is not the start of %q with control characters blanked", status, data, msg, e.Error.Message)
		}
	})
}
