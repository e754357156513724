package service

// The executor must still confine actions when claw runs under the unit:
// its child inherits the unit's seccomp filter, no_new_privs, the empty
// capability sets and the service user. Without systemd as PID 1 these
// tests recreate that inherited state (setpriv for the user,
// capabilities and no_new_privs; a libseccomp filter built from the
// rendered unit's SystemCallFilter, SystemCallErrorNumber,
// RestrictNamespaces and RestrictAddressFamilies lines, with the groups
// expanded by systemd-analyze itself), then run the real executor inside.
// The unit's mount-namespace settings (ProtectSystem, PrivateTmp, …) are
// not recreated.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawsec/claw/executor"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

const (
	modeFilter = "__service-test-filter" // FILTER.json -- ARGV…: load the filter, exec ARGV
	modeRun    = "__service-test-run"    // SPEC.json: executor.Run, print a runReport
	// serviceUID stands for the DynamicUser (systemd allocates 61184–65519).
	serviceUID = 61184
)

// unitFilter is the seccomp state the unit leaves a service in.
type unitFilter struct {
	Allow    []string `json:"allow"`     // allowed system calls
	NSDeny   uint64   `json:"ns_deny"`   // clone/unshare flags refused (RestrictNamespaces)
	Families []int    `json:"families"`  // socket families allowed (RestrictAddressFamilies)
	Errno    int      `json:"errno"`     // SystemCallErrorNumber
	NoClone3 bool     `json:"no_clone3"` // clone3 → ENOSYS (systemd does this for RestrictNamespaces)
}

type runReport struct {
	Exit        int      `json:"exit"`
	Err         string   `json:"err,omitempty"`
	Unavailable bool     `json:"unavailable,omitempty"`
	Setup       bool     `json:"setup,omitempty"`
	Stderr      string   `json:"stderr,omitempty"`
	LandlockABI int      `json:"landlock_abi"`
	Seccomp     bool     `json:"seccomp"`
	Namespaces  []string `json:"namespaces,omitempty"`
	FreshProc   bool     `json:"fresh_proc"`
}

func TestMain(m *testing.M) {
	if code, ok := executor.EnterChild(os.Args); ok {
		os.Exit(code)
	}
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case modeFilter:
			os.Exit(filterMain(os.Args[2:]))
		case modeRun:
			os.Exit(runMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// filterMain loads the unit's filter the way systemd does before it
// executes ExecStart, then executes argv.
func filterMain(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: FILTER.json -- ARGV…")
		return 2
	}
	var uf unitFilter
	b, err := os.ReadFile(args[0])
	if err == nil {
		err = json.Unmarshal(b, &uf)
	}
	if err == nil {
		err = loadFilter(uf)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "filter:", err)
		return 125
	}
	err = syscall.Exec(args[2], args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "exec:", err)
	return 125
}

func loadFilter(uf unitFilter) error {
	runtime.LockOSThread()
	f, err := seccomp.NewFilter(seccomp.ActErrno.SetReturnCode(int16(uf.Errno)))
	if err != nil {
		return err
	}
	defer f.Release()
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return err
	}
	if err := f.SetBadArchAction(seccomp.ActKillProcess); err != nil {
		return err
	}
	for _, name := range uf.Allow {
		sc, err := seccomp.GetSyscallFromName(name)
		if err != nil {
			continue // not a system call of this architecture
		}
		switch name {
		case "clone", "unshare":
			// allowed only without a refused namespace flag (32-bit flags)
			c, err := seccomp.MakeCondition(0, seccomp.CompareMaskedEqual, uf.NSDeny, 0)
			if err != nil {
				return err
			}
			err = f.AddRuleConditional(sc, seccomp.ActAllow, []seccomp.ScmpCondition{c})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case "clone3":
			act := seccomp.ActAllow
			if uf.NoClone3 {
				act = seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))
			}
			if err := f.AddRule(sc, act); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		case "setns":
			if uf.NSDeny != 0 {
				continue // the executor never joins a namespace
			}
			if err := f.AddRule(sc, seccomp.ActAllow); err != nil {
				return err
			}
		case "socket":
			for _, fam := range uf.Families {
				c, err := seccomp.MakeCondition(0, seccomp.CompareEqual, uint64(fam))
				if err != nil {
					return err
				}
				if err := f.AddRuleConditional(sc, seccomp.ActAllow, []seccomp.ScmpCondition{c}); err != nil {
					return fmt.Errorf("socket: %w", err)
				}
			}
		default:
			if err := f.AddRule(sc, seccomp.ActAllow); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return f.Load()
}

