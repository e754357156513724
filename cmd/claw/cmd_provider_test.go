package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/runtime"
)

// plantedKey is a fake provider key; no output may ever contain it.
const plantedKey = "sk-test-PLANTED-0123456789abcdef"

// operatorRun runs the claw command line in-process with home as the claw
// home and returns its output and exit status.
func operatorRun(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runClaw(&globals{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, home, args...)
	return out.String(), errb.String(), code
}

// runClaw runs the claw command line in-process on g's streams with home as
// the claw home and returns its exit status.
func runClaw(g *globals, home string, args ...string) int {
	return runClawContext(context.Background(), g, home, args...)
}

// runClawContext is runClaw until ctx ends (a daemon's SIGTERM).
func runClawContext(ctx context.Context, g *globals, home string, args ...string) int {
	root := newRootCommand(g)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(ctx)
	if err != nil {
		if isCobraUsage(err) {
			err = withCode(exitUsage, err)
		}
		printError(g.stderr, err)
	}
	return exitCodeOf(err)
}

// operatorHome makes a claw home whose config.toml is cfg.
func operatorHome(t *testing.T, cfg string) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), ".claw")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// openAIServer answers /v1/chat/completions with handler, after checking
// that the planted key was sent as the bearer token.
func openAIServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+plantedKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || len(req.Messages) == 0 {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func okCompletion(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test-2026",
		"choices":[{"index":0,"message":{"role":"assistant","content":"ok\nsecond line"},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`)
}

func providerConfig(baseURL string) string {
	return fmt.Sprintf(`default_provider = "remote"

[providers.remote]
kind = "openai-compatible"
base_url = %q
api_key_env = "CLAW_TEST_REMOTE_KEY"
model = "gpt-test"
timeout = "5s"

[providers.unset]
kind = "anthropic"
api_key_env = "CLAW_TEST_NEVER_SET_KEY"
model = "claude-test"

[providers.local]
kind = "mock"
`, baseURL)
}

func TestProviderList(t *testing.T) {
	t.Setenv("CLAW_TEST_REMOTE_KEY", plantedKey)
	home := operatorHome(t, providerConfig("http://127.0.0.1:9/v1"))

	out, errOut, code := operatorRun(t, home, "provider", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"remote *", "$CLAW_TEST_REMOTE_KEY (set)", "$CLAW_TEST_NEVER_SET_KEY (unset)", "https://api.anthropic.com", "gpt-test", "local"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}

	out, errOut, code = operatorRun(t, home, "provider", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Default   string                 `json:"default_provider"`
		Providers []runtime.ProviderInfo `json:"providers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	byName := map[string]runtime.ProviderInfo{}
	for _, p := range got.Providers {
		byName[p.Name] = p
	}
	tests := []struct {
		name    string
		keySet  bool
		usable  bool
		dflt    bool
		network bool
	}{
		{name: "remote", keySet: true, usable: true, dflt: true, network: true},
		{name: "unset", keySet: false, usable: false},
		{name: "local", usable: true},
	}
	for _, tt := range tests {
		p, ok := byName[tt.name]
		if !ok {
			t.Errorf("%s missing from %s", tt.name, out)
			continue
		}
		if p.KeySet != tt.keySet || p.Usable != tt.usable || p.Default != tt.dflt || p.Network != tt.network {
			t.Errorf("%s = %+v, want key set %v usable %v default %v network %v", tt.name, p, tt.keySet, tt.usable, tt.dflt, tt.network)
		}
	}
	if !strings.Contains(byName["unset"].Problem, "CLAW_TEST_NEVER_SET_KEY") {
		t.Errorf("unset problem = %q", byName["unset"].Problem)
	}
	if strings.Contains(out+errOut, plantedKey) {
		t.Fatal("the key leaked into provider list")
	}
}

func TestProviderTest(t *testing.T) {
	ok := openAIServer(t, okCompletion)
	unauthorized := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"invalid key `+plantedKey+`","type":"invalid_request_error"}}`)
	})
	forbidden := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"error":{"message":"no access to model"}}`)
	})
	limited := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "17")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
	})
	badJSON := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","choices":[{"message":`)
	})
	hang := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()

	tests := []struct {
		name     string
		baseURL  string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
		noKeyEnv bool
	}{
		{name: "ok", baseURL: ok.URL + "/v1", wantCode: 0,
			wantOut: []string{"ok: remote answered in ", "(model gpt-test-2026)", "reply: ok\n"}},
		{name: "401", baseURL: unauthorized.URL + "/v1", wantCode: 1,
			wantErr: []string{"http 401", "hint: the endpoint rejected the key"}},
		{name: "403", baseURL: forbidden.URL + "/v1", wantCode: 1,
			wantErr: []string{"http 403", "hint: the endpoint rejected the key"}},
		{name: "429", baseURL: limited.URL + "/v1", wantCode: 1,
			wantErr: []string{"rate limited (retry after 17s)", "hint: the endpoint is rate limiting: retry in 17s"}},
		{name: "bad json", baseURL: badJSON.URL + "/v1", wantCode: 1,
			wantErr: []string{"malformed response", "hint: the answer is not the expected wire format"}},
		{name: "timeout", baseURL: hang.URL + "/v1", args: []string{"--timeout", "300ms"}, wantCode: 1,
			wantErr: []string{"timed out", "hint: no answer in time"}},
		{name: "connection refused", baseURL: refusedURL + "/v1", wantCode: 1,
			wantErr: []string{"hint: the endpoint is unreachable"}},
		{name: "key unset", baseURL: ok.URL + "/v1", noKeyEnv: true, wantCode: 1,
			wantErr: []string{"api key not set", "$CLAW_TEST_REMOTE_KEY", "hint: export the key"}},
		{name: "unknown provider", baseURL: ok.URL + "/v1", args: []string{"nosuch"}, wantCode: 1,
			wantErr: []string{`no provider "nosuch"`, "configured: local, remote, unset"}},
		{name: "mock", baseURL: ok.URL + "/v1", args: []string{"local"}, wantCode: 0,
			wantOut: []string{"ok: local answered in "}},
		{name: "usage", baseURL: ok.URL + "/v1", args: []string{"a", "b"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noKeyEnv {
				t.Setenv("CLAW_TEST_REMOTE_KEY", "")
			} else {
				t.Setenv("CLAW_TEST_REMOTE_KEY", plantedKey)
			}
			home := operatorHome(t, providerConfig(tt.baseURL))
			out, errOut, code := operatorRun(t, home, append([]string{"provider", "test"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if strings.Contains(out+errOut, plantedKey) || strings.Contains(out+errOut, "PLANTED") {
				t.Fatalf("the key leaked:\n%s%s", out, errOut)
			}
		})
	}
}

func TestProviderTestJSON(t *testing.T) {
	t.Setenv("CLAW_TEST_REMOTE_KEY", plantedKey)
	limited := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	home := operatorHome(t, providerConfig(limited.URL+"/v1"))
	out, _, code := operatorRun(t, home, "provider", "test", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var res runtime.ProbeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if res.OK || res.Provider != "remote" || !strings.Contains(res.Error, "rate limited") || !strings.Contains(res.Hint, "retry in 30s") {
		t.Errorf("result = %+v", res)
	}
}

// TestProviderTestFallback: a reliable provider whose first member is
// rate limited answers through the next one, and says which.
func TestProviderTestFallback(t *testing.T) {
	t.Setenv("CLAW_TEST_REMOTE_KEY", plantedKey)
	limited := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	})
	ok := openAIServer(t, okCompletion)
	home := operatorHome(t, fmt.Sprintf(`default_provider = "main"
[providers.first]
kind = "openai-compatible"
base_url = %q
api_key_env = "CLAW_TEST_REMOTE_KEY"
model = "m1"
[providers.second]
kind = "openai-compatible"
base_url = %q
api_key_env = "CLAW_TEST_REMOTE_KEY"
model = "m2"
[providers.main]
kind = "reliable"
fallbacks = ["first", "second"]
`, limited.URL+"/v1", ok.URL+"/v1"))
	out, errOut, code := operatorRun(t, home, "provider", "test")
	if code != 0 || !strings.Contains(out, "ok: main answered in ") || !strings.Contains(out, " through second") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = operatorRun(t, home, "provider", "list")
	if !strings.Contains(out, "first,second") {
		t.Errorf("members not listed:\n%s", out)
	}
}
