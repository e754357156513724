package provider

import (
	"context"
	"encoding/json"
)

// Provider is a model endpoint. Chat sends one request and returns the
// model's complete answer: final text, tool calls, or both. Implementations
// are safe for concurrent use.
type Provider interface {
	// Name is the configured name, used in logs, errors and receipts.
	Name() string
	// Capabilities reports what the provider supports.
	Capabilities() Capabilities
	// Chat sends req and waits for the whole answer. With req.Stream set,
	// text fragments are passed to req.OnDelta as they arrive; the returned
	// ChatResponse is the same either way.
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// Capabilities says what a provider supports.
type Capabilities struct {
	// Tools: the provider accepts tool schemas and returns structured
	// tool calls.
	Tools bool `json:"tools"`
	// Streaming: the provider honours ChatRequest.Stream.
	Streaming bool `json:"streaming"`
	// PromptCaching: the provider marks the stable prefix (system prompt
	// and tools) for caching.
	PromptCaching bool `json:"prompt_caching"`
	// Network: the provider talks to a remote endpoint. The mock does not.
	Network bool `json:"network"`
}

// Role is the author of a message.
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation history.
//
// An assistant message carries the tool calls the model made; each result
// goes back as a RoleTool message whose ToolCallID names the call. IsError
// marks a tool message that reports a failure or a denial, so the model
// can adapt; providers whose wire format has no such flag send the content
// alone.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
}

// ToolCall is one call the model asked for.
//
// Arguments is always valid JSON. A well-behaved model sends an object.
// When a model sends argument text that is not JSON, the text arrives as a
// JSON string, which is not an object, so the caller's argument validation
// rejects it and can tell the model; nothing is dropped or guessed.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSchema describes a tool the model may call. Parameters is a JSON
// Schema for the arguments object; empty means an object with no
// properties.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ChatRequest is one call to a model.
type ChatRequest struct {
	// System is the system prompt. RoleSystem messages in Messages are
	// appended to it.
	System   string
	Messages []Message
	Tools    []ToolSchema
	// Model overrides the provider's configured model when not empty.
	Model string
	// Temperature is sent only when set.
	Temperature *float64
	// MaxTokens caps the length of the answer; 0 means the provider's
	// default (4096 for Anthropic, which requires a value; unset for
	// OpenAI-compatible servers).
	MaxTokens int
	// Metadata carries hints for composite providers (see [Router]); it
	// is never sent to a model endpoint.
	Metadata map[string]string
	// Stream asks for a streamed answer. OnDelta, when set, receives each
	// text fragment in order; it is called from the goroutine running
	// Chat.
	Stream  bool
	OnDelta func(text string)
}

// FinishReason says why the model stopped, normalised across wire formats.
type FinishReason string

// The normalised finish reasons. Any other value is passed through as the
// provider sent it.
const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
)

// Usage is the token accounting a provider reported.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	TotalTokens              int `json:"total_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
}

// ChatResponse is a model's complete answer.
type ChatResponse struct {
	Text      string
	ToolCalls []ToolCall
	// Raw is the response body of a non-streamed call, with the API key
	// redacted should a server ever echo it. Nil for streamed calls.
	Raw          json.RawMessage
	Usage        *Usage
	FinishReason FinishReason
	// Provider is the name of the provider that answered; composite
	// providers report the member that did.
	Provider string
	// Model is the model the server says answered (may differ from the
	// requested alias).
	Model string
}

// Probe makes one small real round trip, for `claw provider test`: a
// single user message, no tools. It returns what the endpoint answered or
// the typed error; [Hint] explains the error to a person.
func Probe(ctx context.Context, p Provider) (ChatResponse, error) {
	return p.Chat(ctx, ChatRequest{
		Messages: []Message{{Role: RoleUser, Content: "Reply with the single word: ok"}},
		Metadata: map[string]string{PurposeKey: PurposeProbe},
	})
}
