package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/clawsec/claw/internal/busytest"
	"github.com/clawsec/claw/internal/bypass"
)

// TestBenignCorpusUnderLoad decides the benign corpus, several deciders
// at once, while spinning threads keep every CPU busy many times over (a
// load average of about 20 on two cores, as while the test suite runs in
// parallel): a busy machine makes decisions slower, and must not turn a
// single one of them into a gate.error denial.
func TestBenignCorpusUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every CPU")
	}
	b, err := bypass.FS.ReadFile("benign.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ParseCases(bytes.NewReader(b), "benign.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	engines := corpusEngines(t, cases)
	stop := busytest.Spin(16 * runtime.NumCPU())
	defer stop()
	const rounds = 4
	var (
		wg       sync.WaitGroup
		next     atomic.Int64
		gateErrs atomic.Int64
	)
	for w := 0; w < 2*runtime.NumCPU(); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= rounds*len(cases) {
					return
				}
				cs := cases[i%len(cases)]
				r := Check(context.Background(), engines[i%len(cases)], cs, corpusContext)
				if r.Err != nil || hasReason(r.Decision, reasonGateError) {
					gateErrs.Add(1)
					t.Errorf("%s (%s): %s %v: %v", cs.Name, cs.Where, r.Decision.Decision, r.Decision.RuleIDs(), r.Err)
				} else if r.Failure != "" {
					t.Errorf("%s (%s): %s", cs.Name, cs.Where, r.Failure)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d decisions under load, %d gate errors", rounds*len(cases), gateErrs.Load())
}

// corpusContext and corpusPolicy are the environment the bypass corpus
// is decided in (see internal/bypass/README.md).
var corpusContext = Context{Autonomy: "supervised", Workspace: "/home/claw/ws", Cwd: "/home/claw/ws", Home: "/home/claw", Channel: "cli"}

func corpusPolicy() Policy {
	p := testPolicy()
	p.ForbiddenPaths = []string{"/etc", "/sys", "/boot", "/home/claw/.ssh"}
	p.AllowedDomains = []string{}
	return p
}

// corpusEngines compiles, before the load starts, an engine for each
// case: the corpus policy with the case's config over it, one engine per
// distinct config.
func corpusEngines(t *testing.T, cases []Case) []*Engine {
	t.Helper()
	byConfig := map[string]*Engine{}
	out := make([]*Engine, len(cases))
	for i, cs := range cases {
		key, _ := json.Marshal(cs.Config)
		eng, ok := byConfig[string(key)]
		if !ok {
			p := corpusPolicy()
			if len(cs.Config) > 0 {
				// The case's keys are the Policy's JSON names.
				b, _ := json.Marshal(p)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				for k, v := range cs.Config {
					m[k] = v
				}
				b, _ = json.Marshal(m)
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatalf("%s: config: %v", cs.Where, err)
				}
			}
			var err error
			eng, err = New(context.Background(), Options{Policy: p, Home: "/home/claw"})
			if err != nil {
				t.Fatal(err)
			}
			byConfig[string(key)] = eng
		}
		out[i] = eng
	}
	return out
}

func hasReason(d Decision, id string) bool {
	for _, r := range d.Reasons {
		if r.ID == id {
			return true
		}
	}
	return false
}
