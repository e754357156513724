package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/config"
)

func onboardWith(t *testing.T, home, input string) (transcript, stderr string, code int) {
	t.Helper()
	var out, errb strings.Builder
	g := &globals{home: home, stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: &errb}
	err := runOnboard(g, bufio.NewReader(strings.NewReader(input)), &out)
	if err != nil {
		printError(&errb, err)
	}
	return out.String(), errb.String(), exitCodeOf(err)
}

func TestOnboard(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLAW_TEST_ONBOARD_KEY", "")
	tests := []struct {
		name      string
		existing  string // config before; "" = no file
		input     string
		wantCode  int
		wantOut   []string
		wantErr   []string
		check     func(t *testing.T, c *config.Config, text string)
		unchanged bool
	}{
		{
			name: "fresh home, openai-compatible, a pasted key is refused",
			input: strings.Join([]string{"openai-compatible", "", "http://127.0.0.1:9/v1",
				plantedKey, "CLAW_TEST_ONBOARD_KEY", "gpt-test", "full", "y"}, "\n") + "\n",
			wantOut: []string{"that is not a variable name", "key       from $CLAW_TEST_ONBOARD_KEY", "wrote "},
			wantErr: []string{"$CLAW_TEST_ONBOARD_KEY is not set", "claw provider test openai"},
			check: func(t *testing.T, c *config.Config, text string) {
				p := c.Providers["openai"]
				if c.DefaultProvider != "openai" || c.DefaultModel != "gpt-test" || c.Security.Autonomy != "full" ||
					p.Kind != "openai-compatible" || p.BaseURL != "http://127.0.0.1:9/v1" || p.APIKeyEnv != "CLAW_TEST_ONBOARD_KEY" || p.Model != "gpt-test" {
					t.Errorf("config = %+v, provider %+v", c, p)
				}
				if _, ok := c.Providers["local"]; !ok || !strings.Contains(text, "# claw configuration.") {
					t.Errorf("the template was not kept:\n%s", text)
				}
			},
		},
		{
			name:     "mock with every default",
			existing: "default_provider = \"x\"\n# my comment\n[providers.x]\nkind = \"mock\"\n",
			input:    "\n\n\n\n\n",
			check: func(t *testing.T, c *config.Config, text string) {
				if c.DefaultProvider != "local" || c.Providers["local"].Kind != "mock" || c.Security.Autonomy != "supervised" {
					t.Errorf("config = %+v", c)
				}
				if !strings.Contains(text, "# my comment") || c.Providers["x"].Kind != "mock" {
					t.Errorf("lost the existing content:\n%s", text)
				}
			},
		},
		{
			name:     "update an existing section, keep its other keys",
			existing: "[security]\nautonomy = \"readonly\"\n\n[providers.claude]\nkind = \"anthropic\"\nmodel = \"old\"\ntimeout = \"60s\"\n\n[providers.local]\nkind = \"mock\"\n",
			input:    "anthropic\n\n\nANTHROPIC_API_KEY\nclaude-new\n\ny\n",
			check: func(t *testing.T, c *config.Config, text string) {
				p := c.Providers["claude"]
				if p.Model != "claude-new" || p.Timeout.String() != "1m0s" || p.BaseURL != "https://api.anthropic.com" || c.Security.Autonomy != "readonly" {
					t.Errorf("provider = %+v, autonomy %s\n%s", p, c.Security.Autonomy, text)
				}
				if strings.Count(text, "[providers.claude]") != 1 || strings.Count(text, "\nmodel =") != 1 {
					t.Errorf("duplicated keys:\n%s", text)
				}
			},
		},
		{
			name:      "declined",
			existing:  "[providers.local]\nkind = \"mock\"\n",
			input:     "\n\n\n\nn\n",
			wantCode:  1,
			wantErr:   []string{"nothing was written"},
			unchanged: true,
		},
		{
			name:      "end of input",
			existing:  "[providers.local]\nkind = \"mock\"\n",
			input:     "anthropic\n",
			wantCode:  1,
			wantErr:   []string{"onboard cancelled"},
			unchanged: true,
		},
		{
			name:      "three bad answers",
			existing:  "[providers.local]\nkind = \"mock\"\n",
			input:     "gpt\nllama\nfoo\n",
			wantCode:  2,
			wantOut:   []string{"choose one of: mock, openai-compatible, anthropic"},
			wantErr:   []string{"no valid answer"},
			unchanged: true,
		},
		{
			name:      "credentials in the base URL",
			existing:  "[providers.local]\nkind = \"mock\"\n",
			input:     "openai-compatible\n\nhttps://u:" + plantedKey + "@h/v1\nftp://x\nnot a url\n",
			wantCode:  2,
			wantOut:   []string{"no credentials in the URL"},
			unchanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), ".claw")
			path := filepath.Join(home, "config.toml")
			if tt.existing != "" {
				os.MkdirAll(home, 0o700)
				os.WriteFile(path, []byte(tt.existing), 0o600)
			}
			out, errOut, code := onboardWith(t, home, tt.input)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("transcript lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if strings.Contains(out+errOut, "PLANTED") {
				t.Errorf("a pasted key was echoed:\n%s%s", out, errOut)
			}
			b, _ := os.ReadFile(path)
			if tt.unchanged {
				if string(b) != tt.existing {
					t.Errorf("config changed:\n%s", b)
				}
				return
			}
			if strings.Contains(string(b), "PLANTED") {
				t.Fatalf("a key was written to the config:\n%s", b)
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("config mode: %v %v", st.Mode(), err)
			}
			c, err := config.Load(path, home)
			if err != nil {
				t.Fatalf("written config is invalid: %v\n%s", err, b)
			}
			tt.check(t, c, string(b))
		})
	}
}

func TestOnboardNeedsTerminal(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".claw")
	_, errOut, code := operatorRun(t, home, "onboard")
	if code != exitUsage || !strings.Contains(errOut, "needs a terminal") || !strings.Contains(errOut, "hint: in a script, edit config.toml") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(home); err == nil {
		t.Error("onboard without a terminal created the claw home")
	}
}

// TestOnboardRefusesAConfusingFile: a table header inside a multi-line
// string fools the line-based edit; the check after the edit catches it and
// the file is left alone.
func TestOnboardRefusesAConfusingFile(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".claw")
	os.MkdirAll(home, 0o700)
	path := filepath.Join(home, "config.toml")
	existing := "[providers.local]\nkind = \"mock\"\nscript = \"\"\"\n[security]\nautonomy = \"x\"\n\"\"\"\n"
	os.WriteFile(path, []byte(existing), 0o600)
	_, errOut, code := onboardWith(t, home, "\n\n\nfull\ny\n")
	if code != exitError || !strings.Contains(errOut, "was not changed") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != existing {
		t.Errorf("config changed:\n%s", b)
	}
}
