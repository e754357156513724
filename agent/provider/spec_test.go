package provider

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNew(t *testing.T) {
	env := map[string]string{"CLAW_TEST_KEY": plantedKey}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name     string
		spec     Spec
		wantErr  string
		wantIs   error
		wantType string
	}{
		{name: "mock", spec: Spec{Name: "local", Kind: KindMock}, wantType: "*provider.Mock"},
		{name: "openai", spec: Spec{Name: "o", Kind: "openai", APIKeyEnv: "CLAW_TEST_KEY", Model: "m"}, wantType: "*provider.OpenAI"},
		{name: "local server without key", spec: Spec{Name: "ollama", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:11434/v1"}, wantType: "*provider.OpenAI"},
		{name: "anthropic", spec: Spec{Name: "a", Kind: KindAnthropic, APIKeyEnv: "CLAW_TEST_KEY"}, wantType: "*provider.Anthropic"},
		{name: "key unset", spec: Spec{Name: "a", Kind: KindAnthropic, APIKeyEnv: "CLAW_UNSET"}, wantIs: ErrNoKey, wantErr: "$CLAW_UNSET is empty"},
		{name: "key in place of a name", spec: Spec{Name: "a", Kind: KindAnthropic, APIKeyEnv: plantedKey}, wantErr: "must be the name of an environment variable"},
		{name: "unknown kind", spec: Spec{Name: "x", Kind: "gemini"}, wantErr: `unknown kind "gemini"`},
		{name: "composite", spec: Spec{Name: "x", Kind: KindReliable}, wantErr: "use Build"},
		{name: "no name", spec: Spec{Kind: KindMock}, wantErr: "needs a name"},
		{name: "missing script", spec: Spec{Name: "m", Kind: KindMock, Script: "/nonexistent/script.yaml"}, wantErr: "mock script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.spec, getenv)
			if tt.wantErr != "" || tt.wantIs != nil {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || (tt.wantIs != nil && !errors.Is(err, tt.wantIs)) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), plantedKey) {
					t.Errorf("error leaks the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := typeName(p); got != tt.wantType || p.Name() != tt.spec.Name {
				t.Errorf("got %s %q", got, p.Name())
			}
		})
	}
}

func typeName(p Provider) string {
	switch p.(type) {
	case *Mock:
		return "*provider.Mock"
	case *OpenAI:
		return "*provider.OpenAI"
	case *Anthropic:
		return "*provider.Anthropic"
	case *Reliable:
		return "*provider.Reliable"
	case *Router:
		return "*provider.Router"
	}
	return "?"
}

func TestBuild(t *testing.T) {
	specs := []Spec{
		{Name: "main", Kind: KindRouter, Default: "safe", Routes: map[string]string{"local": "local"}},
		{Name: "safe", Kind: KindReliable, Fallbacks: []string{"remote", "local"}},
		{Name: "remote", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:1/v1", Model: "m"},
		{Name: "local", Kind: KindMock},
	}
	main, err := Build(specs, "main", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := main.Name(); got != "router(reliable(remote,local);local=local)" {
		t.Errorf("main = %q", got)
	}
	resp, err := main.Chat(bg(), userReq("hello"))
	if err != nil || resp.Provider != "local" {
		t.Errorf("resp = %+v, err = %v; want the mock after the unreachable remote", resp, err)
	}
	// A section that cannot be built does not stop the others.
	withBroken := append(specs, Spec{Name: "claude", Kind: KindAnthropic, APIKeyEnv: "CLAW_UNSET"})
	if _, err := Build(withBroken, "local", nil, nil); err != nil {
		t.Errorf("local: %v", err)
	}
	if _, err := Build(withBroken, "claude", func(string) string { return "" }, nil); !errors.Is(err, ErrNoKey) {
		t.Errorf("claude: err = %v, want ErrNoKey", err)
	}
	bad := []struct {
		name  string
		specs []Spec
		want  string
	}{
		{name: "cycle", specs: []Spec{{Name: "a", Kind: KindReliable, Fallbacks: []string{"b"}}, {Name: "b", Kind: KindReliable, Fallbacks: []string{"a"}}}, want: "refers to itself"},
		{name: "undefined member", specs: []Spec{{Name: "a", Kind: KindReliable, Fallbacks: []string{"zz"}}}, want: `"zz": not defined`},
		{name: "empty reliable", specs: []Spec{{Name: "a", Kind: KindReliable}}, want: "no providers"},
		{name: "duplicate", specs: []Spec{{Name: "a", Kind: KindMock}, {Name: "a", Kind: KindMock}}, want: "defined twice"},
		{name: "router without default", specs: []Spec{{Name: "r", Kind: KindRouter}}, want: "default"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Build(tt.specs, tt.specs[0].Name, nil, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestBuildSlowMockFallsBack is the offline form of "reliable falls back
// from a provider that times out": a mock whose script waits longer than
// its timeout.
func TestBuildSlowMockFallsBack(t *testing.T) {
	script := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(script, []byte("default: {reply: late, delay: 1h}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	specs := []Spec{
		{Name: "main", Kind: KindReliable, Fallbacks: []string{"slow", "local"}},
		{Name: "slow", Kind: KindMock, Script: script, Timeout: 20 * time.Millisecond},
		{Name: "local", Kind: KindMock},
	}
	slow, err := Build(specs, "slow", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slow.Chat(bg(), userReq("hi")); !errors.Is(err, ErrTimeout) {
		t.Errorf("slow: err = %v, want ErrTimeout", err)
	}
	main, err := Build(specs, "main", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := main.Chat(bg(), userReq("hi"))
	if err != nil || resp.Provider != "local" || resp.Text != "You said: hi" {
		t.Errorf("main: resp = %+v, err = %v", resp, err)
	}
}
