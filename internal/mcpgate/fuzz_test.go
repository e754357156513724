package mcpgate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
)

// FuzzDecodePins: an accepted pins file is one JSON value of at most
// maxPinsBytes, of version 1, with a servers map, and what save writes of
// it decodes to the same pins; a refused one is the zero pinFile; decoding
// is deterministic.
func FuzzDecodePins(f *testing.F) {
	f.Add([]byte(`{"version":1,"servers":{"fs":{"stat":{"digest":"sha256:00","description":"d","input_schema":{"type":"object"},"seen":"2026-11-23T10:00:00Z"}}}}`))
	f.Add([]byte(`{"version":1,"servers":{"fs":{"stat":{"digest":"a","description":"","input_schema":null,"seen":"2026-11-23T10:00:00Z","pending":{"digest":"b","description":"x","input_schema":{},"seen":"2026-11-23T10:00:00Z"}}}}}`))
	f.Add([]byte(`{"version":1,"servers":{"fs":null,"x":{"t":{"title":"<&>","input_schema":[ 1.50, "\u00e9" ],"seen":"2026-11-23T10:00:00.123456789+05:30"}}}}`))
	f.Add([]byte(`{"version":1,"servers":{}}]`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1} {}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := decodePins(data)
		again, err2 := decodePins(data)
		if (err == nil) != (err2 == nil) || !cmp.Equal(pf, again) {
			t.Fatalf("decodePins(%q) is not deterministic: %v, %v", data, err, err2)
		}
		if err != nil {
			if pf.Version != 0 || pf.Servers != nil {
				t.Fatalf("refused %q came back as %+v", data, pf)
			}
			return
		}
		if len(data) > maxPinsBytes || !json.Valid(data) || pf.Version != 1 || pf.Servers == nil {
			t.Fatalf("accepted %q as %+v", data, pf)
		}
		saved, err := json.MarshalIndent(pf, "", "  ") // as save writes it
		if err != nil {
			t.Fatalf("pins decoded from %q cannot be saved: %v", data, err)
		}
		back, err := decodePins(saved)
		if err != nil {
			t.Fatalf("saved pins %s do not decode: %v", saved, err)
		}
		if diff := cmp.Diff(normalPins(pf), normalPins(back), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("saving changed the pins (-decoded +saved):\n%s", diff)
		}
	})
}

// normalPins returns pf with its input schemas in one encoding: saving
// compacts them, escapes <, > and &, and writes a missing one as null.
func normalPins(pf pinFile) pinFile {
	norm := func(d Definition) Definition {
		var v any
		if len(d.InputSchema) > 0 && json.Unmarshal(d.InputSchema, &v) != nil {
			return d
		}
		d.InputSchema, _ = json.Marshal(v)
		return d
	}
	out := pinFile{Version: pf.Version, Servers: map[string]map[string]Pin{}}
	for server, tools := range pf.Servers {
		out.Servers[server] = map[string]Pin{}
		for name, pin := range tools {
			p := Pin{Definition: norm(pin.Definition)}
			if pin.Pending != nil {
				d := norm(*pin.Pending)
				p.Pending = &d
			}
			out.Servers[server][name] = p
		}
	}
	return out
}

// FuzzParseArgs: an accepted call is the tool named (its JSON form) with
// exactly the properties of the arguments object, each with its value,
// numbers as float64; arguments cannot add keys around the object; a
// refused call is the zero Action; parsing is deterministic.
func FuzzParseArgs(f *testing.F) {
	f.Add("shell", []byte(`{"command":"ls"}`))
	f.Add("http", []byte(`{"url":"https://example.com","headers":{"a":"b"}}`))
	f.Add("tool", []byte(`null`))
	f.Add("tool", []byte(``))
	f.Add("tool", []byte(`{"a":1e400}`))
	f.Add("x", []byte(`{"a":1}, "tool":"shell"`))
	f.Add("x", []byte(`{"a":1}}, "tool":"shell", "args":{`))
	f.Add("x", []byte(`[]`))
	f.Add("", []byte(`{}`))
	f.Add("sh\xffell", []byte(" \n{\"a\":[1,2.5,-0,{\"b\":null}],\"a\":true} \t"))
	f.Fuzz(func(t *testing.T, tool string, raw []byte) {
		a, err := parseArgs(tool, raw)
		again, err2 := parseArgs(tool, raw)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(a, again) {
			t.Fatalf("parseArgs(%q, %q) is not deterministic: %v, %v", tool, raw, err, err2)
		}
		if err != nil {
			if a.Tool != "" || a.Args != nil {
				t.Fatalf("refused %q %q came back as %+v", tool, raw, a)
			}
			return
		}
		var name string
		b, _ := json.Marshal(tool)
		if json.Unmarshal(b, &name) != nil || a.Tool != toolkind.Kind(name) || name == "" {
			t.Fatalf("tool %q became %q", tool, a.Tool)
		}
		doc := bytes.TrimSpace(raw)
		if len(doc) == 0 || string(doc) == "null" {
			doc = []byte("{}")
		}
		if len(raw) > gate.MaxActionBytes || !json.Valid(doc) || doc[0] != '{' {
			t.Fatalf("parseArgs(%q, %q) accepted what is not one JSON object", tool, raw)
		}
		var props map[string]json.RawMessage
		if err := json.Unmarshal(doc, &props); err != nil || len(props) != len(a.Args) {
			t.Fatalf("parseArgs(%q, %q) = %v, the object has %d properties (%v)", tool, raw, a.Args, len(props), err)
		}
		for k, rv := range props {
			v, ok := a.Args[k]
			if !ok {
				t.Fatalf("parseArgs(%q, %q) lost %q", tool, raw, k)
			}
			var want any
			if json.Unmarshal(rv, &want) == nil && !reflect.DeepEqual(v, want) {
				t.Fatalf("parseArgs(%q, %q): %q = %#v, want %#v", tool, raw, k, v, want)
			}
		}
	})
}

