package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/logx"
)

// plantedKey is a provider key no log line may carry.
const plantedKey = "sk-test-PLANTED-0123456789abcdef"

func TestStartLogger(t *testing.T) {
	home := t.TempDir()
	cfg := config.Default(home)
	cfg.Path = home + "/config.toml"
	cfg.Security.PassphraseHash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"
	cfg.DefaultProvider = "openai"
	cfg.Providers["openai"] = config.Provider{Kind: "openai-compatible", APIKeyEnv: "OPENAI_API_KEY"}
	cfg.Providers["odd"] = config.Provider{Kind: "openai-compatible", APIKeyEnv: "MODEL_ACCESS_X"}
	t.Setenv("MODEL_ACCESS_X", "zq-unformatted-value-77")
	cfg.WorkspaceDir = home + "/zq-unformatted-value-77"
	t.Setenv("OPENAI_API_KEY", plantedKey)

	t.Run("json", func(t *testing.T) {
		t.Setenv(logx.EnvVar, "json")
		var buf bytes.Buffer
		startLogger(&buf, &Env{Home: home, Config: cfg}, "dev")
		var events []string
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("not a JSON line: %q", sc.Text())
			}
			events = append(events, rec["event"].(string))
			if rec["event"] == logx.EventConfigLoaded && (rec["default_provider"] != "openai" || rec["passphrase_gate"] != true) {
				t.Errorf("config_loaded = %v", rec)
			}
		}
		if got := strings.Join(events, ","); got != "startup,config_loaded,workspace" {
			t.Errorf("events = %s", got)
		}
		if strings.Contains(buf.String(), "PLANTED") || strings.Contains(buf.String(), "argon2id") || strings.Contains(buf.String(), "zq-unformatted") {
			t.Errorf("a secret reached the log:\n%s", buf.String())
		}
	})
	t.Run("quiet by default", func(t *testing.T) {
		t.Setenv(logx.EnvVar, "")
		var buf bytes.Buffer
		startLogger(&buf, &Env{Home: home, Config: cfg}, "dev")
		if buf.Len() != 0 {
			t.Errorf("default mode printed info records:\n%s", buf.String())
		}
	})
	t.Run("no config", func(t *testing.T) {
		t.Setenv(logx.EnvVar, "text")
		var buf bytes.Buffer
		startLogger(&buf, nil, "dev")
		if !strings.Contains(buf.String(), "event=startup") || strings.Contains(buf.String(), "config_loaded") {
			t.Errorf("output:\n%s", buf.String())
		}
	})
}
