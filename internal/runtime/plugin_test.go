package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/internal/plugin"
	"github.com/clawsec/claw/internal/toolkind"
)

// TestWithPlugins: the model's catalog lists an installed plugin's tools
// with their schemas, and has no plugin tool once the plugin changed.
func TestWithPlugins(t *testing.T) {
	src := t.TempDir()
	manifest := "name = \"echo-plugin\"\nversion = \"0.1.0\"\ncapabilities = [\"tool\"]\n[[tools]]\nname = \"echo\"\ndescription = \"Echoes input\"\ncommand = \"./echo-plugin\"\nschema = { type = \"object\" }\n"
	if err := os.WriteFile(filepath.Join(src, "manifest.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "echo-plugin"), []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := plugin.Store{Dir: filepath.Join(t.TempDir(), "plugins")}
	if got := WithPlugins(tool.All(), s); hasTool(got, "plugin") {
		t.Fatal("the plugin tool is offered with no plugin installed")
	}
	if _, err := s.Install(src); err != nil {
		t.Fatal(err)
	}
	got := WithPlugins(tool.All(), s)
	var desc string
	for _, sp := range got {
		if sp.Name == "plugin" {
			desc = sp.Description
		}
	}
	if !strings.Contains(desc, `plugin "echo-plugin", tool "echo": Echoes input Arguments schema: {"type":"object"}`) {
		t.Fatalf("plugin tool description %q", desc)
	}
	if d, _ := tool.Lookup("plugin"); strings.Contains(d.Description, "echo-plugin") {
		t.Fatal("WithPlugins changed the shared catalog")
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "echo-plugin", "echo-plugin"), []byte("#!/bin/sh\necho '{}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := WithPlugins(tool.All(), s); hasTool(got, "plugin") {
		t.Fatal("a changed plugin is still offered to the model")
	}
}

func hasTool(tools []tool.Spec, name toolkind.Kind) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