// FuzzProxiedPayload: an accepted payload is one made by rebuild
// (mcp_proxied set) and encodes back to itself; a refused one is the zero
// payload. The result given to the client has the payload's error flag
// and its text, image and audio blocks in order (nothing else); images
// and audio unchanged; each text whole, or a prefix cut on a rune boundary
// followed by a note that says how much was shown; at most limit bytes of
// text in all, and none cut when all of it fits.
func FuzzProxiedPayload(f *testing.F) {
	f.Add([]byte(`{"mcp_proxied":true,"content":[{"type":"text","text":"hi"}]}`), uint16(1<<10))
	f.Add([]byte(`{"mcp_proxied":true,"is_error":true,"content":[{"type":"image","data":"AAAA","mime_type":"image/png"}]}`), uint16(0))
	f.Add([]byte(`{"mcp_proxied":true,"content":[{"type":"text","text":"éé€"},{"type":"audio","data":""},{"type":"video"},{"type":"text","text":"abc"},{"type":"text","text":""}]}`), uint16(4))
	f.Add([]byte(`{"mcp_proxied":true,"content":null}`), uint16(1))
	f.Add([]byte(`{"mcp_proxied":false,"content":[]}`), uint16(1))
	f.Add([]byte(`{"now":"x"}`), uint16(1))
	f.Fuzz(func(t *testing.T, raw []byte, limit16 uint16) {
		limit := int(limit16)
		p, ok := proxiedPayload(json.RawMessage(raw))
		if !ok {
			if !reflect.DeepEqual(p, payload{}) {
				t.Fatalf("refused %q came back as %+v", raw, p)
			}
			return
		}
		if !p.Proxied {
			t.Fatalf("accepted %q without mcp_proxied", raw)
		}
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		back, ok := proxiedPayload(enc)
		if !ok {
			t.Fatalf("payload %s does not decode", enc)
		}
		if diff := cmp.Diff(p, back, cmp.AllowUnexported(payload{}, item{}), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("payload changed when encoded as %s (-decoded +again):\n%s", enc, diff)
		}
		res := p.result(limit)
		if res.Content == nil || res.IsError != p.IsError {
			t.Fatalf("result %+v of %+v", res, p)
		}
		var blocks []item
		all := 0
		for _, it := range p.Content {
			switch it.Type {
			case "text", "image", "audio":
				blocks = append(blocks, it)
			}
			if it.Type == "text" {
				all += len(it.Text)
			}
		}
		if len(res.Content) != len(blocks) {
			t.Fatalf("%d blocks for %d shown items of %+v", len(res.Content), len(blocks), p)
		}
		shown := 0
		for i, c := range res.Content {
			in := blocks[i]
			switch c := c.(type) {
			case *mcp.TextContent:
				if in.Type != "text" || !utf8.ValidString(c.Text) {
					t.Fatalf("block %d: text %q for %+v", i, c.Text, in)
				}
				if c.Text == in.Text {
					shown += len(in.Text)
					continue
				}
				at := strings.LastIndex(c.Text, "\n[truncated: ")
				if at < 0 || at > len(in.Text) || c.Text[:at] != in.Text[:at] ||
					c.Text[at:] != fmt.Sprintf("\n[truncated: %d of %d bytes shown]", at, len(in.Text)) {
					t.Fatalf("block %d: %q is neither %q nor a prefix of it with a note", i, c.Text, in.Text)
				}
				k := at
				shown += k
			case *mcp.ImageContent:
				if in.Type != "image" || !bytes.Equal(c.Data, in.Data) || c.MIMEType != in.MIMEType {
					t.Fatalf("block %d: image %+v for %+v", i, c, in)
				}
			case *mcp.AudioContent:
				if in.Type != "audio" || !bytes.Equal(c.Data, in.Data) || c.MIMEType != in.MIMEType {
					t.Fatalf("block %d: audio %+v for %+v", i, c, in)
				}
			default:
				t.Fatalf("block %d is a %T", i, c)
			}
		}
		if shown > limit || all <= limit && shown != all {
			t.Fatalf("%d of %d bytes of text shown with a limit of %d", shown, all, limit)
		}
	})
}
