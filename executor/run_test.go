package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/internal/toolkind"
)

func bash(script string) []string { return []string{"bash", "-c", script} }

func TestPositiveControls(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	ro := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ro, "data"), []byte("readable\n"), 0o644))
	cases := []struct {
		name, script string
		want         string
	}{
		{"workspace read", "cat f.txt", "workspace file\n"},
		{"workspace write", "echo new > n.txt && cat n.txt && mkdir -p d/e && mv n.txt d/e/ && ls d/e", "new\nn.txt\n"},
		{"ls bin", "ls /bin >/dev/null && echo ok", "ok\n"},
		{"dev null", "echo x >/dev/null && head -c 3 /dev/zero | wc -c", "3\n"},
		{"read grant", "cat " + ro + "/data", "readable\n"},
		{"cwd is the workspace", "pwd", f.ws + "\n"},
		{"home is private", `test -d "$HOME" && test -w "$HOME" && echo ok`, "ok\n"},
		{"tmpdir", `t=$(mktemp) && echo ok`, "ok\n"},
		{"socketpair stays", probeArgv("socketpair")[0], "allowed\n"},
		{"pipes and subshells", "echo a | tr a b; echo $(echo c)", "b\nc\n"},
		{"process substitution", "cat <(echo d)", "d\n"},
		{"no new privs and no capabilities", "grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status | tr -d '\\t'", "CapEff:0000000000000000\nCapBnd:0000000000000000\nNoNewPrivs:1\n"},
		{"only sandbox processes visible", "ls /proc | grep -c '^[0-9]' | awk '$1 < 6 {print \"ok\"}'", "ok\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := f.spec(bash(c.script)...)
			s.Read = append(s.Read, ro)
			if c.name == "socketpair stays" {
				s.Argv = probeArgv("socketpair")
			}
			res := run(t, s)
			if res.ExitCode != 0 || string(res.Stdout) != c.want {
				t.Fatalf("exit %d stdout %q stderr %q, want %q", res.ExitCode, res.Stdout, res.Stderr, c.want)
			}
		})
	}
}

func TestResultReportsSandbox(t *testing.T) {
	requireSandbox(t)
	res := run(t, Spec{Argv: []string{"true"}})
	sb := res.Sandbox
	if sb.LandlockABI < DefaultMinLandlockABI || !sb.Seccomp || !sb.NoNewPrivs || !sb.CapsDropped || len(sb.Namespaces) == 0 || sb.Degraded {
		t.Fatalf("sandbox = %+v", sb)
	}
	if res.StdoutSHA256 == "" || res.OutputSHA256 == "" {
		t.Fatalf("no hashes: %+v", res)
	}
}

func TestExitStatus(t *testing.T) {
	requireSandbox(t)
	res := run(t, Spec{Argv: bash("exit 42")})
	if res.ExitCode != 42 {
		t.Errorf("exit = %d, want 42", res.ExitCode)
	}
	res = run(t, Spec{Argv: bash("kill -SEGV $$")})
	if res.Signal != "SIGSEGV" || res.ExitCode != 128+11 {
		t.Errorf("signal = %q exit %d, want SIGSEGV", res.Signal, res.ExitCode)
	}
}

func TestNotFound(t *testing.T) {
	requireSandbox(t)
	for _, argv := range [][]string{{"claw-no-such-command"}, {"/no/such/program"}} {
		res, err := Run(context.Background(), Spec{Argv: argv})
		if !errors.Is(err, ErrNotFound) || res.ExitCode != 127 {
			t.Errorf("%v: err %v exit %d, want ErrNotFound and 127", argv, err, res.ExitCode)
		}
	}
}

func TestSetupFailureRunsNothing(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	res, err := Run(context.Background(), Spec{Argv: []string{"touch", marker}, Write: []string{ws}, Cwd: "/nonexistent/dir"})
	var se *SetupError
	if !errors.As(err, &se) || res.ExitCode != 126 {
		t.Fatalf("err %v exit %d, want a SetupError and 126", err, res.ExitCode)
	}
	absent(t, marker)
}

func TestUnavailable(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	marker := filepath.Join(ws, "ran")
	_, err := Run(context.Background(), Spec{Argv: []string{"touch", marker}, Write: []string{ws}, MinLandlockABI: 99})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	absent(t, marker)
}

