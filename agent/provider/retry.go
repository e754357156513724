package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The retry policy of the HTTP clients. A request is sent again only when
// nothing of its answer has reached the caller: the status line said 429,
// 500, 502, 503, 504 or 529, or the connection failed before a response
// came. A stream that fails after it began is never sent again, nor is a
// request the endpoint refused (400, 401, 403, 404…), nor one whose
// context is done.
const (
	// maxRetries is how many times one Chat call sends its request
	// again, so a call makes at most maxRetries+1 attempts.
	maxRetries = 2
	// maxRetryAfter is the longest wait a server's retry-after may ask
	// for and still be waited out. A longer one ends the call at once
	// with the error (a [RateLimitError] carrying the wait), so that
	// [Reliable] can fall back without delay and a person learns how long
	// to wait.
	maxRetryAfter = 10 * time.Second
	// retryJitter spreads each backoff wait by up to ±20%, so that
	// clients turned away together do not come back together.
	retryJitter = 0.2
	// maxHeaderDelay bounds the retry-after values that are read at all;
	// anything longer is treated as unusable.
	maxHeaderDelay = 24 * time.Hour
)

// retryBackoff is the wait before each retry when the server names none,
// before jitter: 500 ms, then 1.5 s. It is a variable so that tests can
// shorten it.
var retryBackoff = [maxRetries]time.Duration{500 * time.Millisecond, 1500 * time.Millisecond}

// failure is one attempt that ended before anything of the answer reached
// the caller.
type failure struct {
	err error
	// retry: a later attempt may succeed (a retryable status, or no
	// response at all).
	retry bool
	// status is the HTTP status, 0 when no response came.
	status int
	// after is the server's retry-after; hasAfter says whether it sent
	// one (a "0" is a request to retry at once).
	after    time.Duration
	hasAfter bool
}

// retryableStatus reports whether a status line alone says the request
// may succeed later: rate limited, or a server or gateway failure
// (529 is Anthropic's "overloaded").
func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// retryWait returns how long to wait before sending the request again
// after attempt (counted from 1) failed with f, and false when it must
// not be sent again: f is final, the retries are used up, the context is
// done, the server asks for more than maxRetryAfter, or the context's
// deadline would pass before the wait ends.
func retryWait(ctx context.Context, attempt int, f *failure) (time.Duration, bool) {
	if !f.retry || attempt > maxRetries || ctx.Err() != nil {
		return 0, false
	}
	wait := jitter(retryBackoff[attempt-1])
	if f.hasAfter {
		if f.after > maxRetryAfter {
			return 0, false
		}
		wait = f.after
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
		return 0, false
	}
	return wait, true
}

// jitter spreads d by up to ±retryJitter.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (1 + retryJitter*(2*rand.Float64()-1)))
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// logRetry records one retry at warn level: the provider, why, which
// attempt failed and the wait. The error text is the redacted excerpt
// every error carries; the request is never logged.
func (b *httpBase) logRetry(ctx context.Context, attempt int, f *failure, wait time.Duration) {
	why := "network"
	if f.status == http.StatusTooManyRequests {
		why = "rate_limit"
	} else if f.status != 0 {
		why = "http_" + strconv.Itoa(f.status)
	}
	msg := f.err.Error()
	if f.status == 0 {
		var ue *url.Error
		if errors.As(f.err, &ue) {
			msg = ue.Err.Error()
		}
		msg = excerpt(msg, b.key)
	}
	attrs := []slog.Attr{
		slog.String("provider", b.name),
		slog.String("reason", why),
	}
	if f.status != 0 {
		attrs = append(attrs, slog.Int("status", f.status))
	}
	attrs = append(attrs,
		slog.String("error", msg),
		slog.Int("attempt", attempt),
		slog.Int("max_attempts", maxRetries+1),
		slog.Duration("wait", wait))
	b.log.LogAttrs(ctx, slog.LevelWarn, "provider request failed, retrying", attrs...)
}

// retryAfter reads how long the server asks the client to wait:
// retry-after-ms (milliseconds, which OpenAI sends) when present and
// usable, else retry-after (seconds or an HTTP date). ok is false when
// neither is.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err == nil && n >= 0 && n <= float64(maxHeaderDelay/time.Millisecond) {
			return time.Duration(n * float64(time.Millisecond)), true
		}
	}
	return parseDelay(h.Get("Retry-After"), now)
}

// parseDelay reads a retry-after value: delay-seconds or an HTTP date. A
// date already past is a delay of 0. ok is false when the value is
// absent, negative, beyond a day or not a delay at all.
func parseDelay(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if !(n >= 0 && n <= maxHeaderDelay.Seconds()) { // NaN too
			return 0, false
		}
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d > maxHeaderDelay {
			return 0, false
		}
		return max(d, 0).Round(time.Second), true
	}
	return 0, false
}

// hopeless reports a failure to connect that another attempt a second
// later cannot fix: a host name that does not resolve, or a certificate
// that does not verify. Those fail at once, so a reliable provider falls
// back without waiting out the retries.
func hopeless(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return true
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify)
}