// runMain runs one executor spec and prints what happened as JSON.
func runMain(args []string) int {
	var spec executor.Spec
	b, err := os.ReadFile(args[0])
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "spec:", err)
		return 2
	}
	executor.SetHelper(os.Getenv("CLAW_SERVICE_TEST_HELPER"))
	res, err := executor.Run(context.Background(), spec)
	rep := runReport{Exit: res.ExitCode, Stderr: string(res.Stderr), LandlockABI: res.Sandbox.LandlockABI, Seccomp: res.Sandbox.Seccomp, Namespaces: res.Sandbox.Namespaces, FreshProc: res.Sandbox.FreshProc}
	if err != nil {
		rep.Err = err.Error()
		rep.Unavailable = errors.Is(err, executor.ErrUnavailable)
		var se *executor.SetupError
		rep.Setup = errors.As(err, &se)
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

// syscallGroups expands every @group systemd knows, by asking systemd.
func syscallGroups(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("systemd-analyze", "syscall-filter", "--no-pager").Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter: %v", err)
	}
	groups := map[string][]string{}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "@"):
			cur = strings.TrimSpace(l)
		case strings.HasPrefix(l, " ") && cur != "":
			if f := strings.TrimSpace(l); f != "" && !strings.HasPrefix(f, "#") {
				groups[cur] = append(groups[cur], f)
			}
		default:
			cur = ""
		}
	}
	if len(groups["@system-service"]) == 0 || len(groups["@default"]) == 0 {
		t.Fatalf("no @system-service or @default in:\n%s", out)
	}
	return groups
}

func expand(groups map[string][]string, name string, into map[string]bool) {
	if !strings.HasPrefix(name, "@") {
		into[name] = true
		return
	}
	for _, m := range groups[name] {
		expand(groups, m, into)
	}
}

// filterOf reads the seccomp-related settings of a unit file, with the
// semantics systemd.exec(5) gives them.
func filterOf(t *testing.T, unit []byte, groups map[string][]string) unitFilter {
	t.Helper()
	uf := unitFilter{Errno: int(unix.ENOSYS)}
	allow := map[string]bool{}
	expand(groups, "@default", allow) // always allowed in an allow list
	first := true
	for _, l := range strings.Split(string(unit), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		switch k {
		case "SystemCallFilter":
			deny := strings.HasPrefix(v, "~")
			if first && deny {
				t.Fatal("the unit's first SystemCallFilter must be an allow list")
			}
			first = false
			set := map[string]bool{}
			for _, n := range strings.Fields(strings.TrimPrefix(v, "~")) {
				expand(groups, n, set)
			}
			for n := range set {
				if deny {
					delete(allow, n)
				} else {
					allow[n] = true
				}
			}
		case "SystemCallErrorNumber":
			if v != "EPERM" {
				t.Fatalf("SystemCallErrorNumber=%s: the test knows EPERM only", v)
			}
			uf.Errno = int(unix.EPERM)
		case "RestrictNamespaces":
			flags := map[string]uint64{"cgroup": unix.CLONE_NEWCGROUP, "ipc": unix.CLONE_NEWIPC, "net": unix.CLONE_NEWNET,
				"mnt": unix.CLONE_NEWNS, "pid": unix.CLONE_NEWPID, "user": unix.CLONE_NEWUSER, "uts": unix.CLONE_NEWUTS}
			for n, f := range flags {
				if !slices.Contains(strings.Fields(v), n) {
					uf.NSDeny |= f
				}
			}
			uf.NoClone3 = true
		case "RestrictAddressFamilies":
			fams := map[string]int{"AF_UNIX": unix.AF_UNIX, "AF_INET": unix.AF_INET, "AF_INET6": unix.AF_INET6, "AF_NETLINK": unix.AF_NETLINK}
			for _, n := range strings.Fields(v) {
				f, ok := fams[n]
				if !ok {
					t.Fatalf("RestrictAddressFamilies: the test does not know %s", n)
				}
				uf.Families = append(uf.Families, f)
			}
		}
	}
	if first {
		t.Fatal("the unit has no SystemCallFilter")
	}
	for n := range allow {
		uf.Allow = append(uf.Allow, n)
	}
	slices.Sort(uf.Allow)
	return uf
}

// serviceEnv is a directory every test user can traverse, with this test
// binary and the sandbox helper in it.
type serviceEnv struct {
	dir, bin, helper string
	tmp              string // TMPDIR, as PrivateTmp's /tmp
	uid              int
	groups           map[string][]string
}