func TestEnvironmentHasNoSecrets(t *testing.T) {
	requireSandbox(t)
	t.Setenv("OPENAI_API_KEY", "sk-test-planted-0123456789")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-planted-secret")
	t.Setenv("SSH_AUTH_SOCK", "/tmp/planted-agent.sock")
	t.Setenv("GITHUB_TOKEN", "ghp_planted")
	res := run(t, Spec{Argv: bash("env; tr '\\0' '\\n' < /proc/self/environ; tr '\\0' '\\n' < /proc/1/environ")})
	out := string(res.Stdout) + string(res.Stderr)
	for _, s := range []string{"sk-test", "aws-planted", "planted-agent", "ghp_planted", "OPENAI", "AWS_", "SSH_AUTH_SOCK"} {
		if strings.Contains(out, s) {
			t.Errorf("sandbox environment contains %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "TERM=dumb") || !strings.Contains(out, "PATH=") {
		t.Errorf("allowlisted variables missing:\n%s", out)
	}
	if _, err := Run(context.Background(), Spec{Argv: []string{"env"}, Env: []string{"OPENAI_API_KEY"}}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("passing a secret-looking variable: err %v, want ErrInvalidSpec", err)
	}
	res = run(t, Spec{Argv: bash("echo $EXAMPLE_VAR $LANG"), Env: []string{"EXAMPLE_VAR=one", "LANG=C"}})
	if got := strings.TrimSpace(string(res.Stdout)); got != "one C" {
		t.Errorf("added variables: %q", got)
	}
	// a credential handed over by name reaches the child; the rest stay out
	res = run(t, Spec{Argv: bash("echo $UPSTREAM_TOKEN $GITHUB_TOKEN"), Secrets: []string{"UPSTREAM_TOKEN=tok-given"}})
	if got := strings.TrimSpace(string(res.Stdout)); got != "tok-given" {
		t.Errorf("secrets: %q, want tok-given", got)
	}
}

// survivors lists processes whose command line contains marker.
func survivors(marker string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// runBounded runs s, but gives up waiting after d: a Run that hangs
// fails the test instead of stalling it.
func runBounded(s Spec, d time.Duration) (Result, time.Duration, error) {
	type ret struct {
		res Result
		err error
	}
	done := make(chan ret, 1)
	start := time.Now()
	go func() {
		res, err := Run(context.Background(), s)
		done <- ret{res, err}
	}()
	select {
	case r := <-done:
		return r.res, time.Since(start), r.err
	case <-time.After(d):
		return Result{}, d, fmt.Errorf("Run did not return within %v", d)
	}
}

// TestTimeoutKillsTree: at the timeout the whole tree is killed, however
// it hid, and Run returns within a bound well above the timeout (a hang
// fails it). A background process that only holds the output pipe is no
// reason to wait: Run returns when the command exits (its init reports
// the exit and takes the namespace with it), not at the timeout, with the
// command's own status. That case fails if Run waited for the end of the
// output or for every process of the namespace.
func TestTimeoutKillsTree(t *testing.T) {
	requireSandbox(t)
	cases := []struct {
		name, script string
		timeout      time.Duration
		timedOut     bool
	}{
		{"sleep", "sleep 1001.1", time.Second, true},
		{"setsid background", "setsid sleep 1001.2 & sleep 1001.21", time.Second, true},
		{"double fork", "(sleep 1001.3 &) ; sleep 1001.31", time.Second, true},
		{"trap TERM", "trap '' TERM INT HUP; sleep 1001.4", time.Second, true},
		{"background holding the pipe", "sleep 1001.5 & exit 0", 5 * time.Second, false},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, el, err := runBounded(Spec{Argv: bash(c.script), Timeout: c.timeout}, 10*time.Second)
			switch {
			case err != nil:
				t.Errorf("%s: %v", c.name, err)
			case res.TimedOut != c.timedOut:
				t.Errorf("%s: timed out %v, want %v, after %v: %+v", c.name, res.TimedOut, c.timedOut, el, res)
			case !c.timedOut && (res.ExitCode != 0 || el >= c.timeout):
				t.Errorf("%s: exit %d after %v, want 0 before the timeout", c.name, res.ExitCode, el)
			}
		}()
	}
	wg.Wait()
	if s := survivors("1001."); len(s) > 0 {
		t.Fatalf("survivors: %v", s)
	}
}

// runProcs follows one run's processes from outside: those whose command
// line holds its marker, and every process in the sessions and job
// cgroups of those (the sandbox's init among them, and anything that left
// the session).
type runProcs struct {
	marker   string
	sessions map[string]bool
	cgroups  map[string]bool
	most     int // the most seen at once
}

// scan lists the run's processes now.
func (r *runProcs) scan() []string {
	type proc struct {
		pid, cmd, sid string
		cgs           []string
	}
	var procs []proc
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmd, err1 := os.ReadFile(filepath.Join(dir, "cmdline"))
		stat, err2 := os.ReadFile(filepath.Join(dir, "stat"))
		cg, err3 := os.ReadFile(filepath.Join(dir, "cgroup"))
		if err1 != nil || err2 != nil || err3 != nil {
			continue // gone
		}
		p := proc{pid: e.Name(), cmd: strings.ReplaceAll(string(cmd), "\x00", " ")}
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 3 {
				p.sid = f[3] // state, ppid, pgrp, session
			}
		}
		for _, l := range strings.Split(string(cg), "\n") {
			if strings.Contains(l, "/claw-") {
				p.cgs = append(p.cgs, l)
			}
		}
		procs = append(procs, p)
		if strings.Contains(p.cmd, r.marker) {
			r.sessions[p.sid] = true
			for _, l := range p.cgs {
				r.cgroups[l] = true
			}
		}
	}
	var found []string
	for _, p := range procs {
		in := strings.Contains(p.cmd, r.marker) || r.sessions[p.sid]
		for _, l := range p.cgs {
			in = in || r.cgroups[l]
		}
		if in {
			found = append(found, p.pid+": "+p.cmd)
		}
	}
	r.most = max(r.most, len(found))
	return found
}

