package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
)

// TestParsePorts: only a comma-separated list of ports 1-65535 is a
// grant; anything else is refused, never read as "no port" or port 0.
func TestParsePorts(t *testing.T) {
	got, err := parsePorts("80, 443,8080")
	if err != nil || !slices.Equal(got, []uint16{80, 443, 8080}) {
		t.Errorf("parsePorts(80, 443,8080) = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "65536", "x", "80,", ",80", "80;443", "-1", "1e3", " "} {
		if got, err := parsePorts(bad); err == nil {
			t.Errorf("parsePorts(%q) = %v, want an error", bad, got)
		}
	}
}

// TestRunExitStatus: a sandboxed run ends claw with the published exit
// codes: 5 unavailable and 2 a bad spec before anything is shown, 126 a
// failed setup and 127 a missing program after its output, else the
// command's own status.
func TestRunExitStatus(t *testing.T) {
	setup := &executor.SetupError{Stage: "landlock", Msg: "refused"}
	other := errors.New("something else")
	for _, tc := range []struct {
		name         string
		res          executor.Result
		err          error
		failed, exit int // -1: nil
	}{
		{"unavailable", executor.Result{}, fmt.Errorf("%w: no landlock", executor.ErrUnavailable), ExitSandbox, -1},
		{"bad spec", executor.Result{}, fmt.Errorf("%w: bad cwd", executor.ErrInvalidSpec), ExitUsage, -1},
		{"other error", executor.Result{}, other, ExitError, -1},
		{"setup failed", executor.Result{}, fmt.Errorf("run: %w", setup), -1, ExitSetupFailed},
		{"not found", executor.Result{}, fmt.Errorf("%w: nope", executor.ErrNotFound), -1, ExitNotFound},
		{"exit 0", executor.Result{}, nil, -1, -1},
		{"exit 42", executor.Result{ExitCode: 42}, nil, -1, 42},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := func(err error) int {
				if err == nil {
					return -1
				}
				return ExitCode(err)
			}
			if got := code(RunFailed(tc.err)); got != tc.failed {
				t.Fatalf("RunFailed: exit %d, want %d", got, tc.failed)
			}
			if tc.failed != -1 {
				return
			}
			if got := code(RunExit(tc.res, tc.err)); got != tc.exit {
				t.Errorf("RunExit: exit %d, want %d", got, tc.exit)
			}
		})
	}
}

// TestOutcomeFailed: an outcome that ran nothing ends claw with its exit
// code, and a denial lists its reasons escaped for the terminal; an
// outcome that ran is shown.
func TestOutcomeFailed(t *testing.T) {
	denied := &broker.Outcome{Status: broker.StatusDenied, Decision: gate.Decision{Reasons: []gate.Reason{{ID: "net.exfil", Msg: "sends \x1b[2Jdata"}}}}
	err := OutcomeFailed(denied)
	if ExitCode(err) != ExitDenied || !strings.Contains(err.Error(), "net.exfil: sends ") || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("denied: %q (exit %d); want exit 3 with the reason, escaped", err, ExitCode(err))
	}
	for status, want := range map[string]int{
		broker.StatusEstop:         ExitDenied,
		broker.StatusNeedsApproval: ExitNeedsHuman,
		broker.StatusRejected:      ExitDenied,
		broker.StatusApprovalTO:    ExitDenied,
		broker.StatusUnavailable:   ExitSandbox,
		broker.StatusError:         ExitError,
		broker.StatusOK:            ExitError, // and no result: nothing to show
	} {
		if got := ExitCode(OutcomeFailed(&broker.Outcome{Status: status, Err: errors.New("x")})); got != want {
			t.Errorf("%s: exit %d, want %d", status, got, want)
		}
	}
	ran := &broker.Outcome{Status: broker.StatusFailed, Result: &executor.Result{ExitCode: 1}}
	if err := OutcomeFailed(ran); err != nil {
		t.Errorf("an outcome that ran: %v, want it shown", err)
	}
}
