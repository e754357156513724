package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
)

// DefaultAnthropicBaseURL is the Anthropic API root; the client appends
// "/v1/messages".
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// AnthropicVersion is the anthropic-version header the client sends.
const AnthropicVersion = "2023-06-01"

// defaultAnthropicMaxTokens is sent when ChatRequest.MaxTokens is 0: the
// Messages API requires a value.
const defaultAnthropicMaxTokens = 4096

// Anthropic is a client for the Messages API.
type Anthropic struct {
	httpBase
}

// NewAnthropic returns an Anthropic Messages provider. BaseURL is the API
// root without the version segment.
func NewAnthropic(c HTTPConfig) (*Anthropic, error) {
	b, err := newHTTPBase(c, "anthropic", DefaultAnthropicBaseURL)
	if err != nil {
		return nil, err
	}
	return &Anthropic{b}, nil
}

// Capabilities implements [Provider].
func (p *Anthropic) Capabilities() Capabilities {
	return Capabilities{Tools: true, Streaming: true, PromptCaching: true, Network: true}
}

type anCache struct {
	Type string `json:"type"`
}

var ephemeral = &anCache{Type: "ephemeral"}

// anBlock is a request content block: text, tool_use or tool_result.
type anBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      string          `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *anCache        `json:"cache_control,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *anCache        `json:"cache_control,omitempty"`
}

type anRequest struct {
	Model       string      `json:"model"`
	MaxTokens   int         `json:"max_tokens"`
	System      []anBlock   `json:"system,omitempty"`
	Tools       []anTool    `json:"tools,omitempty"`
	Messages    []anMessage `json:"messages"`
	Temperature *float64    `json:"temperature,omitempty"`
	Stream      bool        `json:"stream,omitempty"`
}

type anUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

type anRespBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type anResponse struct {
	ID         string        `json:"id"`
	Type       string        `json:"type"`
	Model      string        `json:"model"`
	Content    []anRespBlock `json:"content"`
	StopReason *string       `json:"stop_reason"`
	Usage      *anUsage      `json:"usage"`
	Error      *anError      `json:"error"`
}

func (p *Anthropic) buildRequest(req ChatRequest) ([]byte, error) {
	model, err := p.modelFor(req)
	if err != nil {
		return nil, err
	}
	w := anRequest{Model: model, MaxTokens: req.MaxTokens, Temperature: req.Temperature, Stream: req.Stream}
	if w.MaxTokens <= 0 {
		w.MaxTokens = defaultAnthropicMaxTokens
	}
	// The stable prefix is tools, then system; a cache breakpoint on the
	// last tool and on the system block covers both (2 of the 4 allowed).
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Parameters)})
	}
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral
	}
	if s := systemPrompt(req); s != "" {
		w.System = []anBlock{{Type: "text", Text: s, CacheControl: ephemeral}}
	}
	add := func(role string, blocks ...anBlock) {
		if n := len(w.Messages); n > 0 && w.Messages[n-1].Role == role {
			w.Messages[n-1].Content = append(w.Messages[n-1].Content, blocks...)
			return
		}
		w.Messages = append(w.Messages, anMessage{Role: role, Content: blocks})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
		case RoleUser:
			if m.Content != "" {
				add("user", anBlock{Type: "text", Text: m.Content})
			}
		case RoleAssistant:
			var blocks []anBlock
			if m.Content != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: objectArgs(tc.Arguments)})
			}
			if len(blocks) > 0 {
				add("assistant", blocks...)
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("provider %q: %w: message %d: tool result without tool_call_id", p.name, ErrBadRequest, i)
			}
			add("user", anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content, IsError: m.IsError})
		default:
			return nil, fmt.Errorf("provider %q: %w: message %d: unknown role %q", p.name, ErrBadRequest, i, m.Role)
		}
	}
	// tool_result blocks must open the user message that carries them.
	for i := range w.Messages {
		if w.Messages[i].Role == "user" {
			sort.SliceStable(w.Messages[i].Content, func(a, b int) bool {
				return w.Messages[i].Content[a].Type == "tool_result" && w.Messages[i].Content[b].Type != "tool_result"
			})
		}
	}
	if w.Messages == nil {
		w.Messages = []anMessage{}
	}
	return json.Marshal(w)
}

