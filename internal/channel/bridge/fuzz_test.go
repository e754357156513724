package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeFrame: whatever a client sends, DecodeFrame either refuses it
// or returns a frame of a type a client sends whose fields are within
// their bounds, that encodes to JSON which decodes to the same frame; and
// only valid UTF-8 JSON objects are accepted.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","openclaw_session":"s1","claude_session":"u-1","pid":12345,"token":"t"}`,
		`{"type":"tool_call","call_id":"tc_001","tool":"pcexec","args":{"a":[1,2,{"b":null}]}}`,
		`{"type":"tool_call","call_id":"tc_001","tool":"time"}`,
		`{"type":"permission_request","request_id":"abxyz","tool":"Bash","args":{"command":"ls"},"rationale":"r"}`,
		`{"type":"ping","ts":1700000000000}`, `{"type":"pong","ts":-1}`,
		`{"type":"launch"}`, `{"type":"hello","token":""}`, `{"type":"ping","ts":1}{}`, `{"type":"ping","ts":1.5}`,
		`{"type":"tool_call","call_id":"a","tool":"b","args":[1]}`, "{\"type\":\"ping\",\"ts\":1,\"x\":\"\xff\"}",
		`{"type":"permission_request","request_id":"abxyl","tool":"Bash"}`, `null`,
		`{"type":"permission_request","request_id":"abxyz","tool_name":"Write","description":"d","input_preview":"{}"}`, `{"type":"tool_call","type":"hello"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := DecodeFrame(data)
		if err != nil {
			if errors.Is(err, ErrUnknownType) && fr.Type == "" {
				t.Fatalf("unknown type error without the type: %v", err)
			}
			return
		}
		if !utf8.Valid(data) || !json.Valid(data) || bytes.TrimSpace(data)[0] != '{' {
			t.Fatalf("accepted %q", data)
		}
		switch fr.Type {
		case TypeHello:
			h := fr.Hello
			if h == nil || !idRe().MatchString(h.Session) || h.Token == "" || len(h.Token) > 1024 {
				t.Fatalf("hello out of bounds: %+v", h)
			}
		case TypeToolCall:
			c := fr.ToolCall
			if c == nil || !idRe().MatchString(c.CallID) || !idRe().MatchString(c.Tool) || !json.Valid(c.Args) || c.Args[0] != '{' {
				t.Fatalf("tool_call out of bounds: %+v", c)
			}
		case TypePermissionRequest:
			p := fr.Permission
			if p == nil || !codeRe().MatchString(p.RequestID) || !idRe().MatchString(p.Tool) || len(p.Rationale) > maxRationale ||
				len(p.InputPreview) > maxRationale || !json.Valid(p.Args) || p.Args[0] != '{' {
				t.Fatalf("permission_request out of bounds: %+v", p)
			}
		case TypePing, TypePong:
		default:
			t.Fatalf("accepted type %q", fr.Type)
		}
		again, err := DecodeFrame(fr.Encode())
		if err != nil {
			t.Fatalf("re-encoded frame %s does not decode: %v", fr.Encode(), err)
		}
		if !reflect.DeepEqual(again, fr) {
			t.Fatalf("round trip changed the frame:\n%+v\n%+v", fr, again)
		}
	})
}
