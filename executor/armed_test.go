package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// armed runs f with Prestart on and every action with a plan in a worker
// armed for it, and fails unless runs actions took one.
func armed(t *testing.T, runs int64, f func()) {
	t.Helper()
	Prestart()
	armEvery = true
	defer func() {
		armEvery = false
		StopPrestart()
	}()
	before := armedTaken.Load()
	f()
	if n := armedTaken.Load() - before; n != runs {
		t.Fatalf("%d of %d runs took an armed worker", n, runs)
	}
}

// waitArmed waits until every armed worker on its way is ready (or
// failed) and leaves them in place.
func waitArmed() {
	warm.Lock()
	var chs []chan *proc
	for _, s := range warm.slots {
		chs = append(chs, s.workers...)
	}
	warm.Unlock()
	for _, ch := range chs {
		p := <-ch
		ch <- p
	}
}

// TestArmedWorker: an action with the plan of an earlier one runs in a
// worker already confined to it, with the same confinement and results
// as a child started for it, a tool in process included.
func TestArmedWorker(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	t.Setenv("CLAW_TEST_API_KEY", "sk-planted-armed-0123456789")
	Prestart()
	defer StopPrestart()
	script := "grep -E '^(Seccomp|NoNewPrivs|CapEff|CapBnd):' /proc/self/status; env; echo > " + filepath.Join(f.outside, "x") + " || echo denied"
	b, _ := json.Marshal(map[string]any{"path": filepath.Join(f.ws, "f.txt")})
	for i := range 3 {
		before := armedTaken.Load()
		res := run(t, f.spec("bash", "-c", script))
		tool := run(t, Spec{Tool: ToolFileRead, Args: b, Read: []string{f.ws}})
		if n := armedTaken.Load() - before; i > 0 && n != 2 {
			t.Fatalf("round %d: %d of 2 actions took an armed worker", i, n)
		}
		out := string(res.Stdout)
		for _, want := range []string{"Seccomp:\t2", "NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "denied"} {
			if !strings.Contains(out, want) {
				t.Errorf("round %d: missing %q in:\n%s", i, want, out)
			}
		}
		if strings.Contains(out, "sk-planted") {
			t.Error("the planted key reached the sandbox")
		}
		absent(t, filepath.Join(f.outside, "x"))
		if res.Sandbox.LandlockABI == 0 || !res.Sandbox.Seccomp || !res.Sandbox.ReadOnlyFS || !res.Sandbox.FreshProc || !res.Sandbox.CapsDropped {
			t.Errorf("round %d: applied %+v", i, res.Sandbox)
		}
		if tool.Tool == nil || tool.Tool.Error != "" || !strings.Contains(string(tool.Tool.Payload), "workspace file") || !tool.Sandbox.ToolInProcess {
			t.Errorf("round %d: file_read: %+v in process %v, stderr %q", i, tool.Tool, tool.Sandbox.ToolInProcess, tool.Stderr)
		}
	}
}

// TestArmedWorkerKeepsToItsPlan: a worker armed for one plan is never
// used for another, so an action never gets another action's grants.
func TestArmedWorkerKeepsToItsPlan(t *testing.T) {
	requireSandbox(t)
	a, b := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(a, "a.txt"), []byte("in a\n"), 0o644))
	readA := Spec{Argv: []string{"cat", filepath.Join(a, "a.txt")}, Read: []string{a}}
	readAGrantB := Spec{Argv: []string{"cat", filepath.Join(a, "a.txt")}, Read: []string{b}}
	Prestart()
	defer StopPrestart()
	run(t, readA)
	waitArmed()
	before := armedTaken.Load()
	res := run(t, readAGrantB)
	if armedTaken.Load() != before {
		t.Error("the worker armed for another plan was taken")
	}
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "in a") {
		t.Errorf("read outside the plan: exit %d stdout %q", res.ExitCode, res.Stdout)
	}
	if res = run(t, readA); armedTaken.Load() != before+1 || string(res.Stdout) != "in a\n" {
		t.Errorf("the worker of its own plan: taken %d, stdout %q", armedTaken.Load()-before, res.Stdout)
	}
}

