package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
)

// DefaultOpenAIBaseURL is the OpenAI API root; the client appends
// "/chat/completions".
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI is a client for the Chat Completions API and the servers that
// copy it (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter, LiteLLM…).
type OpenAI struct {
	httpBase
}

// NewOpenAI returns an OpenAI-compatible provider. BaseURL includes the
// version segment ("http://127.0.0.1:11434/v1" for Ollama).
func NewOpenAI(c HTTPConfig) (*OpenAI, error) {
	b, err := newHTTPBase(c, "openai", DefaultOpenAIBaseURL)
	if err != nil {
		return nil, err
	}
	return &OpenAI{b}, nil
}

// Capabilities implements [Provider].
func (p *OpenAI) Capabilities() Capabilities {
	return Capabilities{Tools: true, Streaming: true, Network: true}
}

// The request wire format.
type oaRequest struct {
	Model               string           `json:"model"`
	Messages            []oaMessage      `json:"messages"`
	Tools               []oaTool         `json:"tools,omitempty"`
	Temperature         *float64         `json:"temperature,omitempty"`
	MaxCompletionTokens int              `json:"max_completion_tokens,omitempty"`
	Stream              bool             `json:"stream,omitempty"`
	StreamOptions       *oaStreamOptions `json:"stream_options,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaTool struct {
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	} `json:"function"`
}

// The response wire format, shared by whole responses and stream chunks.
type oaResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int            `json:"index"`
		Message      *oaRespMessage `json:"message"`
		Delta        *oaRespMessage `json:"delta"`
		FinishReason *string        `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsageBody    `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type oaRespMessage struct {
	Content   json.RawMessage `json:"content"`
	Refusal   *string         `json:"refusal"`
	ToolCalls []oaToolCall    `json:"tool_calls"`
}

func ptr(s string) *string { return &s }

func (p *OpenAI) buildRequest(req ChatRequest) ([]byte, error) {
	model, err := p.modelFor(req)
	if err != nil {
		return nil, err
	}
	w := oaRequest{Model: model, Temperature: req.Temperature, MaxCompletionTokens: req.MaxTokens}
	system := systemPrompt(req)
	if system != "" {
		w.Messages = append(w.Messages, oaMessage{Role: "system", Content: ptr(system)})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			// folded into the system prompt
		case RoleUser:
			w.Messages = append(w.Messages, oaMessage{Role: "user", Content: ptr(m.Content)})
		case RoleAssistant:
			om := oaMessage{Role: "assistant"}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				om.Content = ptr(m.Content)
			}
			for _, tc := range m.ToolCalls {
				var c oaToolCall
				c.ID, c.Type, c.Function.Name = tc.ID, "function", tc.Name
				args, _ := json.Marshal(string(normalizeArgs(tc.Arguments)))
				c.Function.Arguments = args
				om.ToolCalls = append(om.ToolCalls, c)
			}
			w.Messages = append(w.Messages, om)
		case RoleTool:
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("provider %q: %w: message %d: tool result without tool_call_id", p.name, ErrBadRequest, i)
			}
			w.Messages = append(w.Messages, oaMessage{Role: "tool", Content: ptr(m.Content), ToolCallID: m.ToolCallID})
		default:
			return nil, fmt.Errorf("provider %q: %w: message %d: unknown role %q", p.name, ErrBadRequest, i, m.Role)
		}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, oaTool{Type: "function", Function: oaFunction{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Parameters)}})
	}
	if req.Stream {
		w.Stream = true
		w.StreamOptions = &oaStreamOptions{IncludeUsage: true}
	}
	return json.Marshal(w)
}

// systemPrompt joins ChatRequest.System and any system messages.
func systemPrompt(req ChatRequest) string {
	s := req.System
	for _, m := range req.Messages {
		if m.Role == RoleSystem && m.Content != "" {
			if s != "" {
				s += "\n\n"
			}
			s += m.Content
		}
	}
	return s
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(s) == 0 || string(s) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return s
}

// Chat implements [Provider]: POST {BaseURL}/chat/completions.
func (p *OpenAI) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	body, err := p.buildRequest(req)
	if err != nil {
		return ChatResponse{}, err
	}
	return p.chat(ctx, req, body, dialect{
		path:      "/chat/completions",
		keyHeader: "Authorization",
		keyPrefix: "Bearer ",
		decode:    decodeOpenAI,
		stream:    p.readStream,
	})
}

// decodeOpenAI decodes a whole (non-streamed) chat completion.
func decodeOpenAI(name string, data []byte) (ChatResponse, error) {
	var r oaResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return ChatResponse{}, badResponse(name, "response is not a chat completion: %s", jsonErr(err))
	}
	if err := oaInlineError(name, r.Error); err != nil {
		return ChatResponse{}, err
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil {
		return ChatResponse{}, badResponse(name, "response has no choices")
	}
	c := r.Choices[0]
	out := ChatResponse{Model: r.Model}
	text, err := oaContent(c.Message.Content)
	if err != nil {
		return ChatResponse{}, badResponse(name, "%s", err)
	}
	out.Text = text
	if out.Text == "" && c.Message.Refusal != nil {
		out.Text = *c.Message.Refusal
	}
	for i, tc := range c.Message.ToolCalls {
		if tc.Function.Name == "" {
			return ChatResponse{}, badResponse(name, "tool call %d has no name", i)
		}
		args := normalizeArgs(tc.Function.Arguments)
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	fillCallIDs(r.ID, out.ToolCalls)
	if c.FinishReason != nil {
		out.FinishReason = oaFinish(*c.FinishReason)
	}
	out.Usage = oaUsage(r.Usage)
	return out, nil
}

// oaInlineError reports an error object some servers send with status
// 200, or inside a stream.
func oaInlineError(name string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	typ, msg := errorBody([]byte(`{"error":` + string(raw) + `}`))
	var obj struct {
		Code json.RawMessage `json:"code"`
	}
	_ = json.Unmarshal(raw, &obj)
	code, _ := strconv.Atoi(string(obj.Code))
	if code < 400 || code > 599 {
		code = statusForType(typ)
	}
	if code == http.StatusTooManyRequests {
		return &RateLimitError{Provider: name, Message: excerpt(msg)}
	}
	return &StatusError{Provider: name, StatusCode: code, Type: excerpt(typ), Message: excerpt(msg)}
}

// statusForType maps an error type reported in a body or an event to the
// HTTP status it stands for.
func statusForType(typ string) int {
	switch typ {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error", "invalid_api_key":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota":
		return http.StatusTooManyRequests
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError
}

// oaContent reads message content: a string, null, or an array of parts
// of which the text parts are joined.
func oaContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("message content is neither text nor parts")
	}
	for _, p := range parts {
		s += p.Text
	}
	return s, nil
}

func oaFinish(s string) FinishReason {
	if s == "function_call" {
		return FinishToolCalls
	}
	return FinishReason(s)
}

// oaUsageBody is the usage of a chat completion, whole or streamed.
type oaUsageBody struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func oaUsage(u *oaUsageBody) *Usage {
	if u == nil {
		return nil
	}
	out := &Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	if u.PromptTokensDetails != nil {
		out.CacheReadInputTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

// fillCallIDs gives every call without an id a stable one, derived from
// the response id, the call's position, name and arguments, so that the
// same response always yields the same ids.
func fillCallIDs(respID string, calls []ToolCall) {
	seen := map[string]bool{}
	for i := range calls {
		if calls[i].ID != "" && !seen[calls[i].ID] {
			seen[calls[i].ID] = true
			continue
		}
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", respID, i, calls[i].Name)
		h.Write(calls[i].Arguments)
		calls[i].ID = "call_" + hex.EncodeToString(h.Sum(nil))[:24]
		seen[calls[i].ID] = true
	}
}

// oaPartial accumulates one streamed tool call.
type oaPartial struct {
	id, name string
	args     []byte
	object   json.RawMessage // arguments sent as an object in one piece
}

// readStream consumes a chat.completion.chunk stream.
func (p *OpenAI) readStream(body io.Reader, onDelta func(string)) (ChatResponse, error) {
	sse := p.openStream(body)
	s := &oaStream{p: p, onDelta: onDelta, calls: map[int]*oaPartial{}}
	for {
		ev, err := p.nextEvent(sse)
		if errors.Is(err, io.EOF) {
			if !s.finished {
				return ChatResponse{}, badResponse(p.name, "stream ended before [DONE]")
			}
			break
		}
		if err != nil {
			return ChatResponse{}, err
		}
		if ev.Data == "[DONE]" {
			break
		}
		if err := s.event(ev); err != nil {
			return ChatResponse{}, err
		}
	}
	return s.result()
}

// oaStream is a chat.completion.chunk stream being read.
type oaStream struct {
	p        *OpenAI
	onDelta  func(string)
	out      ChatResponse
	respID   string
	text     []byte
	calls    map[int]*oaPartial
	size     int64 // of the text and the calls' arguments
	finished bool
}

// event takes one chunk of the stream.
func (s *oaStream) event(ev sseEvent) error {
	name := s.p.name
	if ev.Type == "error" {
		typ, msg := errorBody([]byte(ev.Data))
		return oaInlineError(name, mustJSON(map[string]string{"type": typ, "message": msg}))
	}
	var chunk oaResponse
	if err := json.Unmarshal([]byte(ev.Data), &chunk); err != nil {
		return badResponse(name, "stream chunk is not JSON: %s", jsonErr(err))
	}
	if err := oaInlineError(name, chunk.Error); err != nil {
		return err
	}
	if s.respID == "" {
		s.respID = chunk.ID
	}
	if chunk.Model != "" {
		s.out.Model = chunk.Model
	}
	if u := oaUsage(chunk.Usage); u != nil {
		s.out.Usage = u
	}
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			s.out.FinishReason = oaFinish(*c.FinishReason)
			s.finished = true
		}
		d := c.Delta
		if d == nil {
			d = c.Message
		}
		if d == nil {
			continue
		}
		if err := s.delta(d); err != nil {
			return err
		}
	}
	return nil
}

// delta takes the first choice's text and tool calls of a chunk.
func (s *oaStream) delta(d *oaRespMessage) error {
	t, err := oaContent(d.Content)
	if err != nil {
		return badResponse(s.p.name, "%s", err)
	}
	if t != "" {
		s.size += int64(len(t))
		s.text = append(s.text, t...)
		if s.onDelta != nil {
			s.onDelta(t)
		}
	}
	for n, tc := range d.ToolCalls {
		if err := s.toolCall(n, tc); err != nil {
			return err
		}
	}
	if s.size > s.p.max {
		return s.p.streamTooLarge()
	}
	return nil
}

// toolCall adds the n-th tool call piece of a chunk to its call.
func (s *oaStream) toolCall(n int, tc oaToolCall) error {
	idx := n
	if tc.Index != nil {
		idx = *tc.Index
	}
	if idx < 0 || idx > 1024 {
		return badResponse(s.p.name, "tool call index %d out of range", idx)
	}
	pc := s.calls[idx]
	if pc == nil {
		pc = &oaPartial{}
		s.calls[idx] = pc
	}
	if tc.ID != "" {
		pc.id = tc.ID
	}
	if tc.Function.Name != "" {
		pc.name = tc.Function.Name
	}
	a := tc.Function.Arguments
	var str string
	switch {
	case len(a) == 0 || string(a) == "null":
	case json.Unmarshal(a, &str) == nil:
		pc.args = append(pc.args, str...)
		s.size += int64(len(str))
	default:
		pc.object = append(json.RawMessage(nil), a...)
		s.size += int64(len(a))
	}
	return nil
}

// result is the whole answer, its tool calls in index order.
func (s *oaStream) result() (ChatResponse, error) {
	out := s.out
	out.Text = string(s.text)
	idxs := make([]int, 0, len(s.calls))
	for i := range s.calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		pc := s.calls[i]
		if pc.name == "" {
			return ChatResponse{}, badResponse(s.p.name, "streamed tool call %d has no name", i)
		}
		args := argsFromText(string(pc.args))
		if pc.object != nil {
			args = normalizeArgs(pc.object)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: pc.id, Name: pc.name, Arguments: args})
	}
	fillCallIDs(s.respID, out.ToolCalls)
	if out.FinishReason == "" {
		out.FinishReason = FinishStop
		if len(out.ToolCalls) > 0 {
			out.FinishReason = FinishToolCalls
		}
	}
	return out, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// jsonErr describes a decoding error without quoting the input.
func jsonErr(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q has the wrong type (%s)", te.Field, te.Value)
	}
	return "invalid JSON"
}