// runTracked runs s, counting its processes (see runProcs) while it runs,
// and fails unless it ends by its timeout or by itself and leaves no
// process behind.
func runTracked(t *testing.T, s Spec, marker string) (Result, *runProcs) {
	t.Helper()
	r := &runProcs{marker: marker, sessions: map[string]bool{}, cgroups: map[string]bool{}}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				r.scan()
			}
		}
	}()
	res, el, err := runBounded(s, s.Timeout+10*time.Second)
	close(stop)
	<-stopped
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, res.Stderr)
	}
	if len(r.sessions) == 0 {
		t.Fatalf("no process of the run was seen in %v", el)
	}
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left := r.scan()
		if len(left) == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("processes of the run left 2 s after it ended: %v", left)
		}
	}
	return res, r
}

// TestForkBombBounded: the process count of a sandbox never exceeds
// Limits.Processes, a fork bomb ends at the timeout (or by itself), leaves
// no process behind, and claw survives it. As root the bound is the job's
// pids cgroup (RLIMIT_NPROC does not apply to uid 0), and the counted
// bomb fails without it: its fork would go on to its own cap, 4 times the
// limit.
func TestForkBombBounded(t *testing.T) {
	requireSandbox(t)
	const limit = 64
	bounded := os.Geteuid() != 0 || jobCgroups().version != ""
	if !bounded {
		t.Log("root without a pids cgroup: only the timeout bounds the process count, which is not checked")
	}
	// A counted bomb: forks children that wait, until fork fails, and
	// reports how many it started in a file of the workspace. With the
	// sandbox's init (one task at least) and the prober itself, they
	// must fit in the limit.
	inEveryMode(t, func(t *testing.T) {
		ws := t.TempDir()
		counter := filepath.Join(ws, "forked")
		s := Spec{Argv: sysprobeArgv(t, "fork", strconv.Itoa(4*limit), counter, "1002.2"), Read: []string{testBin}, Write: []string{ws},
			Timeout: 10 * time.Second, Limits: Limits{Processes: limit}}
		res, procs := runTracked(t, s, "1002.2")
		if res.TimedOut || res.ExitCode != 0 {
			t.Fatalf("the counted bomb did not end by itself: %+v", res)
		}
		b, err := os.ReadFile(counter)
		must(t, err)
		var n int
		var why string
		if _, err := fmt.Sscan(string(b), &n, &why); err != nil || string(b) != string(res.Stdout) {
			t.Fatalf("counter %q, stdout %q", b, res.Stdout)
		}
		if bounded && (why != "EAGAIN" || n+2 > limit || procs.most > limit) {
			t.Fatalf("%d forks (then %s), %d processes seen at once, with a limit of %d", n, why, procs.most, limit)
		}
		t.Logf("%d forks, then %s; %d processes seen at once", n, why, procs.most)
	})
	// A real one, which bash keeps retrying until the timeout.
	t.Run("bash", func(t *testing.T) {
		res, procs := runTracked(t, Spec{Argv: bash("bomb() { bomb | bomb & }; bomb; sleep 1002.1"), Timeout: 2 * time.Second, Limits: Limits{Processes: limit}}, "1002.1")
		if bounded && procs.most > limit {
			t.Errorf("%d processes seen at once, with a limit of %d", procs.most, limit)
		}
		if !res.TimedOut {
			t.Errorf("the bomb ended before its timeout: %+v", res)
		}
		t.Logf("%d processes seen at once", procs.most)
	})
	// claw (this process) is still fine and can run another action
	if r := run(t, Spec{Argv: []string{"true"}}); r.ExitCode != 0 {
		t.Fatalf("after the bomb: %+v", r)
	}
}