// TestArmedWorkerPathsChanged: a worker whose granted paths changed since
// it confined itself (a protected path created, a granted directory
// replaced) is not used: it would protect or grant other files than the
// plan's.
func TestArmedWorkerPathsChanged(t *testing.T) {
	requireSandbox(t)
	ws, dir := t.TempDir(), t.TempDir()
	hooks := filepath.Join(ws, ".git", "hooks")
	write := Spec{Argv: bash("echo x > " + filepath.Join(hooks, "pre-commit") + " || echo refused"), Write: []string{ws}, Protect: []string{hooks}}
	Prestart()
	defer StopPrestart()
	run(t, write) // no hooks yet: it fails to write and arms a worker
	waitArmed()
	must(t, os.MkdirAll(hooks, 0o755))
	before := armedTaken.Load()
	res := run(t, write)
	if armedTaken.Load() != before {
		t.Error("a worker armed before the protected path existed was taken")
	}
	absent(t, filepath.Join(hooks, "pre-commit"))
	if !strings.Contains(string(res.Stdout), "refused") {
		t.Errorf("wrote into a protected path: %q %q", res.Stdout, res.Stderr)
	}

	// replaced reads through path (granted), arms a worker for that,
	// replaces the directory at granted by one holding want, and reads
	// again: not in that worker, and what is there now
	granted := filepath.Join(dir, "granted")
	must(t, os.Mkdir(granted, 0o755))
	must(t, os.WriteFile(filepath.Join(granted, "f"), []byte("old\n"), 0o644))
	replaced := func(what, path, want string) {
		read := Spec{Argv: bash("cat " + filepath.Join(path, "f") + " || echo refused"), Read: []string{path}}
		run(t, read)
		waitArmed()
		must(t, os.Rename(granted, filepath.Join(dir, "moved-"+want)))
		must(t, os.Mkdir(granted, 0o755))
		must(t, os.WriteFile(filepath.Join(granted, "f"), []byte(want+"\n"), 0o644))
		before := armedTaken.Load()
		res := run(t, read)
		if armedTaken.Load() != before {
			t.Errorf("a worker armed before %s was replaced was taken", what)
		}
		if string(res.Stdout) != want+"\n" {
			t.Errorf("read %q, want what %s is now", res.Stdout, what)
		}
	}
	replaced("its granted directory", granted, "new")
	// a granted symbolic link: the link is the same file, what it leads
	// to is not
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(granted, link))
	replaced("the target of its granted link", link, "newer")
}

// TestArmedNoStateCrosses: nothing one action leaves behind (files in its
// home, temporary directory or working directory, or in /tmp, its
// environment, open descriptors, working directory, umask, rlimits)
// reaches the next action with the same plan through the worker: what
// the next one sees is what a child started on demand sees.
func TestArmedNoStateCrosses(t *testing.T) {
	requireSandbox(t)
	plant := Spec{Argv: bash(`umask 077; ulimit -S -n 99; export PLANTED=1; exec 9>"$HOME/fd"
		echo x > "$HOME/home-file"; echo x > "$TMPDIR/tmp-file"; echo x > ./cwd-file; cd /; echo x > /tmp/claw-armed-plant; true`)}
	look := Spec{Argv: bash(`echo "umask $(umask)"; echo "nofile $(ulimit -S -n) $(ulimit -H -n)"; echo "cpu $(ulimit -t)"
		echo "pwd $(pwd)"; ls -A "$HOME" "$TMPDIR" .; ls /tmp | grep -c claw-armed-plant; ls /proc/self/fd; env | sort`)}
	report := func(res Result) string {
		home := ""
		for _, l := range strings.Split(string(res.Stdout), "\n") {
			if v, ok := strings.CutPrefix(l, "HOME="); ok {
				home = v
			}
		}
		if home == "" {
			t.Fatalf("no HOME in:\n%s", res.Stdout)
		}
		return strings.ReplaceAll(string(res.Stdout), home, "$HOME")
	}
	fresh := report(run(t, look))
	var got string
	armed(t, 4, func() {
		for _, s := range []Spec{plant, look, plant} {
			run(t, s)
		}
		got = report(run(t, look))
	})
	if got != fresh {
		t.Errorf("an action after another in armed workers sees:\n%s\none in a fresh child:\n%s", got, fresh)
	}
	for _, want := range []string{"pwd $HOME", "\n0\n"} {
		if !strings.Contains(fresh, want) {
			t.Errorf("the fresh child's report lacks %q:\n%s", want, fresh)
		}
	}
}

