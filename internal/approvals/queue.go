package approvals

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/broker"
)

// Errors Decide returns. The HTTP API maps ErrUnknown to 404 and the
// others to 409 (ErrInvalid to 400).
var (
	ErrUnknown        = errors.New("no such approval request")
	ErrExpired        = errors.New("approval request expired")
	ErrAlreadyDecided = errors.New("approval request already decided")
	ErrDigestMismatch = errors.New("action digest does not match the pending action")
	ErrInvalid        = errors.New("invalid approval request")
	ErrFull           = errors.New("too many pending approval requests")
	ErrStopped        = errors.New("the emergency stop is engaged: nothing may be approved until it is cleared")
	ErrNotAllowed     = errors.New("this approver may not decide this request")
)

// Limits of the queue and of the fields of a request.
const (
	MaxPending    = 256
	maxToolLen    = 128
	maxSummaryLen = 4 << 10
	maxReasons    = 32
	maxReasonLen  = 512
	maxNameLen    = 64
	// DefaultTTL is used when NewQueue is given a non-positive ttl.
	DefaultTTL = 120 * time.Second
)

// Results of a request, as the wait endpoint reports them.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusTimeout  = "timeout"
)

// Reason is one rule behind the request.
type Reason struct {
	ID  string `json:"id"`
	Msg string `json:"msg"`
}

// Pending is a request waiting for a decision: what was submitted (its
// fields are at the top level of the JSON), with its id and times.
type Pending struct {
	ID string `json:"id"`
	RequestBody
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Approvers, when set, are the only approvers who may decide the
	// request (a channel's approver_ids, see [Queue.For]).
	Approvers []string `json:"approvers,omitempty"`
}

type item struct {
	p        Pending
	status   string
	by       string
	remember string        // broker.Remember* of an approval
	done     chan struct{} // closed once status is no longer pending
	timer    *time.Timer
}

// Queue holds the pending approval requests.
type Queue struct {
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	items map[string]*item
	// Requester names the local requester in Pending entries made by
	// Approve ("serve" unless set before use).
	Requester string
	// Stopped, when set, reports whether the emergency stop is engaged;
	// while it is, Decide refuses to approve (a rejection still goes
	// through). Set it before use.
	Stopped func() bool
}

// NewQueue returns an empty queue whose requests expire after ttl.
func NewQueue(ttl time.Duration) *Queue {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Queue{ttl: ttl, now: time.Now, items: map[string]*item{}, Requester: "serve"}
}

// TTL is how long a request waits before it expires.
func (q *Queue) TTL() time.Duration { return q.ttl }

// Approve implements broker.Approver: it enqueues r and blocks until a
// human decides, the request expires (Answer{Result: "timeout"}), or ctx
// ends (the request is withdrawn and ctx's error returned).
func (q *Queue) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	return q.approve(ctx, r, q.Requester, nil)
}

// For returns an Approver that enqueues its requests under requester
// (a channel's name), followed by ":" and the user the broker acts for
// when there is one and it fits (broker.WithUser: "bridge:main", so the
// session's own channel can pick its requests out), and lets only the
// approvers named decide them; Decide refuses anyone else with
// ErrNotAllowed. With no approvers, every request is answered "timeout"
// at once: a channel nobody may approve for should have no approver.
func (q *Queue) For(requester string, approvers []string) broker.Approver {
	return channelApprover{q: q, requester: requester, approvers: slices.Clone(approvers)}
}

type channelApprover struct {
	q         *Queue
	requester string
	approvers []string
}

func (c channelApprover) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	if len(c.approvers) == 0 {
		return broker.Answer{Result: StatusTimeout, By: "none"}, fmt.Errorf("%w: nobody may approve for %s", ErrNotAllowed, c.requester)
	}
	requester := c.requester
	if u := broker.UserFrom(ctx); u != "" && checkName("requester", requester+":"+u, true) == nil {
		requester += ":" + u
	}
	return c.q.approve(ctx, r, requester, c.approvers)
}

