package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Reliable tries its providers in order and returns the first answer.
//
// It moves on to the next provider when one fails in a way another might
// not: a network error, a timeout, [ErrAuth], a rate limit, a 5xx, a
// malformed answer. It stops at once on [ErrBadRequest] (the request
// itself is at fault) and when the caller's context is done. When every
// provider fails it returns the last error. Each fallback is logged at
// warn level with the provider, the error and the next provider. The
// HTTP clients retry a rate limit, a 5xx or a failed connection
// themselves first, within the bounds under Retries in the package doc.
//
// A streamed call that fails after some text was delivered to OnDelta
// falls back all the same: the next provider's fragments follow, and
// ChatResponse.Text is the one answer to keep.
type Reliable struct {
	providers []Provider
	log       *slog.Logger
}

// NewReliable returns a Reliable over providers, which must not be empty.
// A nil logger discards the log.
func NewReliable(log *slog.Logger, providers ...Provider) (*Reliable, error) {
	if len(providers) == 0 {
		return nil, errors.New("reliable provider: no providers")
	}
	for i, p := range providers {
		if p == nil {
			return nil, fmt.Errorf("reliable provider: provider %d is nil", i+1)
		}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reliable{providers: providers, log: log}, nil
}

// Name implements [Provider]: "reliable(a,b,…)".
func (r *Reliable) Name() string {
	names := make([]string, len(r.providers))
	for i, p := range r.providers {
		names[i] = p.Name()
	}
	return "reliable(" + strings.Join(names, ",") + ")"
}

// Capabilities implements [Provider]: what every member supports, since
// any of them may answer.
func (r *Reliable) Capabilities() Capabilities {
	c := r.providers[0].Capabilities()
	for _, p := range r.providers[1:] {
		pc := p.Capabilities()
		c.Tools = c.Tools && pc.Tools
		c.Streaming = c.Streaming && pc.Streaming
		c.PromptCaching = c.PromptCaching && pc.PromptCaching
		c.Network = c.Network || pc.Network
	}
	return c
}

// Providers returns the members in the order they are tried.
func (r *Reliable) Providers() []Provider { return append([]Provider(nil), r.providers...) }

// Chat implements [Provider].
func (r *Reliable) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	var last error
	for i, p := range r.providers {
		start := time.Now()
		resp, err := p.Chat(ctx, req)
		if err == nil {
			if resp.Provider == "" {
				resp.Provider = p.Name()
			}
			return resp, nil
		}
		last = err
		if ctx.Err() != nil || !Retryable(err) {
			return ChatResponse{}, err
		}
		if i+1 < len(r.providers) {
			r.log.WarnContext(ctx, "provider failed, falling back",
				slog.String("provider", p.Name()),
				slog.String("next", r.providers[i+1].Name()),
				slog.String("reason", reason(err)),
				slog.Any("error", err),
				slog.Duration("elapsed", time.Since(start)))
		}
	}
	return ChatResponse{}, fmt.Errorf("all %d providers failed, last: %w", len(r.providers), last)
}

// Retryable reports whether another provider might succeed where err
// failed: everything but a rejected request and a cancelled call.
func Retryable(err error) bool {
	return err != nil && !errors.Is(err, ErrBadRequest) && !errors.Is(err, context.Canceled)
}

// reason is a short, stable word for a failure, for logs and metrics.
func reason(err error) string {
	var rl *RateLimitError
	var se *StatusError
	switch {
	case errors.Is(err, ErrAuth):
		return "auth"
	case errors.As(err, &rl):
		return "rate_limit"
	case errors.Is(err, ErrTimeout):
		return "timeout"
	case errors.Is(err, ErrBadResponse):
		return "bad_response"
	case errors.Is(err, ErrNetwork):
		return "network"
	case errors.As(err, &se):
		return fmt.Sprintf("http_%d", se.StatusCode)
	}
	return "error"
}