// TestStopPrestartEndsArmed: StopPrestart leaves no armed worker, home
// directory or cgroup behind.
func TestStopPrestartEndsArmed(t *testing.T) {
	requireSandbox(t)
	Prestart()
	run(t, Spec{Argv: []string{"/bin/true"}})
	waitArmed()
	var workers []*proc
	warm.Lock()
	for _, s := range warm.slots {
		for _, ch := range s.workers {
			p := <-ch
			ch <- p
			if p != nil {
				workers = append(workers, p)
			}
		}
	}
	warm.Unlock()
	if len(workers) != armedDepth {
		t.Fatalf("%d armed workers, want %d", len(workers), armedDepth)
	}
	StopPrestart()
	for _, p := range workers {
		if p.alive() {
			t.Errorf("armed worker %d still alive", p.cmd.Process.Pid)
		}
		if _, err := os.Stat(p.home.dir); err == nil {
			t.Errorf("left behind: %s", p.home.dir)
		}
		if p.cg != nil {
			for _, d := range p.cg.dirs {
				if _, err := os.Stat(d); err == nil {
					t.Errorf("left behind: %s", d)
				}
			}
		}
	}
}

// TestStopPrestartDropsDeferred: the replacement of a worker taken while
// another of its plan was ready waits out armDefer; a StopPrestart in
// that time means it is never armed.
func TestStopPrestartDropsDeferred(t *testing.T) {
	requireSandbox(t)
	Prestart()
	spec := Spec{Argv: []string{"/bin/true"}}
	run(t, spec)
	waitArmed()
	run(t, spec) // takes one of two ready workers
	warm.Lock()
	deferred := len(warm.slots) == 1 && warm.slots[0].deferred != nil
	warm.Unlock()
	before := armStarts.Load()
	StopPrestart()
	if !deferred {
		t.Fatal("the replacement of a worker taken beside a ready one was not deferred")
	}
	if n := armStarts.Load() - before; n != 0 {
		t.Errorf("%d workers armed after StopPrestart", n)
	}
}

