package mcpgate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawsec/claw/internal/broker"
)

// BenchmarkCall compares one tools/call made to an upstream directly with
// the same call through the proxy (gate decision, two durable receipts,
// forward, rebuilt result), and claw's in-process time tool.
func BenchmarkCall(b *testing.B) {
	args := map[string]any{"msg": "hi"}
	b.Run("direct", func(b *testing.B) {
		up, _ := upstream(b, "echoes")
		for b.Loop() {
			if _, err := up.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proxy", func(b *testing.B) {
		r := newRig(b, "full")
		pins, _ := OpenPins(filepath.Join(r.root, "mcp-pins.json"))
		cs, _ := proxied(b, r, pins, "echoes")
		for b.Loop() {
			if res := call(b, cs, "up__echo", args); res.IsError {
				b.Fatal(text(res))
			}
		}
	})
	b.Run("serve_time", func(b *testing.B) {
		r := newRig(b, "full")
		cs := connect(b, NewServer(broker.New(r.cfg), Options{}))
		for b.Loop() {
			if res := call(b, cs, "time", map[string]any{}); res.IsError {
				b.Fatal(text(res))
			}
		}
	})
}
