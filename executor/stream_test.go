package executor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A started command answers line by line over its streams, inside the
// sandbox: what it was granted it reads, what it was not the kernel
// refuses, and its end closes Stdout and gives Wait a confined Result.
func TestStartStreams(t *testing.T) {
	requireSandbox(t)
	granted, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(granted, "in.txt"), []byte("granted-content"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside-content"), 0o644)
	script := `while read -r f; do if c=$(cat "$f" 2>&1); then echo "ok $c"; else echo "refused $c"; fi; done`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx, Spec{Argv: bash(script), Read: []string{granted}})
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(p.Stdout)
	ask := func(path string) string {
		t.Helper()
		fmt.Fprintln(p.Stdin, path)
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer for %s: %v", path, err)
		}
		return strings.TrimSpace(line)
	}
	if got := ask(filepath.Join(granted, "in.txt")); got != "ok granted-content" {
		t.Errorf("granted read: %q", got)
	}
	if got := ask(filepath.Join(outside, "secret.txt")); !strings.HasPrefix(got, "refused") || !strings.Contains(got, "Permission denied") {
		t.Errorf("read outside the grants: %q, want refused with Permission denied", got)
	}
	p.Stdin.Close()
	if rest, _ := out.ReadString('\n'); rest != "" {
		t.Errorf("output after end of input: %q", rest)
	}
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Sandbox.LandlockABI == 0 || !res.Sandbox.Seccomp || res.StdoutSHA256 == "" {
		t.Errorf("result %+v", res)
	}
}

// With no Timeout a started command outlives the default one, and the end
// of its context kills it.
func TestStartNoDeadline(t *testing.T) {
	requireSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Spec{Argv: []string{"sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, cancel)
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != "SIGKILL" || res.TimedOut {
		t.Errorf("signal %q timed out %v, want a SIGKILL by the context", res.Signal, res.TimedOut)
	}
}

// Start fails closed before anything runs, and refuses what it cannot
// stream.
func TestStartRefuses(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	if _, err := Start(context.Background(), Spec{Argv: []string{"touch", marker}, Write: []string{ws}, MinLandlockABI: 99}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
	for _, s := range []Spec{
		{Tool: ToolFileRead, Args: []byte(`{"path":"/etc/hostname"}`)},
		{Argv: []string{"cat"}, Stdin: []byte("x")},
	} {
		if _, err := Start(context.Background(), s); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("%+v: err = %v, want ErrInvalidSpec", s, err)
		}
	}
	p, err := Start(context.Background(), Spec{Argv: []string{"no-such-command-here"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
	absent(t, marker)
}

// BenchmarkStartRoundTrip is a started command that echoes one line back
// over its streams and ends (cat), paired with the anchor: Run of the same
// command with the line as Spec.Stdin, alternating.
func BenchmarkStartRoundTrip(b *testing.B) {
	if err := Check().Require(0); err != nil {
		b.Skip(err)
	}
	var r, s []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := Run(context.Background(), Spec{Argv: []string{"cat"}, Stdin: []byte("ping\n")}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		p, err := Start(context.Background(), Spec{Argv: []string{"cat"}})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintln(p.Stdin, "ping")
		if line, err := bufio.NewReader(p.Stdout).ReadString('\n'); err != nil || line != "ping\n" {
			b.Fatalf("%q %v", line, err)
		}
		p.Stdin.Close()
		if _, err := p.Wait(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		r, s = append(r, t1.Sub(t0)), append(s, t2.Sub(t1))
	}
	med := func(v []time.Duration) float64 { slices.Sort(v); return float64(v[len(v)/2]) / 1e6 }
	b.ReportMetric(med(r), "run-ms")
	b.ReportMetric(med(s), "start-ms")
	b.ReportMetric(0, "ns/op")
}