// TestOutputFloodCapped: a flood of output is kept up to MaxOutput, head
// and tail, while the digests cover every byte the command wrote (as
// Result documents): StdoutSHA256 is the SHA-256 of the whole stream, not
// of the kept part, and OutputSHA256 the SHA-256 of the stdout and stderr
// digests' raw bytes, concatenated.
func TestOutputFloodCapped(t *testing.T) {
	requireSandbox(t)
	res := run(t, Spec{Argv: bash("yes | head -c 50000000; echo done >&2"), MaxOutput: 64 << 10})
	if !res.StdoutTruncated || res.StdoutBytes != 50000000 {
		t.Fatalf("truncated %v bytes %d", res.StdoutTruncated, res.StdoutBytes)
	}
	if len(res.Stdout) > 64<<10+len(truncationMark) {
		t.Fatalf("kept %d bytes", len(res.Stdout))
	}
	if !bytes.HasPrefix(res.Stdout, []byte("y\ny\n")) || !bytes.HasSuffix(res.Stdout, []byte("y\ny\n")) {
		t.Fatalf("head/tail not kept")
	}
	whole := sha256.New()
	chunk := bytes.Repeat([]byte("y\n"), 1<<15)
	for n := 0; n < 50000000; n += len(chunk) {
		whole.Write(chunk[:min(len(chunk), 50000000-n)])
	}
	so, se := whole.Sum(nil), sha256.Sum256([]byte("done\n"))
	if string(res.Stderr) != "done\n" || res.StderrTruncated {
		t.Fatalf("stderr %q truncated %v", res.Stderr, res.StderrTruncated)
	}
	if want := hex.EncodeToString(so); res.StdoutSHA256 != want {
		t.Errorf("stdout digest %s, want %s (the whole stream's)", res.StdoutSHA256, want)
	}
	if want := hex.EncodeToString(se[:]); res.StderrSHA256 != want {
		t.Errorf("stderr digest %s, want %s", res.StderrSHA256, want)
	}
	both := sha256.Sum256(append(so, se[:]...))
	if want := hex.EncodeToString(both[:]); res.OutputSHA256 != want {
		t.Errorf("output digest %s, want SHA-256(stdout digest || stderr digest) = %s", res.OutputSHA256, want)
	}
	// endless output ends at the timeout, with memory bounded
	res = run(t, Spec{Argv: []string{"yes"}, MaxOutput: 4096, Timeout: time.Second})
	if !res.TimedOut || !res.StdoutTruncated || len(res.Stdout) > 4096+len(truncationMark) {
		t.Fatalf("yes: timed out %v truncated %v kept %d", res.TimedOut, res.StdoutTruncated, len(res.Stdout))
	}
}

func TestFileSizeLimit(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	res := run(t, Spec{Argv: bash("dd if=/dev/zero of=big bs=1M count=64"), Write: []string{ws}, Limits: Limits{FileSizeBytes: 1 << 20}})
	if res.ExitCode == 0 {
		t.Fatalf("dd succeeded")
	}
	fi, err := os.Stat(filepath.Join(ws, "big"))
	if err == nil && fi.Size() > 1<<20 {
		t.Fatalf("file grew to %d bytes", fi.Size())
	}
}

