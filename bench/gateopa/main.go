// Command gateopa times the gate's decisions over the bypass corpus next
// to OPA's own evaluation of the same policies, data and input.
//
// It decides every case of the corpus (at the case's autonomy and
// workspace, under the default configuration) ROUNDS times in process and
// reports the p50 and p99 of a decision (wall time, and CPU time of the
// process during it: the evaluation runs on another thread than the
// caller's, and the garbage collector's work meanwhile counts too). It writes the policies, data.json and, for SAMPLE
// cases spread evenly over the corpus, the input each was decided on to
// OUT, and then times those same inputs again in process, so that
// bench/gate-opa.sh can run `opa bench` on each and print both side by
// side.
//
// Usage: gateopa -out DIR [-rounds N] [-sample N]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
	clawrt "github.com/clawsec/claw/internal/runtime"
)

const home = "/home/claw"

func main() {
	out := flag.String("out", "", "directory for the policies, data and sampled inputs")
	rounds := flag.Int("rounds", 5, "passes over the corpus")
	sample := flag.Int("sample", 40, "cases whose input is written for opa bench")
	flag.Parse()
	if err := run(*out, *rounds, *sample); err != nil {
		fmt.Fprintln(os.Stderr, "gateopa:", err)
		os.Exit(1)
	}
}

func run(out string, rounds, sample int) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	ctx := context.Background()
	cases, err := clawrt.BypassCorpus()
	if err != nil {
		return err
	}
	eng, err := gate.New(ctx, gate.Options{Policy: clawrt.Policy(config.Default(home)), Home: home})
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	wall, cpu, err := timeCases(ctx, eng, cases, rounds)
	if err != nil {
		return err
	}
	fmt.Printf("corpus: %d cases x %d rounds: p50 %s p90 %s p99 %s, cpu p50 %s p90 %s p99 %s\n",
		len(cases), rounds, q(wall, 50), q(wall, 90), q(wall, 99), q(cpu, 50), q(cpu, 90), q(cpu, 99))
	return writeSample(ctx, eng, cases, out, sample)
}

func caseContext(c gate.Case) gate.Context {
	ws := c.Workspace
	cwd := c.Cwd
	if cwd == "" {
		cwd = ws
	}
	return gate.Context{Autonomy: c.Autonomy, Workspace: ws, Cwd: cwd, Home: home, Channel: "cli"}
}

// timeCases decides every case rounds times and returns the wall and
// thread CPU time of each decision.
func timeCases(ctx context.Context, eng *gate.Engine, cases []gate.Case, rounds int) (wall, cpu []time.Duration, err error) {
	for r := 0; r < rounds; r++ {
		for _, c := range cases {
			c0 := processCPU()
			t0 := time.Now()
			if _, err := eng.Decide(ctx, c.Action, caseContext(c)); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			wall = append(wall, time.Since(t0))
			cpu = append(cpu, processCPU()-c0)
		}
	}
	return wall, cpu, nil
}

// writeSample writes the policies and data, and for sample cases spread
// over the corpus their input and a line "FILE p50-ns name" of the
// in-process p50 of that input (200 decisions) to OUT/inputs.txt.
func writeSample(ctx context.Context, eng *gate.Engine, cases []gate.Case, out string, sample int) error {
	if err := os.MkdirAll(filepath.Join(out, "policies"), 0o755); err != nil {
		return err
	}
	for n, s := range eng.Modules() {
		p := filepath.Join(out, "policies", filepath.Base(n))
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			return err
		}
	}
	data, err := json.Marshal(eng.Data())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "data.json"), data, 0o644); err != nil {
		return err
	}
	var list bytes.Buffer
	step := max(1, len(cases)/sample)
	for i := 0; i < len(cases) && i/step < sample; i += step {
		c := cases[i]
		in, err := json.Marshal(gate.BuildInput(c.Action, caseContext(c)))
		if err != nil {
			return err
		}
		f := filepath.Join(out, fmt.Sprintf("input-%04d.json", i))
		if err := os.WriteFile(f, in, 0o644); err != nil {
			return err
		}
		wall, _, err := timeCases(ctx, eng, []gate.Case{c}, 200)
		if err != nil {
			return err
		}
		fmt.Fprintf(&list, "%s %d %s\n", f, q(wall, 50).Nanoseconds(), c.Name)
	}
	return os.WriteFile(filepath.Join(out, "inputs.txt"), list.Bytes(), 0o644)
}

// q returns the p-th percentile of d (sorted in place).
func q(d []time.Duration, p int) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[min(len(d)-1, len(d)*p/100)]
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
