package logx

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps: logx depends on no claw package but internal/redact (it must
// not reach the broker or the gate), and on nothing outside the standard
// library.
func TestDeps(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/clawsec/claw/internal/logx":   true,
		"github.com/clawsec/claw/internal/redact": true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("logx depends on %s", p)
		}
	}
}