func TestMemoryBounded(t *testing.T) {
	requireSandbox(t)
	res := run(t, Spec{Argv: bash(`x=$(head -c 400000000 /dev/zero | tr '\0' a); echo ${#x}`), Limits: Limits{MemoryBytes: 128 << 20}})
	if res.ExitCode == 0 && strings.TrimSpace(string(res.Stdout)) == "400000000" {
		t.Fatalf("allocated 400 MB under a 128 MiB limit")
	}
}

func TestConcurrentRunsIsolated(t *testing.T) {
	requireSandbox(t)
	a, b := t.TempDir(), t.TempDir()
	var wg sync.WaitGroup
	var ra, rb Result
	wg.Add(2)
	go func() {
		defer wg.Done()
		ra = run(t, Spec{Argv: bash("echo a > f; ls " + b + " 2>&1; true"), Write: []string{a}})
	}()
	go func() {
		defer wg.Done()
		rb = run(t, Spec{Argv: bash("echo b > f; cat " + a + "/f 2>&1; true"), Write: []string{b}})
	}()
	wg.Wait()
	if bytes.Contains(rb.Stdout, []byte("a\n")) || !bytes.Contains(ra.Stdout, []byte("denied")) {
		t.Fatalf("a: %q b: %q", ra.Stdout, rb.Stdout)
	}
}

func TestRootRunAs(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	inEveryMode(t, func(t *testing.T) {
		ws := t.TempDir()
		must(t, os.Chmod(ws, 0o777))
		must(t, os.Chmod(filepath.Dir(ws), 0o755))
		res := run(t, Spec{Argv: bash("id -u; id -g; touch mine; su -c id root </dev/null 2>&1 || echo su-failed"), Write: []string{ws}, RunAs: "65534"})
		lines := strings.Fields(string(res.Stdout))
		if len(lines) < 3 || lines[0] != "65534" || lines[len(lines)-1] != "su-failed" {
			t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
		}
		var st fileOwner
		st, err := ownerOf(filepath.Join(ws, "mine"))
		must(t, err)
		if st.uid != 65534 {
			t.Fatalf("file owned by %d", st.uid)
		}
		// Every capability set empty, the bounding set included, also after
		// the change of uid (dropping from the bounding set needs CAP_SETPCAP
		// in the effective set, which the uid change clears if done first).
		res = run(t, Spec{Argv: bash("grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Uid):' /proc/self/status"), RunAs: "65534"})
		status := string(res.Stdout)
		for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
			if !regexp.MustCompile(`(?m)^` + set + `:\s+0+$`).MatchString(status) {
				t.Errorf("run as 65534: %s not empty:\n%s", set, status)
			}
		}
		if !regexp.MustCompile(`(?m)^Uid:\s+65534\s+65534\s+65534\s+65534$`).MatchString(status) {
			t.Errorf("run as 65534: uids:\n%s", status)
		}
	})
}

