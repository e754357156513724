package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/coder/websocket"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdBridgeClient is the script command "bridgeclient STATUS SESSION
// TOKEN_VAR": a SynthesisAgent client that finds the bridge in a saved GET
// /status answer, says hello with the token in $TOKEN_VAR, calls the time tool
// and a denied shell command, and asks a permission; it prints one line
// per answer and per inbound message.
func cmdBridgeClient(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: bridgeclient STATUS_FILE SESSION TOKEN_VAR")
	}
	var st struct {
		Channels []struct{ Name, Address string }
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &st))
	url := ""
	for _, c := range st.Channels {
		if c.Name == "bridge" {
			url = c.Address
		}
	}
	if url == "" {
		ts.Fatalf("no bridge in %s", args[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	ts.Check(err)
	defer ws.CloseNow()
	send := func(v any) {
		b, _ := json.Marshal(v)
		ts.Check(ws.Write(ctx, websocket.MessageText, b))
	}
	next := func() map[string]any {
		for {
			_, data, err := ws.Read(ctx)
			ts.Check(err)
			var m map[string]any
			ts.Check(json.Unmarshal(data, &m))
			switch m["type"] {
			case "ping":
				send(map[string]any{"type": "pong", "ts": m["ts"]})
			case "inbound_message":
				fmt.Fprintf(ts.Stdout(), "inbound %s %s\n", m["request_id"], m["content"])
			default:
				return m
			}
		}
	}
	send(map[string]any{"type": "hello", "openclaw_session": args[1], "claude_session": "script", "pid": 1, "token": ts.Getenv(args[2])})
	ack := next()
	fmt.Fprintf(ts.Stdout(), "%s tools=%d\n", ack["type"], len(ack["tools"].([]any)))
	for _, f := range []map[string]any{
		{"type": "tool_call", "call_id": "tc_001", "tool": "time", "args": map[string]any{}},
		{"type": "tool_call", "call_id": "tc_002", "tool": "shell", "args": map[string]any{"command": "rm -rf /"}},
		{"type": "permission_request", "request_id": "abxyz", "tool": "Bash", "args": map[string]any{"command": "make test"}, "rationale": "run the tests"},
	} {
		send(f)
		m := next()
		switch m["type"] {
		case "tool_result":
			fmt.Fprintf(ts.Stdout(), "%s ok=%v error=%v\n", m["call_id"], m["ok"], m["error"])
		default:
			fmt.Fprintf(ts.Stdout(), "%s %s %s\n", m["type"], m["request_id"], m["behavior"])
		}
	}
	ws.Close(websocket.StatusNormalClosure, "")
}