func newServiceEnv(t *testing.T) *serviceEnv {
	t.Helper()
	requireAnalyzer(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			t.Fatal("setpriv (util-linux) is required (CLAW_REQUIRE_SANDBOX is set)")
		}
		t.Skip("setpriv not installed")
	}
	dir, err := os.MkdirTemp("", "claw-service-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &serviceEnv{dir: dir, bin: filepath.Join(dir, "service.test"), helper: filepath.Join(dir, executor.HelperName), uid: os.Getuid()}
	if os.Geteuid() == 0 {
		e.uid = serviceUID
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(self); err != nil || os.WriteFile(e.bin, b, 0o755) != nil {
		t.Fatalf("copying the test binary: %v", err)
	}
	build := exec.Command("go", "build", "-trimpath", "-o", e.helper, "../../executor/cmd/claw-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sandbox helper: %v\n%s", err, out)
	}
	executor.SetHelper(e.helper)
	e.tmp = e.mkdir(t, "tmp", 0o1777)
	if err := executor.Check().Require(0); err != nil {
		if os.Getenv("CLAW_REQUIRE_SANDBOX") != "" {
			t.Fatalf("CLAW_REQUIRE_SANDBOX is set: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
	e.groups = syscallGroups(t)
	return e
}

// mkdir makes a directory owned by the service user.
func (e *serviceEnv) mkdir(t *testing.T, name string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.Mkdir(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, e.uid, e.uid); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs spec through the executor in a process that has the state the
// unit leaves claw in.
func (e *serviceEnv) run(t *testing.T, unit []byte, spec executor.Spec) runReport {
	t.Helper()
	uf := filterOf(t, unit, e.groups)
	write := func(name string, v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(e.dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fpath, spath := write("filter.json", uf), write("spec.json", spec)
	args := []string{"--no-new-privs", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"}
	if os.Geteuid() == 0 {
		id := fmt.Sprint(e.uid)
		args = append(args, "--reuid="+id, "--regid="+id, "--clear-groups")
	}
	args = append(args, "--", e.bin, modeFilter, fpath, "--", e.bin, modeRun, spath)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=" + e.tmp, "CLAW_SERVICE_TEST_HELPER=" + e.helper}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	var rep runReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %q: %v\n%s", out, err, stderr.Bytes())
	}
	return rep
}

// TestExecutorUnderUnit: with the unit's restrictions inherited, a write
// in the workspace works, and a write outside it is still refused.
func TestExecutorUnderUnit(t *testing.T) {
	e := newServiceEnv(t)
	unit, err := Render(Options{Binary: "/usr/local/bin/claw"})
	if err != nil {
		t.Fatal(err)
	}
	ws := e.mkdir(t, "ws", 0o700)
	outside := e.mkdir(t, "outside", 0o777)
	tests := []struct {
		name    string
		command string
		wantRan string // a file the command must have created
		absent  string // a file that must not exist afterwards
		wantOK  bool
	}{
		{name: "write in the workspace", command: "echo ok > " + ws + "/in", wantRan: filepath.Join(ws, "in"), wantOK: true},
		{name: "write outside the workspace", command: "echo pwned > " + outside + "/out", absent: filepath.Join(outside, "out")},
		{name: "write to etc", command: "echo pwned > /etc/claw-service-escape", absent: "/etc/claw-service-escape"},
		{name: "new namespace from the sandbox", command: "unshare -Ur true && touch " + ws + "/unshared", absent: filepath.Join(ws, "unshared")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := e.run(t, unit, executor.Spec{Argv: []string{"bash", "-c", tt.command}, Write: []string{ws}, Timeout: 20 * time.Second})
			if rep.Err != "" {
				t.Fatalf("executor: %s (stderr %q)", rep.Err, rep.Stderr)
			}
			if rep.LandlockABI < executor.DefaultMinLandlockABI || !rep.Seccomp {
				t.Errorf("confinement: landlock ABI %d, seccomp %v", rep.LandlockABI, rep.Seccomp)
			}
			if (rep.Exit == 0) != tt.wantOK {
				t.Errorf("exit %d, want success %v (stderr %q)", rep.Exit, tt.wantOK, rep.Stderr)
			}
			if tt.wantRan != "" {
				if _, err := os.Stat(tt.wantRan); err != nil {
					t.Errorf("the command did not run: %v", err)
				}
			}
			if tt.absent != "" {
				if _, err := os.Stat(tt.absent); err == nil {
					os.Remove(tt.absent)
					t.Errorf("%s was created", tt.absent)
				}
			}
		})
	}
}

// stripSyscalls removes the named calls from the unit's allow lines.
func stripSyscalls(t *testing.T, unit []byte, names ...string) []byte {
	t.Helper()
	var lines []string
	removed := 0
	for _, l := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(l, "SystemCallFilter="); ok && !strings.HasPrefix(v, "~") {
			var keep []string
			for _, n := range strings.Fields(v) {
				if slices.Contains(names, n) {
					removed++
					continue
				}
				keep = append(keep, n)
			}
			l = "SystemCallFilter=" + strings.Join(keep, " ")
		}
		lines = append(lines, l)
	}
	if removed != len(names) {
		t.Fatalf("removed %d of %v from the unit", removed, names)
	}
	return []byte(strings.Join(lines, "\n"))
}

// TestExecutorRefusesWithoutItsSyscalls: a unit whose filter lacks the
// calls the executor's child needs would, for Landlock, make the sandbox a
// silent no-op; claw refuses instead (exit 5 or 126), and nothing runs.
// It also shows that the emulated filter bites.
func TestExecutorRefusesWithoutItsSyscalls(t *testing.T) {
	e := newServiceEnv(t)
	unit, err := Render(Options{Binary: "/usr/local/bin/claw"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		strip []string
	}{
		{name: "landlock", strip: []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"}},
		{name: "mount", strip: []string{"mount", "mount_setattr", "umount2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := e.mkdir(t, "ws-"+tt.name, 0o700)
			rep := e.run(t, stripSyscalls(t, unit, tt.strip...), executor.Spec{Argv: []string{"touch", ws + "/ran"}, Write: []string{ws}, Timeout: 20 * time.Second})
			if !rep.Unavailable && !rep.Setup && rep.Exit != 126 {
				t.Errorf("executor did not refuse: %+v", rep)
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
				t.Error("the command ran")
			}
			t.Logf("refused: exit %d, %s", rep.Exit, rep.Err)
		})
	}
}

// TestExecutorNamespacesUnderUnit: the unit lets the executor create its
// IPC and UTS namespaces and name the UTS one, so an action under it gets
// both (the host's System V objects and hostname stay hidden), as outside
// the unit; only the cgroup namespace is missing (ExecutorNamespaces says
// why). It failed (no IPC or UTS namespace) while RestrictNamespaces
// allowed only user, mnt, net and pid.
func TestExecutorNamespacesUnderUnit(t *testing.T) {
	e := newServiceEnv(t)
	unit, err := Render(Options{Binary: "/usr/local/bin/claw"})
	if err != nil {
		t.Fatal(err)
	}
	ws := e.mkdir(t, "ws", 0o700)
	rep := e.run(t, unit, executor.Spec{Argv: []string{"touch", ws + "/ran"}, Write: []string{ws}, Timeout: 20 * time.Second})
	if rep.Err != "" || rep.Exit != 0 {
		t.Fatalf("executor: exit %d, %s (stderr %q)", rep.Exit, rep.Err, rep.Stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	for _, ns := range []string{"ipc", "uts"} {
		if !slices.Contains(rep.Namespaces, ns) {
			t.Errorf("no %s namespace under the unit: namespaces %v", ns, rep.Namespaces)
		}
	}
	if slices.Contains(rep.Namespaces, "cgroup") {
		t.Errorf("a cgroup namespace under a unit that forbids it: namespaces %v", rep.Namespaces)
	}
}

// TestExecutorUnderUnitWithoutHostname: a unit whose filter refuses
// setdomainname and sethostname (an older claw's unit, or one edited by
// hand) still runs actions: the child cannot name its UTS namespace, so
// claw falls back to the namespaces it can use (IPC, not UTS and cgroup),
// and the action runs confined without them. It failed (exit 126, at the
// child's hostname step) when that step was not retried, and ran without
// an IPC namespace when only IPC and UTS together were tried.
func TestExecutorUnderUnitWithoutHostname(t *testing.T) {
	e := newServiceEnv(t)
	unit, err := Render(Options{Binary: "/usr/local/bin/claw"})
	if err != nil {
		t.Fatal(err)
	}
	unit = stripSyscalls(t, unit, "sethostname", "setdomainname")
	ws := e.mkdir(t, "ws", 0o700)
	rep := e.run(t, unit, executor.Spec{Argv: []string{"touch", ws + "/ran"}, Write: []string{ws}, Timeout: 20 * time.Second})
	if rep.Err != "" || rep.Exit != 0 {
		t.Fatalf("executor: exit %d, %s (stderr %q)", rep.Exit, rep.Err, rep.Stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	if rep.LandlockABI < executor.DefaultMinLandlockABI || !rep.Seccomp || slices.Contains(rep.Namespaces, "uts") || !slices.Contains(rep.Namespaces, "ipc") {
		t.Errorf("confinement: landlock ABI %d, seccomp %v, namespaces %v", rep.LandlockABI, rep.Seccomp, rep.Namespaces)
	}
}
