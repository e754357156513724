// Package sandbox measures the cost of starting a sandboxed action against
// a plain fork/exec and bubblewrap. The numbers go in bench/README.md; run
// bench/sandbox.sh.
package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawsec/claw/executor"
)

var helperDir string

func TestMain(m *testing.M) {
	if code, ok := executor.EnterChild(os.Args); ok {
		os.Exit(code)
	}
	executor.AllowSelfExec()
	dir, err := os.MkdirTemp("", "claw-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755)
	helperDir = dir
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, executor.HelperName), "../../executor/cmd/claw-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the helper: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type contender struct {
	name   string
	run    func() error
	before func() // untimed, before each run
}

func plainTrue() error { return exec.Command("/bin/true").Run() }

func sandboxTrue() error {
	res, err := executor.Run(context.Background(), executor.Spec{Argv: []string{"/bin/true"}})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	return err
}

func bwrapTrue() error {
	return exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true").Run()
}

// bwrapAll is bwrap with confinement closer to claw's: every namespace, a
// new session, killed with its parent.
func bwrapAll() error {
	return exec.Command("bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "/bin/true").Run()
}

// grantTree is the bwrap argv of a root holding only the sandbox's
// grants: bwrap's own tmpfs root with the executor's system read grants
// (executor/run_linux.go, systemReadPaths), its devices, a fresh /proc and
// a tmpfs home bound in, every namespace as bwrapAll. Against bwrapAll (the
// whole tree bound) it measures what building such a tree per action
// costs: the mount namespace design that would hide stat, extended
// attributes and inotify outside the grants.
func grantTree() []string {
	argv := []string{"--unshare-all", "--die-with-parent", "--new-session"}
	for _, p := range []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		argv = append(argv, "--ro-bind-try", p, p)
	}
	for _, e := range []string{"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
		"hosts", "resolv.conf", "host.conf", "gai.conf", "localtime", "timezone", "services",
		"protocols", "ca-certificates", "ca-certificates.conf", "alternatives",
		"mime.types", "os-release", "debian_version", "bash.bashrc", "inputrc", "terminfo",
		"magic", "locale.alias", "locale.conf", "environment.d",
		"ssl/certs", "ssl/openssl.cnf", "ssl/cert.pem", "ssl/ca-bundle.pem",
		"pki/tls/certs", "pki/tls/cert.pem", "pki/tls/openssl.cnf", "pki/ca-trust"} {
		argv = append(argv, "--ro-bind-try", "/etc/"+e, "/etc/"+e)
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"} {
		argv = append(argv, "--dev-bind-try", d, d)
	}
	return append(argv, "--proc", "/proc", "--tmpfs", "/home/sandbox", "/bin/true")
}

var grantTreeArgv = grantTree()

func bwrapGrants() error { return exec.Command("bwrap", grantTreeArgv...).Run() }

func useHelper(t testing.TB) {
	executor.SetHelper(filepath.Join(helperDir, executor.HelperName))
	if err := executor.Check().Require(0); err != nil {
		t.Skipf("no sandbox: %v", err)
	}
}

