package approvals

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: the daemon's code imports no test machinery, runs no
// processes, and reaches the agent only through the functions it is
// given (never the agent packages themselves).
func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "testing", p == "os/exec", strings.Contains(p, "testscript"):
			t.Errorf("approvals imports %s", p)
		case strings.HasPrefix(p, "github.com/clawsec/claw/agent"), strings.HasPrefix(p, "github.com/clawsec/claw/cmd/"):
			t.Errorf("approvals imports %s", p)
		}
	}
}
