package delegate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/clawsec/claw/agent/provider"
)

// ErrBudget means a sub-agent's token budget is spent: its run stops.
var ErrBudget = errors.New("token budget exhausted")

// TokenBudget is a provider whose model calls, together, may use at most
// Max tokens (input and output, as the provider reports them). The call
// that goes over is answered with [ErrBudget] instead of its response,
// so none of the tool calls it asked for runs; every later call is
// refused without reaching the model.
type TokenBudget struct {
	provider.Provider
	Max int

	mu   sync.Mutex
	used int
}

// Chat implements provider.Provider.
func (b *TokenBudget) Chat(ctx context.Context, req provider.ChatRequest) (provider.ChatResponse, error) {
	if used := b.Used(); used >= b.Max {
		return provider.ChatResponse{}, b.spent(used)
	}
	resp, err := b.Provider.Chat(ctx, req)
	if u := resp.Usage; u != nil {
		b.mu.Lock()
		b.used += u.InputTokens + u.OutputTokens
		b.mu.Unlock()
	}
	if err != nil {
		return resp, err
	}
	if used := b.Used(); used > b.Max {
		return provider.ChatResponse{}, b.spent(used)
	}
	return resp, nil
}

// Used is the tokens spent so far.
func (b *TokenBudget) Used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *TokenBudget) spent(used int) error {
	return fmt.Errorf("%w: %d tokens used of %d", ErrBudget, used, b.Max)
}
