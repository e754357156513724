package runtime

import "testing"

// TestPendingDecisionName: approve and reject keep their names, the
// offered grant turns an approval into approve_grant or
// approve_conversation, and both at once is a usage error.
func TestPendingDecisionName(t *testing.T) {
	for _, c := range []struct {
		d    PendingDecision
		want string
		code int
	}{
		{PendingDecision{Decision: "approve"}, "approve", ExitOK},
		{PendingDecision{Decision: "reject"}, "reject", ExitOK},
		{PendingDecision{Decision: "approve", Grant: true}, "approve_grant", ExitOK},
		{PendingDecision{Decision: "approve", Conversation: true}, "approve_conversation", ExitOK},
		{PendingDecision{Decision: "approve", Grant: true, Conversation: true}, "", ExitUsage},
	} {
		got, err := c.d.Name()
		if got != c.want || ExitCode(err) != c.code {
			t.Errorf("%+v: %q, %v (exit %d), want %q (exit %d)", c.d, got, err, ExitCode(err), c.want, c.code)
		}
	}
}
