package config

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps holds the rule of the package table in DESIGN.md: config imports
// nothing of claw.
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/clawsec/claw/") && p != "github.com/clawsec/claw/internal/config" {
			t.Errorf("config imports %s", p)
		}
		if p == "testing" || strings.Contains(p, "testscript") {
			t.Errorf("non-test code imports %s", p)
		}
	}
}
