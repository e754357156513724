package mcpgate

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func FuzzDecodePins(f *testing.F) {
	f.Add([]byte(`{"version":1,"servers":{"fs":{"stat":{"digest":"sha256:00","description":"d","input_schema":{"type":"object"},"seen":"2026-11-23T10:00:00Z"}}}}`))
	f.Add([]byte(`{"version":1,"servers":{"fs":{"stat":{"digest":"a","description":"","input_schema":null,"seen":"2026-11-23T10:00:00Z","pending":{"digest":"b","description":"x","input_schema":{},"seen":"2026-11-23T10:00:00Z"}}}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1} {}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := decodePins(data)
		if err != nil {
			return
		}
		if pf.Version != 1 || pf.Servers == nil {
			t.Fatalf("accepted %+v", pf)
		}
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("shell", []byte(`{"command":"ls"}`))
	f.Add("http", []byte(`{"url":"https://example.com","headers":{"a":"b"}}`))
	f.Add("tool", []byte(`null`))
	f.Add("tool", []byte(`{"a":1e400}`))
	f.Add("x", []byte(`{"a":1}, "tool":"shell"`))
	f.Add("x", []byte(`[]`))
	f.Fuzz(func(t *testing.T, tool string, raw []byte) {
		a, err := parseArgs(tool, raw)
		if err != nil {
			return
		}
		if (utf8.ValidString(tool) && a.Tool != tool) || a.Args == nil {
			t.Fatalf("tool %q became %q (args %v)", tool, a.Tool, a.Args)
		}
	})
}

func FuzzProxiedPayload(f *testing.F) {
	f.Add([]byte(`{"mcp_proxied":true,"content":[{"type":"text","text":"hi"}]}`))
	f.Add([]byte(`{"mcp_proxied":true,"is_error":true,"content":[{"type":"image","data":"AAAA","mime_type":"image/png"}]}`))
	f.Add([]byte(`{"now":"x"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, ok := proxiedPayload(json.RawMessage(raw))
		if !ok {
			return
		}
		res := p.result(1 << 10)
		if res.Content == nil {
			t.Fatal("nil content")
		}
	})
}