func TestTools(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	tool := func(name toolkind.Kind, args any, write ...string) Result {
		t.Helper()
		b, _ := json.Marshal(args)
		res := run(t, Spec{Tool: name, Args: b, Read: []string{f.ws}, Write: write})
		if res.Tool == nil {
			t.Fatalf("%s: no tool result: %+v stderr %q", name, res, res.Stderr)
		}
		return res
	}
	path := filepath.Join(f.ws, "f.txt")
	r := tool(ToolFileRead, map[string]any{"path": path})
	if r.Tool.Error != "" || !strings.Contains(string(r.Tool.Payload), "workspace file") {
		t.Fatalf("file_read: %+v", r.Tool)
	}
	if r := tool(ToolFileRead, map[string]any{"path": f.secret}); r.Tool.Error == "" {
		t.Fatalf("file_read outside: %+v", r.Tool)
	}
	must(t, os.WriteFile(filepath.Join(f.ws, "bin"), []byte{0, 1, 2, 0xff}, 0o644))
	if r := tool(ToolFileRead, map[string]any{"path": filepath.Join(f.ws, "bin")}); !strings.Contains(r.Tool.Error, "binary") {
		t.Fatalf("file_read binary: %+v", r.Tool)
	}
	if r := tool(ToolFileWrite, map[string]any{"path": filepath.Join(f.ws, "w.txt"), "content": "hello\nworld\n"}, f.ws); r.Tool.Error != "" {
		t.Fatalf("file_write: %+v", r.Tool)
	}
	fileIs(t, filepath.Join(f.ws, "w.txt"), "hello\nworld\n")
	if r := tool(ToolFileWrite, map[string]any{"path": filepath.Join(f.ws, "w.txt"), "content": "x"}); r.Tool.Error == "" {
		t.Fatalf("file_write without a write grant: %+v", r.Tool)
	}
	if r := tool(ToolFileWrite, map[string]any{"path": filepath.Join(f.outside, "w.txt"), "content": "x"}, f.ws); r.Tool.Error == "" {
		t.Fatalf("file_write outside: %+v", r.Tool)
	}
	absent(t, filepath.Join(f.outside, "w.txt"))
	if r := tool(ToolFileWrite, map[string]any{"path": filepath.Join(f.ws, "big"), "content": strings.Repeat("x", 100), "max_bytes": 10}, f.ws); r.Tool.Error == "" {
		t.Fatalf("file_write over the cap: %+v", r.Tool)
	}
	if r := tool(ToolEditFile, map[string]any{"path": filepath.Join(f.ws, "w.txt"), "old": "world", "new": "there"}, f.ws); r.Tool.Error != "" {
		t.Fatalf("edit_file: %+v", r.Tool)
	}
	fileIs(t, filepath.Join(f.ws, "w.txt"), "hello\nthere\n")
	must(t, os.WriteFile(filepath.Join(f.ws, "dup.txt"), []byte("a a"), 0o644))
	if r := tool(ToolEditFile, map[string]any{"path": filepath.Join(f.ws, "dup.txt"), "old": "a", "new": "b"}, f.ws); !strings.Contains(r.Tool.Error, "2 times") {
		t.Fatalf("edit_file not unique: %+v", r.Tool)
	}
	if r := tool(ToolEditFile, map[string]any{"path": filepath.Join(f.ws, "dup.txt"), "old": "zz", "new": "b"}, f.ws); !strings.Contains(r.Tool.Error, "not found") {
		t.Fatalf("edit_file missing: %+v", r.Tool)
	}
	must(t, os.MkdirAll(filepath.Join(f.ws, "a", "b", "c"), 0o755))
	r = tool(ToolFileList, map[string]any{"path": f.ws, "depth": 2})
	var list struct{ Entries []struct{ Path, Type string } }
	must(t, json.Unmarshal(r.Tool.Payload, &list))
	var names []string
	for _, e := range list.Entries {
		names = append(names, e.Path)
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, "a/b") || strings.Contains(got, "a/b/c") || !strings.Contains(got, "f.txt") {
		t.Fatalf("file_list: %s", got)
	}
}

func TestHTTPTool(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
			return
		}
		fmt.Fprint(w, "hello from the test server")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	base := "http://127.0.0.1:" + strconv.Itoa(int(port))
	t.Run("on demand", func(t *testing.T) { httpCases(t, base, port) })
	t.Run("armed", func(t *testing.T) { inArmedWorkers(t, func(t *testing.T) { httpCases(t, base, port) }) })
}

func httpCases(t *testing.T, base string, port uint16) {
	call := func(args map[string]any, ports ...uint16) *ToolResult {
		b, _ := json.Marshal(args)
		res := run(t, Spec{Tool: ToolHTTP, Args: b, Net: Net{Ports: ports}})
		if res.Tool == nil {
			t.Fatalf("no tool result: %+v %q", res, res.Stderr)
		}
		return res.Tool
	}
	if r := call(map[string]any{"url": base + "/", "allow_private": true}, port); r.Error != "" || !strings.Contains(string(r.Payload), "hello from the test server") {
		t.Fatalf("allowed request: %+v", r)
	}
	if r := call(map[string]any{"url": base + "/"}, port); !strings.Contains(r.Error, "not public") {
		t.Fatalf("private address without allow_private: %+v", r)
	}
	if r := call(map[string]any{"url": base + "/", "allow_private": true}, 80, 443); r.Error == "" {
		t.Fatalf("port not granted: %+v", r)
	}
	if r := call(map[string]any{"url": base + "/redirect", "allow_private": true}, port, 80); !strings.Contains(r.Error, "metadata") {
		t.Fatalf("redirect to metadata: %+v", r)
	}
	if r := call(map[string]any{"url": base + "/", "allow_private": true, "allow_hosts": []string{"example.com"}}, port); !strings.Contains(r.Error, "allowlist") {
		t.Fatalf("host allowlist: %+v", r)
	}
	if r := call(map[string]any{"url": "file:///etc/passwd"}, 80); !strings.Contains(r.Error, "scheme") {
		t.Fatalf("scheme: %+v", r)
	}
}

