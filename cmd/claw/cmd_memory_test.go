package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/agent/memory"
)

// seedMemory stores two conversations in home's memory file the way the
// agent does, and returns their ids. The first one plants a key in an
// argument; the store redacts it before writing.
func seedMemory(t *testing.T, home string) (aardvark, other string) {
	t.Helper()
	ctx := context.Background()
	st, err := memory.Open(filepath.Join(home, "memory.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c1, err := st.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, c1.ID,
		memory.Message{Role: memory.RoleUser, Content: "remember the Aardvark adapter"},
		memory.Message{Role: memory.RoleAssistant, Content: "Noted: the Aardvark adapter.",
			ToolCalls: []memory.ToolCall{{ID: "call_1", Name: "memory_note", Arguments: json.RawMessage(`{"note":"adapter"}`)}}},
		memory.Message{Role: memory.RoleTool, ToolCallID: "call_1", ToolName: "memory_note", Content: "saved"},
	); err != nil {
		t.Fatal(err)
	}
	c2, err := st.NewConversation(ctx, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, c2.ID,
		memory.Message{Role: memory.RoleUser, Content: "deploying the zebra service"},
		memory.Message{Role: memory.RoleAssistant, Content: "Done."},
	); err != nil {
		t.Fatal(err)
	}
	return c1.ID, c2.ID
}

func TestMemoryCommands(t *testing.T) {
	home := operatorHome(t, "")
	// Nothing stored yet: empty results, and no file is created.
	out, errOut, code := operatorRun(t, home, "memory", "list")
	if code != 0 || out != "" || !strings.Contains(errOut, "no conversations yet") {
		t.Fatalf("empty list: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "memory.sqlite")); err == nil {
		t.Fatal("memory list created the memory file")
	}
	out, _, code = operatorRun(t, home, "memory", "search", "--json", "anything")
	if code != 0 || !strings.Contains(out, `"hits": []`) {
		t.Fatalf("empty search: exit %d\n%s", code, out)
	}

	aardvark, zebra := seedMemory(t, home)

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		notOut   []string
		wantErr  []string
	}{
		{name: "list", args: []string{"list"}, wantOut: []string{aardvark + "  cli ", zebra + "  serve", "remember the Aardvark adapter"}},
		{name: "list json", args: []string{"list", "--json"}, wantOut: []string{`"id": "` + aardvark + `"`, `"messages": 3`, `"title": "remember the Aardvark adapter"`}},
		{name: "list limit", args: []string{"list", "--limit", "1"}, wantOut: []string{zebra}, notOut: []string{aardvark}},
		{name: "search", args: []string{"search", "Aardvark", "adapter"}, wantOut: []string{aardvark, "[Aardvark] [adapter]"}, notOut: []string{zebra}},
		{name: "search stems", args: []string{"search", "deploy"}, wantOut: []string{zebra}},
		{name: "search json", args: []string{"search", "--json", "zebra"}, wantOut: []string{`"conversation_id": "` + zebra + `"`, `"snippet":`}},
		{name: "search no match", args: []string{"search", "unicorn"}, wantErr: []string{`no matches for "unicorn"`}},
		{name: "search fts syntax is text", args: []string{"search", `"unbalanced`, "OR", "NEAR("}, wantErr: []string{"no matches"}},
		{name: "search bad limit", args: []string{"search", "--limit", "1000", "x"}, wantCode: 2},
		{name: "search needs a query", args: []string{"search"}, wantCode: 2},
		{name: "show", args: []string{"show", aardvark}, wantOut: []string{"conversation " + aardvark, "] user", "  remember the Aardvark adapter", "-> memory_note {\"note\":\"adapter\"}", "] tool (memory_note)"}},
		{name: "show prefix", args: []string{"show", aardvark[:8]}, wantOut: []string{"conversation " + aardvark}},
		{name: "show json", args: []string{"show", "--json", zebra}, wantOut: []string{`"channel": "serve"`, `"content": "deploying the zebra service"`}},
		{name: "show unknown", args: []string{"show", "ffffffffffff"}, wantCode: 1, wantErr: []string{"conversation not found", "hint: see 'claw memory list'"}},
		{name: "clear needs yes", args: []string{"clear"}, wantCode: 2, wantErr: []string{"needs --yes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := operatorRun(t, home, append([]string{"memory"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}

	// clear --yes removes everything, and the text is gone from the file.
	_, errOut, code = operatorRun(t, home, "memory", "clear", "--yes")
	if code != 0 || !strings.Contains(errOut, "cleared 2 conversations") {
		t.Fatalf("clear: exit %d: %s", code, errOut)
	}
	out, _, _ = operatorRun(t, home, "memory", "list", "--json")
	if !strings.Contains(out, `"conversations": []`) {
		t.Fatalf("after clear: %s", out)
	}
	for _, f := range []string{"memory.sqlite", "memory.sqlite-wal"} {
		b, _ := os.ReadFile(filepath.Join(home, f))
		if strings.Contains(string(b), "Aardvark") {
			t.Errorf("%s still holds cleared text", f)
		}
	}
}

// TestMemoryRedactsOnOutput: text that reached the file unredacted (an
// older version, another writer) is redacted when printed.
func TestMemoryRedactsOnOutput(t *testing.T) {
	// A key in a variable whose name does not look secret is redacted
	// too, because the config names it as a provider's key.
	t.Setenv("MODEL_ACCESS_X", "zq-unformatted-value-77")
	home := operatorHome(t, "[providers.odd]\nkind = \"openai-compatible\"\napi_key_env = \"MODEL_ACCESS_X\"\nmodel = \"m\"\n")
	ctx := context.Background()
	st, err := memory.Open(filepath.Join(home, "memory.sqlite"), memory.WithRedactor(func(s string) string { return s }))
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.NewConversation(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, c.ID, memory.Message{Role: memory.RoleUser, Content: "my key is " + plantedKey + " keep it, and zq-unformatted-value-77"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, args := range [][]string{
		{"memory", "list"}, {"memory", "list", "--json"},
		{"memory", "show", c.ID}, {"memory", "show", "--json", c.ID},
		{"memory", "search", "key"}, {"memory", "search", "--json", "keep"},
	} {
		out, errOut, code := operatorRun(t, home, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.Contains(out+errOut, "PLANTED") || strings.Contains(out+errOut, "zq-unformatted") {
			t.Errorf("%v leaked the key:\n%s", args, out)
		}
		if !strings.Contains(out, "[REDACTED]") {
			t.Errorf("%v: no redaction marker:\n%s", args, out)
		}
	}
}