func BenchmarkPlainTrue(b *testing.B) {
	for b.Loop() {
		if err := plainTrue(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSandboxTrue(b *testing.B) {
	useHelper(b)
	for b.Loop() {
		if err := sandboxTrue(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBwrapTrue(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap not installed")
	}
	for b.Loop() {
		if err := bwrapTrue(); err != nil {
			b.Fatal(err)
		}
	}
}

type stats struct{ median, p99, cpu time.Duration }

func summarize(d, cpu []time.Duration) stats {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	sort.Slice(cpu, func(i, j int) bool { return cpu[i] < cpu[j] })
	return stats{median: d[len(d)/2], p99: d[min(len(d)-1, len(d)*99/100)], cpu: cpu[len(cpu)/2]}
}

// childCPU is the user+system CPU time of every reaped descendant so far:
// less sensitive than wall time to other load on the machine.
func childCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs the contenders round-robin (so machine noise hits them
// alike) n times after warm-ups.
func measure(t *testing.T, n int, cs []contender) map[string]stats {
	t.Helper()
	for _, c := range cs {
		for range 5 {
			if c.before != nil {
				c.before()
			}
			if err := c.run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
	}
	ds := make(map[string][]time.Duration)
	cpu := make(map[string][]time.Duration)
	for range n {
		for _, c := range cs {
			if c.before != nil {
				c.before()
			}
			c0 := childCPU()
			start := time.Now()
			if err := c.run(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			ds[c.name] = append(ds[c.name], time.Since(start))
			// the sandbox's init is reaped just after Run returns: let
			// that happen before reading the children's CPU (untimed)
			time.Sleep(2 * time.Millisecond)
			cpu[c.name] = append(cpu[c.name], childCPU()-c0)
		}
	}
	out := map[string]stats{}
	for k, v := range ds {
		out[k] = summarize(v, cpu[k])
	}
	return out
}

// measureRuns runs each contender n times in a row (after warm-ups),
// one contender after the other.
func measureRuns(t *testing.T, n int, cs []contender) map[string]stats {
	t.Helper()
	out := map[string]stats{}
	for _, c := range cs {
		out[c.name] = measure(t, n, []contender{c})[c.name]
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// TestSpawnReport prints the table for bench/README.md. It runs only with
// CLAW_BENCH=1 (bench/sandbox.sh sets it). CLAW_BIN names a built claw for
// the whole-process rows.
func TestSpawnReport(t *testing.T) {
	if os.Getenv("CLAW_BENCH") == "" {
		t.Skip("set CLAW_BENCH=1 (bench/sandbox.sh)")
	}
	n := 200
	if v := os.Getenv("CLAW_BENCH_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	useHelper(t)
	_, err := exec.LookPath("bwrap")
	haveBwrap := err == nil

	// the helper started on demand; then with a child started ahead of the
	// action (executor.Prestart, what the long-lived programs use), given
	// the moment a real agent leaves between two actions to get it ready
	cold := func() { executor.StopPrestart() }
	prestarted := func() { executor.Prestart(); time.Sleep(20 * time.Millisecond) }
	warm := []contender{{name: "plain fork/exec /bin/true", run: plainTrue, before: cold},
		{name: "claw sandbox (helper, started on demand)", run: sandboxTrue},
		{name: "claw sandbox (helper, child prestarted)", run: sandboxTrue, before: prestarted}}
	if haveBwrap {
		warm = append(warm, contender{name: "bwrap --ro-bind / / --dev /dev --proc /proc", run: bwrapTrue, before: cold},
			contender{name: "bwrap --unshare-all --die-with-parent --new-session (same binds)", run: bwrapAll},
			contender{name: "bwrap --unshare-all …, only the grants bound (a tree of the grants)", run: bwrapGrants})
	}
	// the self-exec fallback: this test binary re-executed as the child
	selfTrue := func() error {
		executor.SetHelper("")
		defer executor.SetHelper(filepath.Join(helperDir, executor.HelperName))
		return sandboxTrue()
	}
	warm = append(warm, contender{name: "claw sandbox (self re-exec, test binary)", run: selfTrue})
	var b strings.Builder
	report := func(title string, cs []contender, res map[string]stats) {
		fmt.Fprintf(&b, "\n%s (n=%d each, interleaved)\n\n", title, n)
		fmt.Fprintf(&b, "| what | median | p99 | child CPU (median) | × plain | × bwrap |\n|---|---|---|---|---|---|\n")
		base := res[cs[0].name].median
		bw, hasBw := res["bwrap --ro-bind / / --dev /dev --proc /proc"]
		for _, c := range cs {
			s := res[c.name]
			rb := "–"
			if hasBw {
				rb = fmt.Sprintf("%.2f", float64(s.median)/float64(bw.median))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f | %s |\n", c.name, ms(s.median), ms(s.p99), ms(s.cpu), float64(s.median)/float64(base), rb)
		}
	}
	report("Warm Go process: Start→Wait of /bin/true", warm, measure(t, n, warm))

	// back to back: the next child is started while the current action
	// runs, so on two CPUs the two compete
	executor.Prestart()
	b2b := []contender{{name: "plain fork/exec /bin/true", run: plainTrue},
		{name: "claw sandbox (helper, child prestarted), back to back", run: sandboxTrue}}
	if haveBwrap {
		b2b = append(b2b, contender{name: "bwrap --ro-bind / / --dev /dev --proc /proc", run: bwrapTrue})
	}
	report("Warm Go process, actions back to back", b2b, measureRuns(t, n, b2b))
	executor.StopPrestart()

	if bin := os.Getenv("CLAW_BIN"); bin != "" {
		withHelper := filepath.Join(filepath.Dir(bin), executor.HelperName)
		whole := []contender{
			{name: "/bin/true", run: plainTrue},
			{name: "claw sandbox run -- /bin/true", run: func() error { return exec.Command(bin, "sandbox", "run", "--", "/bin/true").Run() }},
		}
		if _, err := os.Stat(withHelper); err != nil {
			t.Logf("no %s next to %s: the whole-process row measures the self re-exec", executor.HelperName, bin)
		}
		// CLAW_BIN_BASE: a claw built from another revision (with its
		// helper beside it), to compare in the same run
		if base := os.Getenv("CLAW_BIN_BASE"); base != "" {
			whole = append(whole, contender{name: "claw sandbox run -- /bin/true (base revision)", run: func() error { return exec.Command(base, "sandbox", "run", "--", "/bin/true").Run() }})
		}
		if haveBwrap {
			whole = append(whole, contender{name: "bwrap --ro-bind / / --dev /dev --proc /proc", run: bwrapTrue})
		}
		report("Whole processes (the CLI, cold: includes claw's start and its kernel probe)", whole, measure(t, max(n/4, 20), whole))
	}
	fmt.Print(b.String())
	if out := os.Getenv("CLAW_BENCH_OUT"); out != "" {
		os.WriteFile(out, []byte(b.String()), 0o644)
	}
}
