package runtime

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/serve"
)

// DaemonTarget is the daemon a client command talks to: target, or the
// configured socket when "", with the token of [serve] token_file.
func DaemonTarget(e *Env, target string) (string, string, error) {
	if target == "" {
		target = "unix:" + e.Config.Serve.Socket
	}
	token, err := serve.LoadToken(e.Config.Serve.TokenFile)
	if err != nil {
		return "", "", WithCode(ExitError, err, "run 'claw init' to create the token file")
	}
	return target, token, nil
}

// DaemonApproverIf is [DaemonApprover] when target is given, and nil
// without one: an action the policy asks about is then refused.
func DaemonApproverIf(env func() (*Env, error), target, tokenFile, requester string) (broker.Approver, error) {
	if target == "" {
		return nil, nil
	}
	cl, err := DaemonApprover(env, target, tokenFile, requester)
	if err != nil {
		return nil, err // not a nil *approvals.Client in an Approver
	}
	return cl, nil
}

// DaemonApprover is the approvals client of the daemon at target
// (unix:/path/claw.sock or http://127.0.0.1:PORT), with the token read
// from tokenFile (default [serve].token_file, of the config env loads),
// asking as requester.
func DaemonApprover(env func() (*Env, error), target, tokenFile, requester string) (*approvals.Client, error) {
	// A malformed or non-loopback target is a usage error, before any file.
	if _, err := approvals.NewClient(target, "-"); err != nil {
		return nil, WithCode(ExitUsage, err)
	}
	path := tokenFile
	if path == "" {
		e, err := env()
		if err != nil {
			return nil, err
		}
		path = e.Config.Serve.TokenFile
	}
	token, err := serve.LoadToken(path)
	if err != nil {
		return nil, WithCode(ExitError, err, "run 'claw init' to create the token file, or pass --token-file")
	}
	cl, err := approvals.NewClient(target, token)
	if err != nil {
		return nil, WithCode(ExitUsage, err)
	}
	cl.Requester = requester
	return cl, nil
}

// ServeCall sends one request to the daemon at target.
func ServeCall(ctx context.Context, target, token, method, path, accept string, body []byte) (int, []byte, error) {
	hc := &http.Client{Timeout: 5 * time.Minute}
	base := target
	if sock, ok := strings.CutPrefix(target, "unix:"); ok {
		hc.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}
		base = "http://claw"
	} else if err := serve.CheckLoopback(strings.TrimPrefix(strings.TrimPrefix(target, "http://"), "https://")); err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, strings.ToUpper(method), base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, data, err
}