func (q *Queue) approve(ctx context.Context, r broker.Request, requester string, approvers []string) (broker.Answer, error) {
	p := Pending{RequestBody: RequestBody{
		Tool:         string(r.Tool),
		Summary:      r.Summary,
		Args:         r.Args,
		Risk:         r.Decision.Risk,
		ActionSHA256: r.ActionSHA256,
		Requester:    requester,
	}, Approvers: approvers}
	if r.Proposal != nil {
		p.Proposal = &Proposal{Scope: r.Proposal.Text, Description: r.Proposal.Words}
	}
	for _, rs := range r.Decision.Reasons {
		p.Reasons = append(p.Reasons, Reason{ID: rs.ID, Msg: rs.Msg})
	}
	id, _, err := q.Submit(p)
	if err != nil {
		return broker.Answer{Result: StatusTimeout, By: "none"}, err
	}
	ans, err := q.Wait(ctx, id)
	if err != nil {
		q.Withdraw(id)
		return broker.Answer{Result: StatusTimeout, By: "none"}, err
	}
	return ans, nil
}

// Submit enqueues p and returns its id and deadline. ID, Created and
// Expires are set by the queue; the other fields are validated.
func (q *Queue) Submit(p Pending) (string, time.Time, error) {
	if err := validate(&p); err != nil {
		return "", time.Time{}, err
	}
	id, err := newID()
	if err != nil {
		return "", time.Time{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.countPendingLocked() >= MaxPending {
		return "", time.Time{}, ErrFull
	}
	now := q.now()
	p.ID = id
	p.Created = now.UTC()
	p.Expires = now.Add(q.ttl).UTC()
	it := &item{p: p, status: StatusPending, done: make(chan struct{})}
	q.items[id] = it
	it.timer = time.AfterFunc(q.ttl, func() { q.expire(id) })
	return id, p.Expires, nil
}

func (q *Queue) countPendingLocked() int {
	n := 0
	for _, it := range q.items {
		if it.status == StatusPending {
			n++
		}
	}
	return n
}

// expire marks a request as timed out, and forgets it after another ttl
// (so that a late decision is still answered "expired", not "unknown").
func (q *Queue) expire(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	it, ok := q.items[id]
	if !ok {
		return
	}
	if it.status == StatusPending {
		it.status, it.by = StatusTimeout, ""
		close(it.done)
	}
	it.timer = time.AfterFunc(q.ttl, func() { q.forget(id) })
}

func (q *Queue) forget(id string) {
	q.mu.Lock()
	delete(q.items, id)
	q.mu.Unlock()
}

// Withdraw ends a request whose requester stopped waiting (its wait
// returns "timeout").
func (q *Queue) Withdraw(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if it, ok := q.items[id]; ok && it.status == StatusPending {
		it.status = StatusTimeout
		close(it.done)
	}
}

// Wait blocks until the request is decided or expires, or ctx ends.
func (q *Queue) Wait(ctx context.Context, id string) (broker.Answer, error) {
	q.mu.Lock()
	it, ok := q.items[id]
	q.mu.Unlock()
	if !ok {
		return broker.Answer{}, ErrUnknown
	}
	select {
	case <-it.done:
	case <-ctx.Done():
		return broker.Answer{}, ctx.Err()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if it.status == StatusTimeout {
		return broker.Answer{Result: StatusTimeout, By: "none"}, nil
	}
	return broker.Answer{Result: it.status, By: it.by, Remember: it.remember}, nil
}

// status reports the state of a request without blocking.
func (q *Queue) status(id string) (status, by string, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	it, ok := q.items[id]
	if !ok {
		return "", "", ErrUnknown
	}
	return it.status, it.by, nil
}

// Pending returns the requests still waiting, oldest first.
func (q *Queue) Pending() []Pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	out := make([]Pending, 0, len(q.items))
	for _, it := range q.items {
		if it.status == StatusPending && now.Before(it.p.Expires) {
			p := it.p
			p.Reasons = append([]Reason(nil), p.Reasons...)
			p.Approvers = slices.Clone(p.Approvers)
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Decide answers request id. decision is "approve" (this action only),
// "approve_conversation" or "approve_grant" (the proposed grant, within
// the conversation or until it expires; only for a request submitted with
// a proposal), or "reject"; approver
// names the human; actionSHA256 must be the digest the request was
// submitted with. A request that expired, was already decided, or is
// unknown is refused, and so is a digest that does not match.
func (q *Queue) Decide(id, decision, approver, actionSHA256 string) error {
	var result, remember string
	switch decision {
	case "approve":
		result, remember = StatusApproved, broker.RememberOnce
	case "approve_conversation":
		result, remember = StatusApproved, broker.RememberConversation
	case "approve_grant":
		result, remember = StatusApproved, broker.RememberGrant
	case "reject":
		result = StatusRejected
	default:
		return fmt.Errorf("%w: decision must be \"approve\", \"approve_conversation\", \"approve_grant\" or \"reject\"", ErrInvalid)
	}
	if err := checkName("approver", approver, true); err != nil {
		return err
	}
	if result == StatusApproved && q.Stopped != nil && q.Stopped() {
		return ErrStopped
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	it, ok := q.items[id]
	if !ok {
		return ErrUnknown
	}
	switch {
	case it.status == StatusTimeout:
		return ErrExpired
	case it.status != StatusPending:
		return ErrAlreadyDecided
	case !q.now().Before(it.p.Expires):
		return ErrExpired
	}
	if subtle.ConstantTimeCompare([]byte(actionSHA256), []byte(it.p.ActionSHA256)) != 1 {
		return ErrDigestMismatch
	}
	if it.p.Approvers != nil && !slices.Contains(it.p.Approvers, approver) {
		return ErrNotAllowed
	}
	if remember != "" && remember != broker.RememberOnce && it.p.Proposal == nil {
		return fmt.Errorf("%w: no grant was offered for this request; approve it once", ErrInvalid)
	}
	it.status, it.by, it.remember = result, approver, remember
	close(it.done)
	if it.timer != nil {
		it.timer.Stop()
	}
	it.timer = time.AfterFunc(q.ttl, func() { q.forget(id) })
	return nil
}

func validate(p *Pending) error {
	if p.Tool == "" || len(p.Tool) > maxToolLen || !printable(p.Tool) {
		return fmt.Errorf("%w: tool must be 1..%d printable characters", ErrInvalid, maxToolLen)
	}
	if len(p.Summary) > maxSummaryLen {
		return fmt.Errorf("%w: summary longer than %d bytes", ErrInvalid, maxSummaryLen)
	}
	if len(p.Args) > broker.MaxArgs || len(p.Args) > 0 && !json.Valid(p.Args) {
		return fmt.Errorf("%w: args must be JSON of at most %d bytes", ErrInvalid, broker.MaxArgs)
	}
	if len(p.Risk) > maxNameLen || !printable(p.Risk) {
		return fmt.Errorf("%w: bad risk", ErrInvalid)
	}
	if len(p.Reasons) > maxReasons {
		return fmt.Errorf("%w: more than %d reasons", ErrInvalid, maxReasons)
	}
	for _, r := range p.Reasons {
		if len(r.ID) > maxReasonLen || len(r.Msg) > maxReasonLen {
			return fmt.Errorf("%w: reason longer than %d bytes", ErrInvalid, maxReasonLen)
		}
	}
	if pr := p.Proposal; pr != nil && (len(pr.Scope) > maxSummaryLen || len(pr.Description) > maxSummaryLen || pr.Scope == "") {
		return fmt.Errorf("%w: proposal must have a scope, each field at most %d bytes", ErrInvalid, maxSummaryLen)
	}
	if !validDigest(p.ActionSHA256) {
		return fmt.Errorf("%w: action_sha256 must be \"sha256:\" and 64 hex digits", ErrInvalid)
	}
	if p.Requester == "" {
		p.Requester = "unknown"
	}
	return checkName("requester", p.Requester, false)
}

func checkName(field, s string, required bool) error {
	if s == "" && !required {
		return nil
	}
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("%w: %s must be 1..%d characters", ErrInvalid, field, maxNameLen)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:@-", c)) {
			return fmt.Errorf("%w: %s may only contain letters, digits and . _ : @ -", ErrInvalid, field)
		}
	}
	return nil
}

func validDigest(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// printable rejects control characters, which could forge lines on the
// approver's terminal.
func printable(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return false
		}
	}
	return true
}

func newID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("no randomness for an approval id: %w", err)
	}
	return "apr_" + hex.EncodeToString(b[:]), nil
}
