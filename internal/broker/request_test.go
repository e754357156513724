package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clawsec/claw/gate"
)

// plantedKey has the form of an Anthropic key, which the redactor knows.
var plantedKey = "sk-ant-api03-" + strings.Repeat("PLANTEDkey0", 9)[:90]

// askedPass records the passphrase requests and types a wrong answer.
type askedPass struct{ asked []Request }

func (p *askedPass) AskPassphrase(_ context.Context, r Request) (string, error) {
	p.asked = append(p.asked, r)
	return "not the passphrase", nil
}

// TestRequestArgs: an approver is shown the action's arguments, with the
// planted key redacted, each string bounded, and the request bound to
// the digest of the whole action as the decision receipt records it.
func TestRequestArgs(t *testing.T) {
	content := "line one\n" + plantedKey + "\n" + strings.Repeat("z", 100<<10)
	tests := []struct {
		name    string
		action  gate.Action
		want    []string // substrings of Args
		wantCut bool
	}{
		{name: "shell", action: sh("rm -rf gone && echo 'x-api-key: " + plantedKey + "' && echo '<done>'"),
			want: []string{`{"command":"rm -rf gone && echo 'x-api-key: [REDACTED]' && echo '<done>'"}`}},
		// a write outside the workspace, where workspace_only = false
		// allows it, is what asks at supervised
		{name: "file_write", action: gate.Action{Tool: "file_write", Args: map[string]any{"path": "../notes.txt", "content": content}},
			want: []string{`{"content":"line one\n[REDACTED]\nzzz`, `"path":"../notes.txt"}`}, wantCut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			approver := &fixedApprover{answer: Answer{Result: "rejected", By: "cli:test"}}
			r := newRigWith(t, "supervised", func(p *gate.Policy) { p.WorkspaceOnly = false }, func(c *Config) { c.Approver = approver })
			out, err := r.b.Invoke(context.Background(), tt.action, "")
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != StatusRejected || len(approver.asked) != 1 {
				t.Fatalf("status %s, asked %d times, want rejected after one ask", out.Status, len(approver.asked))
			}
			req := approver.asked[0]
			checkShown(t, req.Args, tt.want, tt.wantCut)
			for _, b := range r.bodies(t, out.ActionID) {
				if b.Action != nil && b.Action.ActionSHA256 != req.ActionSHA256 {
					t.Errorf("request digest %s, decision receipt %s", req.ActionSHA256, b.Action.ActionSHA256)
				}
			}
			if req.ActionSHA256 != actionDigest(tt.action, out.Decision) {
				t.Errorf("request digest %s is not the digest of the whole action", req.ActionSHA256)
			}
		})
	}
	t.Run("passphrase", func(t *testing.T) {
		asker := &askedPass{}
		r := passRig(t, hashOf(t, plantedPass), asker, "", nil)
		out, err := r.b.Invoke(context.Background(), sh("mkdir made && echo "+plantedKey), "")
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != StatusRejected || len(asker.asked) != 1 {
			t.Fatalf("status %s, asked %d times", out.Status, len(asker.asked))
		}
		checkShown(t, asker.asked[0].Args, []string{`{"command":"mkdir made && echo [REDACTED]"}`}, false)
	})
}

// checkShown fails unless args is valid JSON within the bounds, holds
// every want and not the planted key, and is cut when wantCut says so.
func checkShown(t *testing.T, args json.RawMessage, want []string, wantCut bool) {
	t.Helper()
	s := string(args)
	if !json.Valid(args) || len(args) > MaxArgs {
		t.Fatalf("Args is not JSON of at most %d bytes (%d bytes): %.300s", MaxArgs, len(args), s)
	}
	if strings.Contains(s, plantedKey[:20]) {
		t.Errorf("Args holds the planted key: %.300s", s)
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("Args = %.300s…, want it to hold %s", s, w)
		}
	}
	if cut := strings.Contains(s, " more bytes cut]"); cut != wantCut {
		t.Errorf("Args cut = %v, want %v", cut, wantCut)
	}
	var m map[string]any
	if json.Unmarshal(args, &m) == nil {
		for k, v := range m {
			if s, ok := v.(string); ok && len(s) > MaxArgString+64 {
				t.Errorf("Args[%q] is %d bytes, more than %d and a marker", k, len(s), MaxArgString)
			}
		}
	}
}

