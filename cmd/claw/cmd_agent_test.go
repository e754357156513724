package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/termtest"
)

// agentHome makes a claw home with a signing key, a workspace and cfg
// (appended to the basics) as its config.
func agentHome(t *testing.T, cfg string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	home := operatorHome(t, "workspace_dir = \""+ws+"\"\n"+cfg+"\n[sandbox]\nrun_as = \"\"\n")
	if _, stderr, code := operatorRun(t, home, "keys", "generate", "--unencrypted"); code != 0 {
		t.Fatalf("keys generate: %s", stderr)
	}
	return home
}

// A provider that times out falls back to the next one, and the fallback is
// logged.
func TestAgentReliableFallback(t *testing.T) {
	t.Setenv("LLM_ACCESS", plantedKey)
	t.Setenv("CLAW_LOG", "json")
	srv := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		select { // never answers in time
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	home := agentHome(t, `default_provider = "main"
[providers.slow]
kind = "openai-compatible"
base_url = "`+srv.URL+`/v1"
api_key_env = "LLM_ACCESS"
model = "m"
timeout = "300ms"
[providers.local]
kind = "mock"
[providers.main]
kind = "reliable"
fallbacks = ["slow", "local"]
`)
	stdout, stderr, code := operatorRun(t, home, "agent", "-m", "hello fallback")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.TrimSpace(stdout) != "You said: hello fallback" {
		t.Errorf("stdout = %q", stdout)
	}
	if !strings.Contains(stderr, `"msg":"provider failed, falling back"`) || !strings.Contains(stderr, `"provider":"slow"`) {
		t.Errorf("fallback not logged:\n%s", stderr)
	}
	if strings.Contains(stdout+stderr, plantedKey) {
		t.Error("the key leaked into the output")
	}
}

// The planted key is used (the fake server checks it) and appears nowhere:
// output, logs, receipts, memory, the REPL history, tool output the model
// sees, config show.
func TestAgentKeyNeverLeaks(t *testing.T) {
	requireSandboxForTest(t)
	t.Setenv("LLM_ACCESS", plantedKey)
	t.Setenv("CLAW_LOG", "json:debug")
	var mu sync.Mutex
	var seen []string // what the model was sent
	calls := 0
	srv := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		w.Header().Set("Content-Type", "application/json")
		if calls == 1 {
			io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shell","arguments":"{\"command\":\"echo k=$LLM_ACCESS; echo done\"}"}}]}}]}`)
			return
		}
		// a server that echoes the key back in its answer
		io.WriteString(w, `{"id":"c2","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"all done; your key is `+plantedKey+`"}}]}`)
	})
	// record the bodies the model received
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		seen = append(seen, string(b))
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		inner.ServeHTTP(w, r)
	})
	home := agentHome(t, `default_provider = "remote"
[security]
autonomy = "full"
[providers.remote]
kind = "openai-compatible"
base_url = "`+srv.URL+`/v1"
api_key_env = "LLM_ACCESS"
model = "m"
`)
	stdout, stderr, code := operatorRun(t, home, "agent", "--json", "-m", "run the check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Reply     string
		ToolCalls []struct{ Status string } `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !strings.HasPrefix(res.Reply, "all done; your key is ") || len(res.ToolCalls) != 1 || res.ToolCalls[0].Status != "ok" {
		t.Fatalf("turn = %+v", res)
	}
	mu.Lock()
	sent := strings.Join(seen, "\n")
	mu.Unlock()
	if !strings.Contains(sent, `k=\n`) && !strings.Contains(sent, `k=\\n`) {
		t.Errorf("the shell ran without the empty variable in its output; the model saw:\n%s", sent)
	}
	for _, ev := range []string{"startup", "provider_selected", "channel_started", "conversation_started", "tool_requested", "tool_completed", "receipt_written", "memory_persisted"} {
		if !strings.Contains(stderr, `"event":"`+ev+`"`) {
			t.Errorf("no %s event in the log", ev)
		}
	}
	show, _, _ := operatorRun(t, home, "config", "show")
	everything := stdout + stderr + sent + show
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), plantedKey) {
			t.Errorf("the key is in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(everything, plantedKey) || strings.Contains(everything, "PLANTED") {
		t.Errorf("the key leaked into output, logs, the model's input or config show")
	}
}

// requireSandboxForTest skips without Landlock and seccomp, unless
// CLAW_REQUIRE_SANDBOX says the sandbox must be there.
func requireSandboxForTest(t *testing.T) {
	t.Helper()
	if os.Getenv("CLAW_REQUIRE_SANDBOX") == "" && !runtime.SandboxUsable() {
		t.Skip("no Landlock/seccomp on this kernel")
	}
}

// The config validates tools_allow against its own list: it must be the
// tool package's.
func TestConfigToolNamesMatch(t *testing.T) {
	if got, want := strings.Join(config.ToolNames, ","), strings.Join(tool.Names(), ","); got != want {
		t.Fatalf("config.ToolNames = %s, want %s", got, want)
	}
}

// tools_allow limits what the model is offered on a channel.
func TestAgentToolsAllow(t *testing.T) {
	home := agentHome(t, "[channels.cli]\ntools_allow = [\"time\"]\n")
	stdout, stderr, code := operatorRun(t, home, "agent", "--json", "-m", "which files are here?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// the mock still proposes file_list; the loop offered only time, and
	// the call comes back as an unknown-to-this-channel tool error
	if !strings.Contains(stdout, `"status": "invalid"`) || !strings.Contains(stdout, "not offered") {
		t.Errorf("file_list was not refused:\n%s", stdout)
	}
}

// A streaming provider's text is printed as it arrives, with control
// characters escaped, so a model cannot redraw the terminal.
func TestAgentStreams(t *testing.T) {
	t.Setenv("LLM_ACCESS", plantedKey)
	streamed := false
	srv := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		streamed = true
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{"Hel", "lo, \u001b[2J", "world"} {
			b, _ := json.Marshal(part)
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":`+string(b)+`},"finish_reason":null}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	})
	home := agentHome(t, `default_provider = "remote"
[providers.remote]
kind = "openai-compatible"
base_url = "`+srv.URL+`/v1"
api_key_env = "LLM_ACCESS"
model = "m"
`)
	stdout, stderr, code := operatorRun(t, home, "agent", "-m", "hi")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !streamed {
		t.Fatal("the request did not reach the server")
	}
	if stdout != "Hello, \\x1b[2Jworld\n" {
		t.Errorf("stdout = %q", stdout)
	}
}

// While the model is slow to answer, claw agent -m on a terminal shows the
// spinner on standard error, erases it before the reply, and keeps it out
// of standard output. Fails if the spinner is not drawn on a terminal (the
// script agent_once_tty checks that it is never drawn off one).
func TestAgentSpinnerOnTerminal(t *testing.T) {
	script := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(script, []byte("default:\n  delay: 600ms\n  reply: \"You said: {{user}}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := agentHome(t, "default_provider = \"local\"\n[providers.local]\nkind = \"mock\"\nscript = \""+script+"\"\n")
	m, s := termtest.OpenPTY(t)
	shown := make(chan string, 1)
	go func() {
		var b strings.Builder
		io.Copy(&b, m) // until the terminal is closed
		shown <- b.String()
	}()
	var out strings.Builder
	code := runClaw(&globals{stdin: s, stdout: &out, stderr: s}, home, "agent", "-m", "hello")
	s.Close()
	screen := <-shown
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, screen)
	}
	if out.String() != "You said: hello\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if n := strings.Count(screen, " thinking"); n < 2 || !strings.Contains(screen, "\r⠋ thinking") {
		t.Errorf("the terminal showed %d spinner frames, want it turning:\n%q", n, screen)
	}
	if !strings.HasSuffix(screen, "\r\x1b[K") {
		t.Errorf("the spinner was not erased at the end:\n%q", screen)
	}
}