// The sysctl-inferred support (used by a short-lived claw, which does not
// probe) must agree with the probe on what both read the same way, and
// must never claim less confinement than the probe finds: Run falls back to
// the probe only when the inferred mode fails, so an inference that asks
// for less would silently run every action less confined. Claiming more is
// allowed (a container may refuse a fresh /proc); Run then retries with the
// probe's answer, which the last step checks.
func TestFastSupportMatchesProbe(t *testing.T) {
	requireSandbox(t)
	if bad := supportMismatch(fastSupport(), Check()); bad != "" {
		t.Fatal(bad)
	}
	if res := run(t, Spec{Argv: []string{"true"}}); res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
}

// supportMismatch says how the inferred support f disagrees with the
// probed support p, or returns "".
func supportMismatch(f, p Support) string {
	var bad []string
	same := func(name string, a, b any) {
		if a != b {
			bad = append(bad, fmt.Sprintf("%s: inferred %v, probed %v", name, a, b))
		}
	}
	same("kernel", f.Kernel, p.Kernel)
	same("landlock ABI", f.LandlockABI, p.LandlockABI)
	same("landlock errata", f.LandlockErrata, p.LandlockErrata)
	same("root", f.Root, p.Root)
	same("helper", f.Helper, p.Helper)
	notLess := func(name string, inferred, probed bool) {
		if probed && !inferred {
			bad = append(bad, name+": the probe has it, the inference does not (Run would not use it)")
		}
	}
	notLess("seccomp", f.Seccomp, p.Seccomp)
	notLess("user namespace", f.ns.user, p.ns.user)
	notLess("pid namespace", f.ns.pid, p.ns.pid)
	notLess("mount namespace", f.ns.mount, p.ns.mount)
	notLess("net namespace", f.ns.net, p.ns.net)
	notLess("ipc namespace", f.ns.ipc, p.ns.ipc)
	notLess("uts namespace", f.ns.uts, p.ns.uts)
	notLess("cgroup namespace", f.ns.cgroup, p.ns.cgroup)
	notLess("fresh /proc", f.ns.proc, p.ns.proc)
	return strings.Join(bad, "; ")
}

// TestFastSupportLeavesCgroupsToTheAction: the support a short-lived
// claw infers does not read the cgroup hierarchy (its own cgroup, the
// controllers' mounts, the stale job groups to sweep): an action started
// on demand does, once its child is starting.
func TestFastSupportLeavesCgroupsToTheAction(t *testing.T) {
	if f := staticSupport(false); f.Cgroup != "" {
		t.Fatalf("the inferred support found cgroup %s", f.Cgroup)
	}
}

// TestSupportMismatchIsFound proves supportMismatch can fail.
func TestSupportMismatchIsFound(t *testing.T) {
	p := Support{LandlockABI: 4, Seccomp: true, ns: nsMode{user: true, pid: true, mount: true, net: true, proc: true}}
	if bad := supportMismatch(p, p); bad != "" {
		t.Fatalf("equal support reported: %s", bad)
	}
	more := p
	more.ns.ipc, more.ns.uts = true, true
	if bad := supportMismatch(more, p); bad != "" {
		t.Fatalf("inferring more reported: %s", bad)
	}
	for name, f := range map[string]func(*Support){
		"landlock ABI": func(s *Support) { s.LandlockABI = 3 },
		"seccomp":      func(s *Support) { s.Seccomp = false },
		"pid":          func(s *Support) { s.ns.pid = false },
		"fresh /proc":  func(s *Support) { s.ns.proc = false },
	} {
		less := p
		f(&less)
		if bad := supportMismatch(less, p); !strings.Contains(bad, name) {
			t.Errorf("%s: mismatch = %q, want one naming it", name, bad)
		}
	}
}

