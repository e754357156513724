package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/textesc"
)

// Limits of the REST client.
const (
	maxResponse = 1 << 20
	maxAttempts = 4
	// maxRateWait is the longest rate-limit wait the client sits out; a
	// longer one fails the request instead of holding a reply for hours.
	maxRateWait = 5 * time.Minute
	userAgent   = "DiscordBot (https://github.com/clawsec/claw, 1)"
)

// APIError is an answer of the REST API other than 2xx and 429.
type APIError struct {
	Status  int
	Code    int    // Discord's JSON error code, 0 when there was none
	Message string // Discord's message, cut
}

func (e *APIError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("discord answered %d (code %d: %s)", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("discord answered %d", e.Status)
}

// ErrRateLimited is returned when the API asks for a wait longer than the
// client sits out, or keeps answering 429.
var ErrRateLimited = errors.New("discord rate limit")

// rest is the REST API client: per-route buckets from the X-RateLimit
// headers, a global limit, and a wait on 429 for as long as the answer
// says, on the client's clock.
type rest struct {
	base  string // .../api/v10
	token string
	hc    *http.Client
	clock Clock
	log   *slog.Logger

	mu      sync.Mutex
	routes  map[string]string // route → bucket id
	buckets map[string]bucket // bucket id (or route, before one is known) → state
	global  time.Time         // no request before this
}

type bucket struct {
	remaining int
	reset     time.Time
}

func newREST(base, token string, hc *http.Client, clock Clock, log *slog.Logger) *rest {
	return &rest{base: strings.TrimRight(base, "/"), token: token, hc: hc, clock: clock, log: log,
		routes: map[string]string{}, buckets: map[string]bucket{}}
}

// post sends body to path (route names its rate-limit bucket, e.g.
// "POST /channels/123/messages") and returns the response body.
func (r *rest) do(ctx context.Context, method, path, route string, body any) ([]byte, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	for attempt := 1; ; attempt++ {
		if err := r.wait(ctx, route); err != nil {
			return nil, err
		}
		status, h, data, err := r.send(ctx, method, path, payload)
		if err != nil {
			return nil, err
		}
		r.update(route, h)
		if status != http.StatusTooManyRequests {
			if status/100 != 2 {
				return nil, apiError(status, data)
			}
			return data, nil
		}
		d, global := rateLimit(h, data)
		r.log.Warn("discord rate limit; waiting", "event", "discord_rate_limited", "route", route,
			"retry_after_ms", d.Milliseconds(), "global", global, "scope", h.Get("X-RateLimit-Scope"))
		if d > maxRateWait || attempt >= maxAttempts {
			return nil, fmt.Errorf("%w: %s asked to wait %s (attempt %d)", ErrRateLimited, route, d, attempt)
		}
		r.mu.Lock()
		until := r.clock.Now().Add(d)
		if global {
			r.global = until
		} else {
			r.buckets[r.key(route)] = bucket{remaining: 0, reset: until}
		}
		r.mu.Unlock()
	}
}

func (r *rest) send(ctx context.Context, method, path string, payload []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bot "+r.token)
	req.Header.Set("User-Agent", userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("discord %s %s: %w", method, routeOf(path), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("discord %s %s: %w", method, routeOf(path), err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// wait sits out the global limit and the route's bucket.
func (r *rest) wait(ctx context.Context, route string) error {
	r.mu.Lock()
	now := r.clock.Now()
	until := r.global
	if b, ok := r.buckets[r.key(route)]; ok && b.remaining <= 0 && b.reset.After(until) {
		until = b.reset
	}
	r.mu.Unlock()
	d := until.Sub(now)
	if d <= 0 {
		return nil
	}
	if d > maxRateWait {
		return fmt.Errorf("%w: %s is limited for %s", ErrRateLimited, route, d)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.clock.After(d):
		return nil
	}
}

// update records a response's bucket headers.
func (r *rest) update(route string, h http.Header) {
	rem, err1 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	after, ok := seconds(h.Get("X-RateLimit-Reset-After"))
	if err1 != nil || !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := h.Get("X-RateLimit-Bucket"); id != "" && len(id) <= 64 {
		r.routes[route] = id
	}
	r.buckets[r.key(route)] = bucket{remaining: rem, reset: r.clock.Now().Add(after)}
}

// key is the bucket a route shares; callers hold mu.
func (r *rest) key(route string) string {
	if id, ok := r.routes[route]; ok {
		// buckets are per major parameter (the channel id) too
		return id + " " + route
	}
	return route
}

// rateLimit reads a 429: retry_after (seconds, a float) from the body,
// else the Retry-After header; global from either.
func rateLimit(h http.Header, body []byte) (time.Duration, bool) {
	var b struct {
		RetryAfter *float64 `json:"retry_after"`
		Global     bool     `json:"global"`
	}
	_ = json.Unmarshal(body, &b)
	global := b.Global || strings.EqualFold(h.Get("X-RateLimit-Global"), "true") || h.Get("X-RateLimit-Scope") == "global"
	if b.RetryAfter != nil {
		if d, ok := secondsOf(*b.RetryAfter); ok {
			return d, global
		}
	}
	if d, ok := seconds(h.Get("Retry-After")); ok {
		return d, global
	}
	return time.Second, global // a 429 without a usable wait: a second
}

// seconds parses a non-negative number of seconds, bounded by a day.
func seconds(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, false
	}
	return secondsOf(f)
}

func secondsOf(f float64) (time.Duration, bool) {
	if math.IsNaN(f) || f < 0 || f > 86400 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

func apiError(status int, data []byte) error {
	var b struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &b)
	msg := textesc.Prefix(b.Message, 200)
	return &APIError{Status: status, Code: b.Code, Message: strings.ToValidUTF8(msg, "?")}
}

// routeOf is a path with its ids replaced, for logs and errors.
func routeOf(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if snowflake(p) {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

// sendMessage posts content to a channel; mentions in it ping nobody.
func (r *rest) sendMessage(ctx context.Context, channelID, content string) error {
	path := "/channels/" + channelID + "/messages"
	_, err := r.do(ctx, http.MethodPost, path, "POST "+path, map[string]any{
		"content":          content,
		"allowed_mentions": map[string]any{"parse": []string{}},
	})
	return err
}

// typing shows "claw is typing…" in a channel for ten seconds.
func (r *rest) typing(ctx context.Context, channelID string) error {
	path := "/channels/" + channelID + "/typing"
	_, err := r.do(ctx, http.MethodPost, path, "POST "+path, nil)
	return err
}

// gatewayURL asks where the gateway is (GET /gateway, no token needed).
func (r *rest) gatewayURL(ctx context.Context) (string, error) {
	data, err := r.do(ctx, http.MethodGet, "/gateway", "GET /gateway", nil)
	if err != nil {
		return "", err
	}
	var g struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(data, &g); err != nil || !(strings.HasPrefix(g.URL, "wss://") || strings.HasPrefix(g.URL, "ws://")) {
		return "", errors.New("discord GET /gateway: no usable url in the answer")
	}
	return g.URL, nil
}

// Clock is the time the client waits on: rate limits and reconnection
// backoff. Tests give one that does not sleep.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
