package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/textesc"
)

// Bounds of the response bodies the client reads: the list of pending
// requests may hold a full queue, each with arguments of up to
// broker.MaxArgs bytes; every other answer is small.
const (
	maxResponse = 1 << 20
	maxListing  = MaxPending * (broker.MaxArgs + 256<<10)
)

// Client talks to the approvals API of a running claw serve. It
// implements broker.Approver.
type Client struct {
	base  string
	token string
	hc    *http.Client
	// Requester names this client in the requests it submits.
	Requester string
	// Poll is the long-poll timeout of each wait request (DefaultWait if
	// zero).
	Poll time.Duration
}

// NewClient returns a client for target: "unix:/path/claw.sock" or a
// loopback "http://127.0.0.1:PORT". The token is sent as a bearer token;
// it is never sent to a host that is not on this machine.
func NewClient(target, token string) (*Client, error) {
	if token == "" {
		return nil, errors.New("approvals client: empty token")
	}
	c := &Client{token: token, Requester: "client"}
	if path, ok := strings.CutPrefix(target, "unix:"); ok {
		if path == "" {
			return nil, errors.New("approvals client: empty socket path")
		}
		tr := &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", path)
			},
			MaxIdleConns: 4,
		}
		c.base, c.hc = "http://claw", &http.Client{Transport: tr}
		return c, nil
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
		return nil, fmt.Errorf("approvals client: target %q is not unix:/path or http://127.0.0.1:PORT", target)
	}
	if !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("approvals client: %q is not a loopback address", u.Hostname())
	}
	tr := &http.Transport{Proxy: nil, MaxIdleConns: 4}
	c.base, c.hc = "http://"+u.Host, &http.Client{Transport: tr}
	return c, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Approve implements broker.Approver: it submits r and waits for the
// decision. An expired request is Answer{Result: "timeout"}; when ctx
// ends first, ctx's error is returned. Arguments too large for the
// daemon's body limit ([serve].max_body_bytes) are replaced by a note
// that says so, and the request is submitted again.
func (c *Client) Approve(ctx context.Context, r broker.Request) (broker.Answer, error) {
	b := RequestBody{Tool: string(r.Tool), Summary: r.Summary, Args: r.Args, Risk: r.Decision.Risk, ActionSHA256: r.ActionSHA256, Requester: c.Requester}
	for _, rs := range r.Decision.Reasons {
		b.Reasons = append(b.Reasons, Reason{ID: rs.ID, Msg: rs.Msg})
	}
	if r.Proposal != nil {
		b.Proposal = &Proposal{Scope: r.Proposal.Text, Description: r.Proposal.Words}
	}
	id, _, err := c.Submit(ctx, b)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusRequestEntityTooLarge && len(b.Args) > 0 {
		note := fmt.Sprintf("(arguments of %d bytes not sent: more than the daemon accepts)", len(b.Args))
		b.Args, _ = json.Marshal(note)
		id, _, err = c.Submit(ctx, b)
	}
	if err != nil {
		return broker.Answer{Result: StatusTimeout, By: "none"}, err
	}
	for {
		res, err := c.Wait(ctx, id, c.Poll)
		if err != nil {
			if ctx.Err() != nil {
				return broker.Answer{Result: StatusTimeout, By: "none"}, ctx.Err()
			}
			return broker.Answer{Result: StatusTimeout, By: "none"}, err
		}
		switch res.Status {
		case StatusPending:
			continue
		case StatusApproved, StatusRejected:
			return broker.Answer{Result: res.Status, By: res.By, Remember: res.Remember}, nil
		default:
			return broker.Answer{Result: StatusTimeout, By: "none"}, nil
		}
	}
}

// Submit posts a request and returns its id and deadline.
func (c *Client) Submit(ctx context.Context, b RequestBody) (string, time.Time, error) {
	var out struct {
		ID      string    `json:"id"`
		Expires time.Time `json:"expires"`
	}
	if err := c.do(ctx, http.MethodPost, "/approvals/requests", b, http.StatusCreated, maxResponse, &out); err != nil {
		return "", time.Time{}, err
	}
	if out.ID == "" {
		return "", time.Time{}, errors.New("approvals client: the server returned no id")
	}
	return out.ID, out.Expires, nil
}

// Wait long-polls the state of request id for up to d.
func (c *Client) Wait(ctx context.Context, id string, d time.Duration) (WaitResult, error) {
	if d <= 0 {
		d = DefaultWait
	}
	var out WaitResult
	p := "/approvals/" + url.PathEscape(id) + "/wait?timeout=" + url.QueryEscape(d.String())
	if err := c.do(ctx, http.MethodGet, p, nil, http.StatusOK, maxResponse, &out); err != nil {
		return WaitResult{}, err
	}
	switch out.Status {
	case StatusPending, StatusApproved, StatusRejected, StatusTimeout:
	default:
		return WaitResult{}, fmt.Errorf("approvals client: unknown status %q", out.Status)
	}
	return out, nil
}

// Pending lists the requests waiting for a decision.
func (c *Client) Pending(ctx context.Context) ([]Pending, error) {
	var out struct {
		Pending []Pending `json:"pending"`
	}
	if err := c.do(ctx, http.MethodGet, "/approvals", nil, http.StatusOK, maxListing, &out); err != nil {
		return nil, err
	}
	return out.Pending, nil
}

// Decide answers request id ("approve", "approve_conversation",
// "approve_grant" or "reject") as approver, quoting
// the digest of the action being approved.
func (c *Client) Decide(ctx context.Context, id, decision, approver, actionSHA256 string) (string, error) {
	var out struct {
		Result string `json:"result"`
	}
	b := DecideBody{Decision: decision, Approver: approver, ActionSHA256: actionSHA256}
	if err := c.do(ctx, http.MethodPost, "/approvals/"+url.PathEscape(id), b, http.StatusOK, maxResponse, &out); err != nil {
		return "", err
	}
	return out.Result, nil
}

// StatusError is a non-success answer of the server.
type StatusError struct {
	Status  int
	Code    string
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("server answered %d", e.Status)
	}
	return fmt.Sprintf("server answered %d: %s", e.Status, e.Message)
}

// do sends one request and decodes the answer, of at most limit bytes,
// into out.
func (c *Client) do(ctx context.Context, method, path string, body any, want int, limit int64, out any) error {
	var rd io.Reader
	if body != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // arguments are shown to a person as sent
		if err := enc.Encode(body); err != nil {
			return err
		}
		rd = &buf
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("approvals client: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("approvals client: reading the response: %w", err)
	}
	if int64(len(data)) > limit {
		return errors.New("approvals client: response too large")
	}
	if resp.StatusCode != want {
		return parseError(resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("approvals client: malformed response: %w", err)
	}
	return nil
}

// parseError turns an error response into a *StatusError.
func parseError(status int, data []byte) error {
	var e struct {
		Error APIError `json:"error"`
	}
	se := &StatusError{Status: status}
	if json.Unmarshal(data, &e) == nil {
		se.Code = e.Error.Code
		se.Message = sanitizeMsg(e.Error.Message)
	}
	return se
}

// sanitizeMsg keeps a server message printable and short.
func sanitizeMsg(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r < 0xa0 { // C0, DEL and C1 (0x9b is CSI)
			return ' '
		}
		return r
	}, textesc.Prefix(s, 512))
}