// objectArgs returns arguments as a JSON object, which tool_use.input
// must be; anything else is kept under "_raw" so the history stays true.
func objectArgs(raw json.RawMessage) json.RawMessage {
	a := normalizeArgs(raw)
	if a[0] == '{' {
		return a
	}
	return mustJSON(map[string]json.RawMessage{"_raw": a})
}

// Chat implements [Provider]: POST {BaseURL}/v1/messages.
func (p *Anthropic) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	body, err := p.buildRequest(req)
	if err != nil {
		return ChatResponse{}, err
	}
	return p.chat(ctx, req, body, dialect{
		path:      "/v1/messages",
		headers:   map[string]string{"anthropic-version": AnthropicVersion},
		keyHeader: "x-api-key",
		decode:    decodeAnthropic,
		stream:    p.readStream,
	})
}

// decodeAnthropic decodes a whole (non-streamed) Messages response.
func decodeAnthropic(name string, data []byte) (ChatResponse, error) {
	var r anResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return ChatResponse{}, badResponse(name, "response is not a message: %s", jsonErr(err))
	}
	if r.Type == "error" || r.Error != nil {
		return ChatResponse{}, anEventError(name, r.Error)
	}
	if r.Type != "message" {
		return ChatResponse{}, badResponse(name, "response type %q is not a message", excerpt(r.Type))
	}
	out := ChatResponse{Model: r.Model}
	for i, b := range r.Content {
		switch b.Type {
		case "text":
			out.Text += b.Text
		case "tool_use":
			if b.Name == "" {
				return ChatResponse{}, badResponse(name, "tool_use block %d has no name", i)
			}
			out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: normalizeArgs(b.Input)})
		}
	}
	fillCallIDs(r.ID, out.ToolCalls)
	if r.StopReason != nil {
		out.FinishReason = anFinish(*r.StopReason)
	}
	out.Usage = anToUsage(r.Usage)
	return out, nil
}

func anFinish(s string) FinishReason {
	switch s {
	case "end_turn", "stop_sequence":
		return FinishStop
	case "tool_use":
		return FinishToolCalls
	case "max_tokens":
		return FinishLength
	case "refusal":
		return FinishContentFilter
	}
	return FinishReason(s)
}

func anToUsage(u *anUsage) *Usage {
	if u == nil {
		return nil
	}
	return &Usage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		TotalTokens:              u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens, CacheReadInputTokens: u.CacheReadInputTokens,
	}
}

// anEventError turns an error object (a body or a stream event) into the
// package's error types.
func anEventError(name string, e *anError) error {
	if e == nil {
		e = &anError{Type: "api_error"}
	}
	code := statusForType(e.Type)
	if code == http.StatusTooManyRequests {
		return &RateLimitError{Provider: name, Message: excerpt(e.Message)}
	}
	return &StatusError{Provider: name, StatusCode: code, Type: excerpt(e.Type), Message: excerpt(e.Message)}
}

type anEvent struct {
	Type         string       `json:"type"`
	Message      *anResponse  `json:"message"`
	Index        int          `json:"index"`
	ContentBlock *anRespBlock `json:"content_block"`
	Delta        *struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
	Error *anError `json:"error"`
}

// anPartial accumulates one streamed content block.
type anPartial struct {
	typ, id, name string
	input         json.RawMessage // from content_block_start
	json          []byte          // from input_json_delta
}

// readStream consumes a Messages event stream.
func (p *Anthropic) readStream(body io.Reader, onDelta func(string)) (ChatResponse, error) {
	sse := p.openStream(body)
	s := &anStream{p: p, onDelta: onDelta, blocks: map[int]*anPartial{}}
	for !s.stopped {
		ev, err := p.nextEvent(sse)
		if errors.Is(err, io.EOF) {
			return ChatResponse{}, badResponse(p.name, "stream ended before message_stop")
		}
		if err != nil {
			return ChatResponse{}, err
		}
		var e anEvent
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return ChatResponse{}, badResponse(p.name, "stream event %q is not JSON: %s", excerpt(ev.Type), jsonErr(err))
		}
		if e.Type == "" {
			e.Type = ev.Type
		}
		if err := s.event(&e); err != nil {
			return ChatResponse{}, err
		}
	}
	return s.result()
}

