package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"unicode/utf8"
)

// Frame types.
const (
	TypeHello             = "hello"
	TypeHelloAck          = "hello_ack"
	TypeToolCall          = "tool_call"
	TypeToolResult        = "tool_result"
	TypeInbound           = "inbound_message"
	TypePermissionRequest = "permission_request"
	TypePermissionReply   = "permission_reply"
	TypePing              = "ping"
	TypePong              = "pong"
	TypeError             = "error"
)

// Bounds of a client's frame.
const (
	// DefaultReadLimit is the largest frame read (a larger one closes the
	// connection with 1009).
	DefaultReadLimit = 1 << 20
	maxID            = 128
	maxRationale     = 4 << 10
)

// Frame is one frame a client sent, decoded and checked. Type says which
// of the other fields is set.
type Frame struct {
	Type       string
	Hello      *Hello
	ToolCall   *ToolCall
	Permission *PermissionRequest
	TS         int64 // ping, pong
}

// Hello binds a connection to a session.
type Hello struct {
	Session       string `json:"openclaw_session"`
	ClaudeSession string `json:"claude_session,omitempty"`
	PID           int64  `json:"pid,omitempty"`
	Token         string `json:"token"`
}

// ToolCall asks claw to run one of its tools.
type ToolCall struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
}

// PermissionRequest asks the session's approvers about a tool of the
// client's own. Claude Code's own permission notification names its
// fields tool_name, description and input_preview; a client that forwards
// them as they are is understood too (tool_name for tool, description for
// rationale, input_preview shown under args).
type PermissionRequest struct {
	RequestID    string          `json:"request_id"`
	Tool         string          `json:"tool,omitempty"`
	Args         json.RawMessage `json:"args,omitempty"`
	Rationale    string          `json:"rationale,omitempty"`
	ToolName     string          `json:"tool_name,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputPreview string          `json:"input_preview,omitempty"`
}

type tsBody struct {
	TS int64 `json:"ts"`
}

var (
	idRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`) })
	codeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-km-z]{5}$`) })
)

// ErrUnknownType is matched by the error DecodeFrame returns for a frame
// whose type is not one a client sends.
var ErrUnknownType = errors.New("unknown frame type")

// DecodeFrame decodes one client frame strictly: one JSON object of valid
// UTF-8, a known type, no field the type does not have, no trailing data,
// and every field within its bounds (ids of at most 128 letters, digits
// and . _ : -; a permission request id of 5 lowercase letters without l;
// args a JSON object).
func DecodeFrame(data []byte) (Frame, error) {
	if !utf8.Valid(data) {
		return Frame{}, errors.New("frame is not valid UTF-8")
	}
	var head map[string]json.RawMessage
	if err := strict(data, &head); err != nil || head == nil {
		return Frame{}, errors.New("frame is not a JSON object")
	}
	var typ string
	if err := json.Unmarshal(head["type"], &typ); err != nil || typ == "" {
		return Frame{}, errors.New("frame has no type")
	}
	f := Frame{Type: typ}
	var body any
	switch typ {
	case TypeHello:
		f.Hello = &Hello{}
		body = f.Hello
	case TypeToolCall:
		f.ToolCall = &ToolCall{}
		body = f.ToolCall
	case TypePermissionRequest:
		f.Permission = &PermissionRequest{}
		body = f.Permission
	case TypePing, TypePong:
		body = &tsBody{}
	default:
		if len(typ) > 64 || !idRe().MatchString(typ) {
			typ = "(unprintable)"
		}
		return Frame{Type: typ}, fmt.Errorf("%w %q", ErrUnknownType, typ)
	}
	delete(head, "type")
	rest, _ := json.Marshal(head)
	if err := strict(rest, body); err != nil {
		return Frame{}, fmt.Errorf("bad %s frame: %w", typ, err)
	}
	switch typ {
	case TypeHello:
		h := f.Hello
		if !idRe().MatchString(h.Session) || h.ClaudeSession != "" && !idRe().MatchString(h.ClaudeSession) {
			return Frame{}, errors.New("bad hello frame: openclaw_session and claude_session must be 1..128 letters, digits and . _ : -")
		}
		if h.Token == "" || len(h.Token) > 1024 {
			return Frame{}, errors.New("bad hello frame: token must be 1..1024 bytes")
		}
	case TypeToolCall:
		c := f.ToolCall
		if !idRe().MatchString(c.CallID) || !idRe().MatchString(c.Tool) {
			return Frame{}, errors.New("bad tool_call frame: call_id and tool must be 1..128 letters, digits and . _ : -")
		}
		if !isObject(c.Args) {
			return Frame{}, errors.New("bad tool_call frame: args must be a JSON object")
		}
		c.Args = compact(c.Args)
	case TypePermissionRequest:
		p := f.Permission
		if p.Tool == "" {
			p.Tool = p.ToolName
		}
		if p.Rationale == "" {
			p.Rationale = p.Description
		}
		if !codeRe().MatchString(p.RequestID) {
			return Frame{}, errors.New("bad permission_request frame: request_id must be 5 lowercase letters other than l")
		}
		if !idRe().MatchString(p.Tool) || p.ToolName != "" && p.ToolName != p.Tool && !idRe().MatchString(p.ToolName) ||
			len(p.Rationale) > maxRationale || len(p.Description) > maxRationale || len(p.InputPreview) > maxRationale {
			return Frame{}, errors.New("bad permission_request frame: tool must be 1..128 letters, digits and . _ : -, rationale, description and input_preview at most 4 KiB")
		}
		if !isObject(p.Args) {
			return Frame{}, errors.New("bad permission_request frame: args must be a JSON object")
		}
		p.Args = compact(p.Args)
	case TypePing, TypePong:
		f.TS = body.(*tsBody).TS
	}
	return f, nil
}

// Encode is the frame as a client sends it (the inverse of DecodeFrame).
func (f Frame) Encode() []byte {
	var v any
	switch f.Type {
	case TypeHello:
		v = struct {
			Type string `json:"type"`
			*Hello
		}{f.Type, f.Hello}
	case TypeToolCall:
		v = struct {
			Type string `json:"type"`
			*ToolCall
		}{f.Type, f.ToolCall}
	case TypePermissionRequest:
		v = struct {
			Type string `json:"type"`
			*PermissionRequest
		}{f.Type, f.Permission}
	default:
		v = struct {
			Type string `json:"type"`
			TS   int64  `json:"ts"`
		}{f.Type, f.TS}
	}
	b, _ := json.Marshal(v)
	return b
}

// strict decodes one JSON value into v, refusing unknown fields and
// trailing data.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// isObject reports whether raw is absent, null or a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null")) || t[0] == '{'
}

// compact is raw without insignificant space; absent or null is {}.
func compact(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage(`{}`)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t); err != nil {
		return json.RawMessage(`{}`)
	}
	return b.Bytes()
}
