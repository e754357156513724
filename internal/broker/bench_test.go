package broker

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
)

// BenchmarkFileRead is the broker's whole overhead for one file_read:
// gate decision, durable decision receipt, sandbox spawn with the in-sandbox
// tool, outcome receipt. It reports p50 and p99 per action. The sandbox
// child is the claw-sandbox helper, as make installs it. Three ways:
// the child started on demand; started ahead (executor.Prestart, what the
// REPL and the daemon do) with a pause between actions standing for the
// model's turn (not timed); and started ahead with actions back to back,
// where the next child starts while the broker writes receipts.
//
//	go test -run '^$' -bench FileRead -benchtime 300x ./internal/broker
func BenchmarkFileRead(b *testing.B) {
	for _, m := range []struct {
		name     string
		prestart bool
		pause    time.Duration
	}{
		{"on-demand", false, 0},
		{"prestarted", true, 20 * time.Millisecond},
		{"prestarted-back-to-back", true, 0},
	} {
		b.Run(m.name, func(b *testing.B) {
			benchAction(b, m.prestart, m.pause, func(r *rig) gate.Action {
				p := filepath.Join(r.ws, "notes.txt")
				if err := os.WriteFile(p, []byte("hello\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				return gate.Action{Tool: "file_read", Args: map[string]any{"path": "notes.txt"}}
			})
		})
	}
}

// BenchmarkTime is the same path for an in-process tool: no sandbox
// spawn, so it is the gate plus two durable receipts.
func BenchmarkTime(b *testing.B) {
	benchAction(b, false, 0, func(r *rig) gate.Action {
		return gate.Action{Tool: "time", Args: map[string]any{}}
	})
}

func benchAction(b *testing.B, prestart bool, pause time.Duration, setup func(*rig) gate.Action) {
	benchActionWith(b, prestart, pause, nil, setup)
}

func benchActionWith(b *testing.B, prestart bool, pause time.Duration, pol func(*gate.Policy), setup func(*rig) gate.Action) {
	requireSandbox(b)
	// The sandbox child as installed: the small helper next to claw, not
	// this (large) test binary re-executed.
	helper := filepath.Join(b.TempDir(), executor.HelperName)
	build := exec.Command("go", "build", "-trimpath", "-o", helper, "../../executor/cmd/claw-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the helper: %v\n%s", err, out)
	}
	os.Chmod(filepath.Dir(helper), 0o755)
	executor.SetHelper(helper)
	defer executor.SetHelper("")
	if prestart {
		executor.Prestart()
		defer executor.StopPrestart()
	}
	r := newRigWith(b, "supervised", pol, func(c *Config) {
		c.InProcess = map[toolkind.Kind]ToolFunc{"time": func(context.Context, map[string]any) (json.RawMessage, error) { return json.RawMessage(`{"t":1}`), nil }}
	})
	a := setup(r)
	ctx := context.Background()
	// warm up: the first spawn pays for page-cache misses
	for i := 0; i < 5; i++ {
		if out, err := r.b.Invoke(ctx, a, "bench"); err != nil || out.Status != StatusOK {
			b.Fatalf("status %v, err %v", out.Status, err)
		}
	}
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if pause > 0 {
			b.StopTimer()
			time.Sleep(pause)
			b.StartTimer()
		}
		start := time.Now()
		out, err := r.b.Invoke(ctx, a, "bench")
		d = append(d, time.Since(start))
		if err != nil || out.Status != StatusOK {
			b.Fatalf("status %v, err %v", out.Status, err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, d)
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkShellTrue is a sandboxed shell `true` through the whole broker
// path (gate, two durable receipts, the sandbox), beside its anchor, a
// bare `bwrap --unshare-all` running /bin/true, in the same run. The
// broker cases are those of BenchmarkFileRead.
//
//	go test -run '^$' -bench ShellTrue -benchtime 300x ./internal/broker
func BenchmarkShellTrue(b *testing.B) {
	b.Run("bwrap-unshare-all", func(b *testing.B) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			b.Skip("bwrap not installed")
		}
		argv := []string{"--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true"}
		d := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if err := exec.Command("bwrap", argv...).Run(); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		reportPercentiles(b, d)
	})
	for _, m := range []struct {
		name     string
		prestart bool
		pause    time.Duration
	}{
		{"on-demand", false, 0},
		{"prestarted", true, 20 * time.Millisecond},
		{"prestarted-back-to-back", true, 0},
	} {
		b.Run(m.name, func(b *testing.B) {
			allowTrue := func(p *gate.Policy) { p.AllowedCommands = append(p.AllowedCommands, "true") }
			benchActionWith(b, m.prestart, m.pause, allowTrue, func(r *rig) gate.Action {
				return gate.Action{Tool: "shell", Args: map[string]any{"command": "true"}}
			})
		})
	}
}

// BenchmarkPlugin is the same path for a plugin tool (the seed's
// echo-plugin: sh running cat), with the child started on demand: compare
// it with FileRead/on-demand in the same run. The resolver is a fixed
// one; BenchmarkResolve in internal/plugin times the pin check.
//
//	go test -run '^$' -bench 'FileRead/on-demand|Plugin' -benchtime 300x ./internal/broker
func BenchmarkPlugin(b *testing.B) {
	benchAction(b, false, 0, func(r *rig) gate.Action {
		dir := b.TempDir()
		os.Chmod(dir, 0o755)
		prog := filepath.Join(dir, "echo-plugin")
		if err := os.WriteFile(prog, []byte("#!/bin/sh\nexec cat\n"), 0o755); err != nil {
			b.Fatal(err)
		}
		pc := PluginCall{Info: gate.PluginInfo{Status: "ok"}, Dir: dir, Argv: []string{prog}}
		r.b.cfg.Plugins = func(string, string, map[string]any) PluginCall { return pc }
		return pluginAction(map[string]any{"msg": "hi"})
	})
}