func TestShownArgs(t *testing.T) {
	big := strings.Repeat("b", 100<<10)
	many := map[string]any{}
	for i := range 10 {
		many[fmt.Sprintf("k%d", i)] = big
	}
	numbers := make([]any, 100000)
	for i := range numbers {
		numbers[i] = 1234567
	}
	long := strings.Repeat("k", 300)
	fill := make([]any, 300) // cuts every string to the shortest
	for i := range fill {
		fill[i] = strings.Repeat("f", 2<<10)
	}
	tests := []struct {
		name   string
		args   map[string]any
		want   string // the whole of Args, when set
		hold   []string
		isText bool // Args is a JSON string, the start of the arguments' text
	}{
		{name: "no arguments", args: nil, want: `{}`},
		{name: "sorted, compact, html kept", args: map[string]any{"path": "a<b>&c", "content": "x\ny"}, want: `{"content":"x\ny","path":"a<b>&c"}`},
		{name: "numbers kept", args: map[string]any{"n": 1234567890123456789, "f": 1.5, "b": true, "z": nil}, want: `{"b":true,"f":1.5,"n":1234567890123456789,"z":null}`},
		{name: "secret-named keys", args: map[string]any{"url": "https://x", "headers": map[string]any{"Authorization": "Basic dXNlcjpwYXNz", "X-Api-Key": "abc123", "Cookie": "s=1", "Accept": "text/plain"}},
			want: `{"headers":{"Accept":"text/plain","Authorization":"[REDACTED]","Cookie":"[REDACTED]","X-Api-Key":"[REDACTED]"},"url":"https://x"}`},
		{name: "secret in a key", args: map[string]any{plantedKey: "v"}, want: `{"[REDACTED]":"v"}`},
		{name: "redacted keys collide", args: map[string]any{plantedKey: 1, plantedKey + "x": 1}, want: `{"[REDACTED]":1,"[REDACTED] (2)":1}`},
		{name: "cut keys collide", args: map[string]any{"a": map[string]any{long + "1": 1, long + "2": 1}, "fill": fill},
			hold: []string{`more bytes cut]":1,"k`, `more bytes cut] (2)":1}`}},
		{name: "many long strings", args: many, hold: []string{`"k0":"bbb`, `"k9":"bbb`, " more bytes cut]"}},
		{name: "anything under a secret-named key", args: map[string]any{"password": map[string]any{"value": "hunter2"}, "Authorization": []any{map[string]any{"v": "Basic dXNlcjpwYXNz"}}, "headers": map[string]any{"X-Api-Key": 123456789}},
			want: `{"Authorization":"[REDACTED]","headers":{"X-Api-Key":"[REDACTED]"},"password":"[REDACTED]"}`},
		{name: "passphrase and pass", args: map[string]any{"passphrase": "correct horse", "auth": map[string]any{"pass": "p4ss", "user": "u"}, "compass": "north"},
			want: `{"auth":"[REDACTED]","compass":"north","passphrase":"[REDACTED]"}`},
		{name: "header pairs", args: map[string]any{"headers": []any{[]any{"Authorization", "Basic dXNlcjpwYXNz"}, []any{"Accept", "x"}}},
			want: `{"headers":[["Authorization","[REDACTED]"],["Accept","x"]]}`},
		{name: "structure too large", args: map[string]any{"numbers": numbers}, hold: []string{`"{\"numbers\":[1234567,`, " more bytes cut]"}, isText: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			got := shownArgs(raw, Redact)
			if tt.want != "" && string(got) != tt.want {
				t.Errorf("shownArgs = %s, want %s", got, tt.want)
			}
			if !json.Valid(got) || len(got) > MaxArgs {
				t.Fatalf("shownArgs is not JSON of at most %d bytes (%d bytes)", MaxArgs, len(got))
			}
			for _, h := range tt.hold {
				if !strings.Contains(string(got), h) {
					t.Errorf("shownArgs = %.300s…, want it to hold %s", got, h)
				}
			}
			if isText := got[0] == '"'; isText != tt.isText {
				t.Errorf("shownArgs is a string: %v, want %v", isText, tt.isText)
			}
			if strings.Contains(string(got), plantedKey) {
				t.Errorf("shownArgs holds the planted key")
			}
		})
	}
}

// TestShownArgsManyCollisions: thousands of keys that all redact to the
// same text (a model can send them) are all kept, each numbered once.
func TestShownArgsManyCollisions(t *testing.T) {
	headers := map[string]any{}
	for i := range 5000 {
		headers[fmt.Sprintf("%s%d", plantedKey, i)] = "v"
	}
	raw, err := json.Marshal(map[string]any{"headers": headers})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Headers map[string]string }
	if err := json.Unmarshal(shownArgs(raw, Redact), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Headers) != 5000 || got.Headers["[REDACTED] (5000)"] != "v" || got.Headers["[REDACTED]"] != "v" {
		t.Fatalf("%d keys kept, want 5000 numbered up to (5000)", len(got.Headers))
	}
}

// FuzzShownArgs: whatever a model writes as arguments, Args is valid JSON
// within MaxArgs, and never holds a recognisable key.
func FuzzShownArgs(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `[1,2]`, `{"a":{"password":[1,{"x":"y"}]}}`, `{"h":[["Cookie","c"]]}`, `"` + plantedKey + `"`, `{"` + plantedKey + `":1}`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := shownArgs(b, Redact)
		if !json.Valid(got) || len(got) > MaxArgs {
			t.Fatalf("shownArgs(%q) = %q: not JSON of at most %d bytes", b, got, MaxArgs)
		}
		if strings.Contains(string(got), plantedKey) {
			t.Fatalf("shownArgs(%q) holds the planted key", b)
		}
	})
}