// anStream is a Messages event stream being read.
type anStream struct {
	p       *Anthropic
	onDelta func(string)
	out     ChatResponse
	msgID   string
	text    []byte
	blocks  map[int]*anPartial
	size    int64 // of the text and the tool inputs
	usage   anUsage
	started bool
	stopped bool
}

// event takes one event of the stream.
func (s *anStream) event(e *anEvent) error {
	switch e.Type {
	case "ping":
	case "error":
		return anEventError(s.p.name, e.Error)
	case "message_start":
		if e.Message == nil {
			return badResponse(s.p.name, "message_start without a message")
		}
		s.started = true
		s.msgID, s.out.Model = e.Message.ID, e.Message.Model
		if e.Message.Usage != nil {
			s.usage = *e.Message.Usage
		}
	case "content_block_start":
		return s.blockStart(e)
	case "content_block_delta":
		return s.blockDelta(e)
	case "content_block_stop":
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != nil {
			s.out.FinishReason = anFinish(*e.Delta.StopReason)
		}
		if e.Usage != nil {
			s.usage.OutputTokens = e.Usage.OutputTokens
			if e.Usage.InputTokens > 0 {
				s.usage.InputTokens = e.Usage.InputTokens
			}
		}
	case "message_stop":
		s.stopped = true
	default:
		// New event types are ignored, as the API's versioning
		// policy asks of clients.
	}
	return nil
}

// blockStart begins a content block, with the text it may start with.
func (s *anStream) blockStart(e *anEvent) error {
	if e.ContentBlock == nil || e.Index < 0 || e.Index > 1024 {
		return badResponse(s.p.name, "content_block_start without a valid block")
	}
	b := &anPartial{typ: e.ContentBlock.Type, id: e.ContentBlock.ID, name: e.ContentBlock.Name, input: e.ContentBlock.Input}
	s.blocks[e.Index] = b
	if b.typ == "text" && e.ContentBlock.Text != "" {
		s.text = append(s.text, e.ContentBlock.Text...)
		s.size += int64(len(e.ContentBlock.Text))
		if s.onDelta != nil {
			s.onDelta(e.ContentBlock.Text)
		}
	}
	return nil
}

// blockDelta adds text or tool input to a content block.
func (s *anStream) blockDelta(e *anEvent) error {
	b := s.blocks[e.Index]
	if b == nil || e.Delta == nil {
		return badResponse(s.p.name, "content_block_delta for unknown block %d", e.Index)
	}
	switch e.Delta.Type {
	case "text_delta":
		s.text = append(s.text, e.Delta.Text...)
		s.size += int64(len(e.Delta.Text))
		if s.onDelta != nil && e.Delta.Text != "" {
			s.onDelta(e.Delta.Text)
		}
	case "input_json_delta":
		b.json = append(b.json, e.Delta.PartialJSON...)
		s.size += int64(len(e.Delta.PartialJSON))
	}
	if s.size > s.p.max {
		return s.p.streamTooLarge()
	}
	return nil
}

// result is the whole answer, its tool calls in block order.
func (s *anStream) result() (ChatResponse, error) {
	if !s.started {
		return ChatResponse{}, badResponse(s.p.name, "stream has no message_start")
	}
	out := s.out
	out.Text = string(s.text)
	idxs := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		b := s.blocks[i]
		if b.typ != "tool_use" {
			continue
		}
		if b.name == "" {
			return ChatResponse{}, badResponse(s.p.name, "streamed tool_use block %d has no name", i)
		}
		args := argsFromText(string(b.json))
		if len(b.json) == 0 {
			args = normalizeArgs(b.input)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: args})
	}
	fillCallIDs(s.msgID, out.ToolCalls)
	out.Usage = anToUsage(&s.usage)
	return out, nil
}
