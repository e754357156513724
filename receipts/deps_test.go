package receipts_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: receipts records decisions; it imports nothing of claw, and no
// production code imports testing.
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/clawsec/claw/") && p != "github.com/clawsec/claw/receipts" {
			t.Errorf("receipts imports %s", p)
		}
		if p == "testing" {
			t.Errorf("receipts imports testing")
		}
	}
}
