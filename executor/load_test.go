package executor

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/busytest"
)

// TestArmedUnderLoad: with every CPU busy many times over (a load
// average of about 20 on two cores), actions run in armed workers, two at
// a time, with the results and confinement of a quiet machine. A busy
// machine makes a worker slower to arm, never wrong, and an action that
// waits for one still gets exactly its own plan.
func TestArmedUnderLoad(t *testing.T) {
	requireSandbox(t)
	if testing.Short() {
		t.Skip("loads every CPU")
	}
	f := newFixture(t)
	read, _ := json.Marshal(map[string]any{"path": filepath.Join(f.ws, "f.txt")})
	shell := f.spec("bash", "-c", `cat f.txt; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status; echo $((6*7))`)
	shell.Cwd = f.ws
	const perWorker = 6
	armed(t, 2*2*perWorker, func() {
		stop := busytest.Spin(16 * runtime.NumCPU())
		defer stop()
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					res, err := runQuiet(shell)
					out := string(res.Stdout)
					if err != nil || res.ExitCode != 0 || out != "workspace file\nNoNewPrivs:\t1\nSeccomp:\t2\n42\n" {
						t.Errorf("worker %d, shell %d: exit %d, err %v, stdout %q, stderr %q", w, i, res.ExitCode, err, out, res.Stderr)
					}
					tool, err := runQuiet(Spec{Tool: ToolFileRead, Args: read, Read: []string{f.ws}})
					if err != nil || tool.Tool == nil || tool.Tool.Error != "" || !strings.Contains(string(tool.Tool.Payload), "workspace file") {
						t.Errorf("worker %d, file_read %d: %+v, err %v, stderr %q", w, i, tool.Tool, err, tool.Stderr)
					}
				}
			}()
		}
		wg.Wait()
	})
}

// runQuiet is run for goroutines other than the test's: it reports the
// error instead of ending the test.
func runQuiet(s Spec) (Result, error) {
	s.Timeout = time.Minute
	return Run(context.Background(), s)
}
