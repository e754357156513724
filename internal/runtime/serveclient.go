package runtime

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/approvals"
)

// DaemonApprovals is the approvals client of a running daemon, and
// Pending an action waiting there for approval.
type (
	DaemonApprovals = approvals.Client
	Pending         = approvals.Pending
)

// daemonRetry is how often a client command tries again while it waits.
const daemonRetry = 100 * time.Millisecond

// DaemonClient is the approvals client of the daemon at target (""
// the configured socket), with the token of e's config.
func DaemonClient(e *Env, target string) (*approvals.Client, error) {
	target, token, err := DaemonTarget(e, target)
	if err != nil {
		return nil, err
	}
	cl, err := approvals.NewClient(target, token)
	if err != nil {
		return nil, WithCode(ExitUsage, err)
	}
	return cl, nil
}

// PendingActions lists the actions waiting for approval in the daemon of
// cl.
func PendingActions(ctx context.Context, cl *approvals.Client) ([]approvals.Pending, error) {
	ps, err := cl.Pending(ctx)
	if err != nil {
		return nil, WithCode(ExitError, err, "is 'claw serve' running?")
	}
	return ps, nil
}

// PendingDecision is the answer of claw serve approve or reject to one
// pending action.
type PendingDecision struct {
	ID           string        // the request; "" the oldest
	Decision     string        // approve or reject
	Grant        bool          // approve, accepting the grant the request offers
	Conversation bool          // approve, accepting the offered grant for the conversation only
	Approver     string        // who decides; "" cli:$USER
	Wait         time.Duration // how long the request may take to appear
}

// Name is the daemon's name of d's decision; a usage error when d
// accepts the grant both outright and for the conversation only.
func (d PendingDecision) Name() (string, error) {
	switch {
	case d.Grant && d.Conversation:
		return "", Usagef("--grant and --conversation do not go together")
	case d.Grant:
		return "approve_grant", nil
	case d.Conversation:
		return "approve_conversation", nil
	}
	return d.Decision, nil
}

// DecidePending decides the pending action d names, quoting the digest
// of the action that was listed, and returns the daemon's result and the
// action decided.
func DecidePending(ctx context.Context, cl *approvals.Client, d PendingDecision) (string, approvals.Pending, error) {
	decision, err := d.Name()
	if err != nil {
		return "", approvals.Pending{}, err
	}
	p, err := findPending(ctx, cl, d.ID, d.Wait)
	if err != nil {
		return "", approvals.Pending{}, err
	}
	approver := d.Approver
	if approver == "" {
		approver = "cli"
		if u := os.Getenv("USER"); u != "" {
			approver = "cli:" + u
		}
	}
	res, err := cl.Decide(ctx, p.ID, decision, approver, p.ActionSHA256)
	if err != nil {
		return "", approvals.Pending{}, WithCode(ExitError, err)
	}
	return res, p, nil
}

// findPending waits up to wait for the pending request id (or any, for
// the oldest, when id is "").
func findPending(ctx context.Context, cl *approvals.Client, id string, wait time.Duration) (approvals.Pending, error) {
	deadline := time.Now().Add(wait)
	for {
		ps, err := PendingActions(ctx, cl)
		if err != nil {
			return approvals.Pending{}, err
		}
		for _, p := range ps {
			if id == "" || p.ID == id {
				return p, nil
			}
		}
		if !time.Now().Before(deadline) {
			return approvals.Pending{}, WithCode(ExitError, errors.New("no such pending request"), "list them with 'claw serve pending'")
		}
		select {
		case <-ctx.Done():
			return approvals.Pending{}, ctx.Err()
		case <-time.After(daemonRetry):
		}
	}
}

// DaemonCall is one request of claw serve call.
type DaemonCall struct {
	Method, Path, Accept string
	// Body is sent as it is, or, as @FILE, the file's content.
	Body    string
	NoBody  bool
	NoToken bool          // send no bearer token
	Wait    time.Duration // how long to retry while the daemon cannot be reached
}

// Call sends c to the daemon at target ("" the socket of e's config),
// with the token of e's config, and returns the status code and body of
// the answer.
func (c DaemonCall) Call(ctx context.Context, e *Env, target string) (int, []byte, error) {
	target, token, err := DaemonTarget(e, target)
	if err != nil {
		return 0, nil, err
	}
	if c.NoToken {
		token = ""
	}
	var body []byte
	if !c.NoBody {
		body = []byte(c.Body)
		if f, ok := strings.CutPrefix(c.Body, "@"); ok {
			if body, err = ReadBounded(f, 64<<20); err != nil {
				return 0, nil, WithCode(ExitError, err)
			}
		}
	}
	deadline := time.Now().Add(c.Wait)
	code, data, err := ServeCall(ctx, target, token, c.Method, c.Path, c.Accept, body)
	for err != nil && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(daemonRetry) // the daemon may still be starting
		code, data, err = ServeCall(ctx, target, token, c.Method, c.Path, c.Accept, body)
	}
	if err != nil {
		return 0, nil, WithCode(ExitError, err, "is 'claw serve' running?")
	}
	return code, data, nil
}