// TestHomeRemovedAfterReturn: with Prestart on, an action's home is
// removed after Run returned, not on the action's way, and StopPrestart
// does not return before it is gone; the next action has a home of its
// own meanwhile.
func TestHomeRemovedAfterReturn(t *testing.T) {
	requireSandbox(t)
	release := make(chan struct{})
	homeRemoval = func() { <-release }
	defer func() { homeRemoval = nil }()
	Prestart()
	stopped := false
	defer func() {
		if !stopped {
			close(release)
			StopPrestart()
		}
	}()
	homeOf := func(res Result) string {
		home := strings.TrimSpace(string(res.Stdout))
		if res.ExitCode != 0 || !filepath.IsAbs(home) {
			t.Fatalf("the action failed: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
		}
		return home
	}
	spec := Spec{Argv: bash(`echo x > "$HOME/left"; echo "$HOME"`)}
	first := homeOf(run(t, spec))
	if _, err := os.Stat(filepath.Join(first, "left")); err != nil {
		t.Fatalf("the home was removed before Run returned: %v", err)
	}
	second := homeOf(run(t, Spec{Argv: bash(`ls -A "$HOME"; echo "$HOME"`)}))
	if second == first {
		t.Fatalf("two actions had the home %s", first)
	}
	stopped = true
	done := make(chan struct{})
	go func() {
		StopPrestart()
		close(done)
	}()
	close(release)
	<-done
	for _, h := range []string{first, second} {
		if _, err := os.Lstat(h); !os.IsNotExist(err) {
			t.Errorf("left behind after StopPrestart: %s (%v)", h, err)
		}
	}
}

// TestArmedRelayJoinsCgroups: with v1 job cgroups, an armed worker's
// relay joins them from the thread that clones the worker, rather than
// being moved into them whole by claw (a move that waits for an RCU grace
// period): one thread of the relay is inside, and so is the worker.
// TestForkBombBounded checks that the worker's tree is bounded there.
func TestArmedRelayJoinsCgroups(t *testing.T) {
	requireSandbox(t)
	if k := jobCgroups(); k.version != "v1" {
		t.Skipf("job cgroups %q here, not v1", k.version)
	}
	if l, err := findHelper(); err != nil || l.self || !Check().ns.user {
		t.Skip("no relay here")
	}
	Prestart()
	defer StopPrestart()
	run(t, Spec{Argv: []string{"/bin/true"}})
	waitArmed()
	warm.Lock()
	ch := warm.slots[0].workers[0]
	warm.Unlock()
	p := <-ch
	ch <- p
	if p == nil || p.cg == nil {
		t.Fatalf("no armed worker with a job cgroup: %+v", p)
	}
	relay := p.cmd.Process.Pid
	threads, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(relay), "task"))
	must(t, err)
	if len(threads) < 2 {
		t.Fatalf("the relay has %d threads: cannot tell one from all", len(threads))
	}
	for _, d := range p.cg.dirs {
		b, err := os.ReadFile(filepath.Join(d, "tasks"))
		must(t, err)
		relayIn, others := 0, 0
		for _, f := range strings.Fields(string(b)) {
			if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(relay), "task", f)); err == nil {
				relayIn++
			} else {
				others++
			}
		}
		if relayIn != 1 || others == 0 {
			t.Errorf("%s: %d of the relay's %d threads and %d others inside; want the relay's cloning thread and the worker", d, relayIn, len(threads), others)
		}
	}
}

// TestArmedRelayCgroupFails: a relay that cannot join a job cgroup
// clones nothing and says so (stage "cgroup"); the worker is not armed.
func TestArmedRelayCgroupFails(t *testing.T) {
	requireSandbox(t)
	sup := Check()
	l, err := findHelper()
	if err != nil || l.self || !sup.ns.user {
		t.Skip("no relay here")
	}
	cg := &jobCgroup{version: "v1", dirs: []string{filepath.Join(t.TempDir(), "gone")}}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := startProc(l, sup.ns, false, cg, startArmed)
	if err != nil {
		t.Fatalf("claw moved the relay itself: %v", err)
	}
	defer func() {
		for _, f := range []*os.File{p.cfgW, p.stdinW, p.stR, p.outR, p.errR} {
			f.Close()
		}
	}()
	line, err := bufio.NewReader(p.stR).ReadBytes('\n')
	must(t, err)
	var st child.Status
	must(t, json.Unmarshal(line, &st))
	if st.Stage != "cgroup" || st.Code != child.CodeSetup || !strings.Contains(st.Err, "gone") {
		t.Fatalf("status %+v, want a failure at stage cgroup", st)
	}
	if err := p.cmd.Wait(); p.cmd.ProcessState.ExitCode() != child.CodeSetup {
		t.Fatalf("the relay: %v, want exit %d", err, child.CodeSetup)
	}
}

// TestRunAfter: RunAfter readies the child (one started for the action,
// one started ahead, an armed worker, which gets its request ahead) and
// lets it run the action only after ready returned nil; when ready
// refuses, nothing runs and RunAfter returns ready's error.
func TestRunAfter(t *testing.T) {
	requireSandbox(t)
	inEveryMode(t, func(t *testing.T) {
		f := newFixture(t)
		made := filepath.Join(f.ws, "made")
		spec := f.spec("touch", made)
		spec.Timeout = 20 * time.Second
		calls := 0
		res, err := RunAfter(context.Background(), spec, func() error {
			calls++
			if _, err := os.Lstat(made); err == nil {
				t.Error("the action ran before ready returned")
			}
			return nil
		})
		if err != nil || res.ExitCode != 0 || calls == 0 {
			t.Fatalf("RunAfter: exit %d, %v, ready called %d times", res.ExitCode, err, calls)
		}
		if _, err := os.Lstat(made); err != nil {
			t.Fatalf("the action did not run: %v", err)
		}
		refused := errors.New("not cleared")
		spec = f.spec("touch", filepath.Join(f.ws, "refused"))
		spec.Timeout = 20 * time.Second
		// a while before the refusal: an armed worker has its request by
		// then (primed) and must still run nothing
		refuse := func() error { time.Sleep(200 * time.Millisecond); return refused }
		if _, err := RunAfter(context.Background(), spec, refuse); !errors.Is(err, refused) {
			t.Fatalf("RunAfter with a refusing ready = %v, want %v", err, refused)
		}
		absent(t, filepath.Join(f.ws, "refused"))
	})
}

