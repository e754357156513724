package runtime

import (
	"errors"
	"testing"
)

// Without a target there is no approver at all, not a nil client inside
// the interface; a bad target is refused before the config is loaded.
func TestDaemonApproverIf(t *testing.T) {
	load := func() (*Env, error) { return nil, errors.New("config loaded") }
	ap, err := DaemonApproverIf(load, "", "", "mcp")
	if err != nil || ap != nil {
		t.Fatalf(`DaemonApproverIf(""): %v (%T), %v; want nil, nil`, ap, ap, err)
	}
	ap, err = DaemonApproverIf(load, "http://example.com:80", "", "mcp")
	if ap != nil || ExitCode(err) != ExitUsage {
		t.Fatalf("DaemonApproverIf(remote): %v, %v; want a usage error", ap, err)
	}
}