// TestCancelKillsTree: cancelling the context (as the emergency stop does)
// kills the whole process tree, including processes that left the
// session, within a second.
func TestCancelKillsTree(t *testing.T) {
	requireSandbox(t)
	cases := []struct{ name, script, marker string }{
		{"sleep", "sleep 1003.1", "1003.1"},
		{"child of bash -c", "bash -c 'sleep 1003.2 & sleep 1003.21; wait'", "1003.2"},
		{"setsid background", "setsid sleep 1003.3 & sleep 1003.31", "1003.3"},
		{"double fork", "(sleep 1003.4 &) ; sleep 1003.41", "1003.4"},
		{"trap TERM", "trap '' TERM INT HUP; sleep 1003.5", "1003.5"},
	}
	// Without a PID namespace a process that called setsid is out of the
	// session's group; the job cgroup still holds it.
	noNS := fastSupport()
	noNS.ns = nsMode{}
	modes := []struct {
		name string
		run  func(context.Context, Spec) (Result, error)
	}{
		{"default", Run},
		{"no namespaces", func(ctx context.Context, s Spec) (Result, error) { return runWith(ctx, s, noNS) }},
	}
	if os.Getuid() != 0 {
		modes = modes[:1] // without a user namespace only root may run unshared
	}
	for _, m := range modes {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				if m.name != "default" && c.name == "setsid background" && jobCgroups().version == "" {
					t.Skip("no delegated cgroup: a setsid'd process outside a PID namespace is only bounded by the session")
				}
				cancelKillsTree(t, m.run, c.script, c.marker)
			})
		}
	}
}

func cancelKillsTree(t *testing.T, run func(context.Context, Spec) (Result, error), script, marker string) {
	t.Helper()
	{
		{
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type ret struct {
				res Result
				err error
				at  time.Time
			}
			done := make(chan ret, 1)
			go func() {
				res, err := run(ctx, Spec{Argv: bash(script), Timeout: time.Minute})
				done <- ret{res, err, time.Now()}
			}()
			for deadline := time.Now().Add(20 * time.Second); len(survivors(marker)) == 0; time.Sleep(5 * time.Millisecond) {
				select {
				case r := <-done:
					t.Fatalf("finished before the cancel: err %v, %+v", r.err, r.res)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("the tree never started")
				}
			}
			time.Sleep(50 * time.Millisecond) // let every branch start
			cancelled := time.Now()
			cancel()
			var r ret
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return within 5 s of the cancel")
			}
			if r.err != nil || r.res.TimedOut || r.res.Signal == "" {
				t.Fatalf("cancelled run: err %v, %+v", r.err, r.res)
			}
			for end := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
				s := survivors(marker)
				if len(s) == 0 {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("survivors a second after the cancel: %v", s)
				}
			}
			t.Logf("cancel → Run returned in %v, tree gone in %v", r.at.Sub(cancelled), time.Since(cancelled))
		}
	}
}

// TestProtectKeepsPathsReadOnly: a path listed in Protect inside the
// writable workspace cannot be changed (a git hook cannot be planted or
// edited), while the rest of the workspace stays writable.
func TestProtectKeepsPathsReadOnly(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	hooks := filepath.Join(ws, ".git", "hooks")
	must(t, os.MkdirAll(hooks, 0o777))
	must(t, os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o666))
	os.Chmod(ws, 0o777)
	os.Chmod(filepath.Join(ws, ".git"), 0o777)
	os.Chmod(hooks, 0o777)
	res := run(t, Spec{Argv: bash("echo x > .git/hooks/pre-commit; echo y >> .git/config; echo z > ok; true"), Cwd: ws, Write: []string{ws},
		Protect: []string{hooks, filepath.Join(ws, ".git", "config"), filepath.Join(ws, ".envrc")}, RunAs: ""})
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); err == nil {
		t.Errorf("a hook was planted in a protected directory: %q", res.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "ok")); err != nil {
		t.Errorf("the workspace is no longer writable: %v %q", err, res.Stderr)
	}
}