// TestTimeoutRunsFromTheGoAhead: the time the caller's ready takes (its
// decision receipt being made durable) does not count against the
// action's timeout, nor in its Duration: a 0.5 s sleep with a 1 s timeout
// runs to its end after a ready of 0.8 s.
func TestTimeoutRunsFromTheGoAhead(t *testing.T) {
	requireSandbox(t)
	inEveryMode(t, func(t *testing.T) {
		f := newFixture(t)
		spec := f.spec("sleep", "0.5")
		spec.Timeout = time.Second
		res, err := RunAfter(context.Background(), spec, func() error {
			time.Sleep(800 * time.Millisecond)
			return nil
		})
		if err != nil || res.TimedOut || res.ExitCode != 0 {
			t.Fatalf("RunAfter: exit %d, timed out %v, %v", res.ExitCode, res.TimedOut, err)
		}
		if res.Duration < 500*time.Millisecond || res.Duration >= 800*time.Millisecond+500*time.Millisecond {
			t.Errorf("Duration %v counts the wait for ready, or not the sleep", res.Duration)
		}
	})
}

// TestFingerprint: a path's fingerprint tells an absent path, a file and
// a symbolic link (and what it leads to, if anything) apart, and changes
// when what is at the path is replaced.
func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	file, link, dangling, absentPath := filepath.Join(dir, "f"), filepath.Join(dir, "l"), filepath.Join(dir, "d"), filepath.Join(dir, "a")
	must(t, os.WriteFile(file, nil, 0o644))
	must(t, os.Symlink(file, link))
	must(t, os.Symlink(filepath.Join(dir, "nothing"), dangling))
	ids := fingerprint([]string{file, link, dangling, absentPath})
	if f := ids[0]; !f.lok || !f.ok || f.lino != f.ino || f.mode != unix.S_IFREG {
		t.Errorf("file: %+v", f)
	}
	if l := ids[1]; !l.lok || l.lmode != unix.S_IFLNK || !l.ok || l.ino != ids[0].ino || l.lino == l.ino {
		t.Errorf("link to the file: %+v", l)
	}
	if d := ids[2]; !d.lok || d.lmode != unix.S_IFLNK || d.ok {
		t.Errorf("dangling link: %+v", d)
	}
	if a := ids[3]; a != (fileID{}) {
		t.Errorf("absent path: %+v", a)
	}
	// the old file stays open, as a worker's Landlock rules hold it, so
	// that its inode number is not given to the new one
	old, err := os.Open(file)
	must(t, err)
	defer old.Close()
	must(t, os.Remove(file))
	must(t, os.WriteFile(file, nil, 0o644))
	must(t, os.WriteFile(absentPath, nil, 0o644))
	again := fingerprint([]string{file, link, dangling, absentPath})
	if again[0] == ids[0] || again[1] == ids[1] || again[3] == ids[3] || again[2] != ids[2] {
		t.Errorf("after replacing the file and creating the absent path:\n%+v\nwas\n%+v", again, ids)
	}
}

// BenchmarkFingerprint is the check of a file_read plan's granted paths
// that an armed worker passes before it is used (and twice when armed).
func BenchmarkFingerprint(b *testing.B) {
	paths := slices.Concat(systemReadPaths(), []string{"/proc", b.TempDir()}, devicePaths)
	for b.Loop() {
		fingerprint(paths)
	}
}
