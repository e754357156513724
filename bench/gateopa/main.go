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
// With -dump FILE it writes every case's decision, at the case's autonomy
// and at each of readonly, supervised and full, one JSON line each
// without the policy digest, so that a policy change can be checked to
// leave every decision byte-identical (cmp the files of two revisions).
// -cpuprofile writes a CPU profile of the timed passes. It reports the
// process's resident memory (and its peak) and garbage collections with
// the timings, so that GOGC and GOMEMLIMIT settings can be compared.
//
// -idle runs, after each decision and outside the timed part, what claw
// serve's and the broker's idle collector (internal/idlegc) runs once no
// request has been in flight for a while: a collection when the garbage
// is worth one. It measures decisions as a daemon answers them, with
// idle time between an agent's calls.
//
// Usage: gateopa -out DIR [-rounds N] [-sample N] [-dump FILE] [-cpuprofile FILE] [-idle]
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
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/idlegc"
	clawrt "github.com/clawsec/claw/internal/runtime"
)

const home = "/home/claw"

// idle, when not nil, is the idle collector run after each decision,
// outside the timed part (-idle).
var idle *idlegc.Collector

func main() {
	out := flag.String("out", "", "directory for the policies, data and sampled inputs")
	rounds := flag.Int("rounds", 5, "passes over the corpus")
	sample := flag.Int("sample", 40, "cases whose input is written for opa bench")
	dump := flag.String("dump", "", "write every decision of the corpus at every autonomy to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed passes to this file")
	idleRun := flag.Bool("idle", false, "after each decision, untimed, run the idle collector as claw serve does between calls")
	flag.Parse()
	if *idleRun {
		idle = idlegc.New(0, 0)
	}
	if err := run(*out, *rounds, *sample, *dump, *cpuProfile); err != nil {
		fmt.Fprintln(os.Stderr, "gateopa:", err)
		os.Exit(1)
	}
}

func run(out string, rounds, sample int, dump, cpuProfile string) error {
	if out == "" && dump == "" {
		return fmt.Errorf("-out or -dump is required")
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
	if dump != "" {
		if err := dumpDecisions(ctx, eng, cases, dump); err != nil {
			return err
		}
		if out == "" {
			return nil
		}
	}
	runtime.LockOSThread()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	var gc0 runtime.MemStats
	runtime.ReadMemStats(&gc0)
	wall, cpu, err := timeCases(ctx, eng, cases, rounds)
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return err
	}
	var gc1 runtime.MemStats
	runtime.ReadMemStats(&gc1)
	label := "corpus"
	if idle != nil {
		label = "corpus, idle collector"
	}
	fmt.Printf("%s: %d cases x %d rounds: p50 %s p90 %s p99 %s, cpu p50 %s p90 %s p99 %s\n", label,
		len(cases), rounds, q(wall, 50), q(wall, 90), q(wall, 99), q(cpu, 50), q(cpu, 90), q(cpu, 99))
	fmt.Printf("memory: resident %s (peak %s), %d collections, heap in use %d MB\n",
		procStatus("VmRSS"), procStatus("VmHWM"), gc1.NumGC-gc0.NumGC, gc1.HeapInuse>>20)
	if sample <= 0 {
		return nil // the timings only: no input for opa bench
	}
	return writeSample(ctx, eng, cases, out, sample)
}

// dumpDecisions writes, for every case, its decision at its own autonomy
// and at each autonomy, as JSON lines without the policy digest.
func dumpDecisions(ctx context.Context, eng *gate.Engine, cases []gate.Case, name string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, c := range cases {
		for _, a := range []string{c.Autonomy, "readonly", "supervised", "full"} {
			gc := caseContext(c)
			if a != "" {
				gc.Autonomy = a
			}
			d, err := eng.Decide(ctx, c.Action, gc)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			d.PolicyDigest = ""
			if err := enc.Encode(struct {
				Case     string        `json:"case"`
				Autonomy string        `json:"autonomy"`
				Decision gate.Decision `json:"decision"`
			}{c.Name, gc.Autonomy, d}); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(name, b.Bytes(), 0o644)
}

// procStatus is the value of a field of /proc/self/status ("VmRSS":
// resident memory, "VmHWM": its peak).
func procStatus(field string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
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
			if idle != nil {
				idle.Idle()
			}
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
