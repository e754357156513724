package hook

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the hook decides and records; it never runs anything itself,
// and no production code imports testing.
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	never := map[string]string{
		"os/exec":                          "the agent runs the tool, not the hook",
		"net/http":                         "the hook never reaches the network",
		"testing":                          "no production code imports testing",
		"github.com/clawsec/claw/executor": "the hook never runs an action",
		"github.com/clawsec/claw/agent":    "the hook guards other agents, not claw's",
		"github.com/clawsec/claw/internal/broker": "the hook decides and records; it has no approval or execution path",
	}
	for _, p := range strings.Fields(string(out)) {
		if why, bad := never[p]; bad {
			t.Errorf("internal/hook imports %s: %s", p, why)
		}
	}
}
