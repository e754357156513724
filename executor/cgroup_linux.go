package executor

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// cgroups bound what rlimits cannot: the number of processes for root
// (RLIMIT_NPROC never applies to uid 0) and the memory of the whole tree.
// claw uses cgroup v2 when the hierarchy is delegated to it, else the v1
// pids controller when it may write it (root; no v1 memory group, which
// costs milliseconds per action to create), else nothing (and says so in
// claw doctor).

type cgroupKind struct {
	version string   // "v2", "v1"
	bases   []string // parent directories to create job groups in
}

var cgroupSeq atomic.Uint64

var cgroups struct {
	once sync.Once
	kind cgroupKind
}

// jobCgroups returns where this process creates job cgroups, found once.
// The first call also sweeps the empty groups that claw processes which
// died without cleaning up (SIGKILL, a crash, a power cut of the service)
// left behind.
func jobCgroups() cgroupKind {
	cgroups.once.Do(func() {
		cgroups.kind = detectCgroup()
		sweepStaleCgroups(cgroups.kind)
	})
	return cgroups.kind
}

// sweepStaleCgroups removes every empty job group named claw-PID-N whose
// PID is no longer a running process, and returns the groups it removed.
// A group that still holds a process is left alone: its PID may only
// look dead from here (another claw in another PID namespace sharing this
// cgroup parent), and a sandbox whose claw died is killed by its own
// parent-death signal and PID namespace, not by a sweep. A group whose
// PID is running is left alone, even if that PID now belongs to another
// program.
func sweepStaleCgroups(k cgroupKind) []string {
	var removed []string
	for _, base := range k.bases {
		ents, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range ents {
			pid, ok := jobOwner(e.Name())
			if !ok || !e.IsDir() || pid == os.Getpid() || processRunning(pid) {
				continue
			}
			d := filepath.Join(base, e.Name())
			if os.Remove(d) == nil { // EBUSY while a process is in it
				removed = append(removed, d)
			}
		}
	}
	return removed
}

// jobOwner parses a job group's name, claw-PID-N, into PID.
func jobOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "claw-")
	if !ok {
		return 0, false
	}
	p, n, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, false
	}
	if _, err := strconv.ParseUint(n, 10, 64); err != nil {
		return 0, false
	}
	return pid, true
}

// processRunning reports whether pid is a process (kill 0 succeeds, or
// fails for lack of permission only).
func processRunning(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

// detectCgroup finds where claw may create job cgroups.
func detectCgroup() cgroupKind {
	own := map[string]string{} // controller (or "" for v2) -> path
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return cgroupKind{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			own[c] = parts[2]
		}
	}
	// v2: a unified hierarchy with pids and memory delegated to our group
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		p, ok := own[""]
		if !ok {
			break
		}
		dir := filepath.Join(root, p)
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err != nil {
			continue
		}
		ctl := " " + strings.TrimSpace(string(b)) + " "
		if strings.Contains(ctl, " pids ") && strings.Contains(ctl, " memory ") && writable(dir) {
			return cgroupKind{version: "v2", bases: []string{dir}}
		}
	}
	// v1: the pids controller, if we may write it (a v1 memory group per
	// action costs milliseconds to create; RLIMIT_DATA bounds memory there)
	var bases []string
	for _, c := range []string{"pids"} {
		p, ok := own[c]
		if !ok {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup", c, p)
		if writable(dir) {
			bases = append(bases, dir)
		}
	}
	if len(bases) > 0 && strings.HasSuffix(bases[0], filepath.Join("pids", own["pids"])) {
		return cgroupKind{version: "v1", bases: bases}
	}
	return cgroupKind{}
}

func writable(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	return unix.Access(dir, unix.W_OK) == nil
}

// jobCgroup is one action's cgroup (one directory per v1 controller).
type jobCgroup struct {
	version string
	dirs    []string
}

func newJobCgroup(k cgroupKind, l Limits) (*jobCgroup, error) {
	if k.version == "" {
		return nil, nil
	}
	name := fmt.Sprintf("claw-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	j := &jobCgroup{version: k.version}
	for _, base := range k.bases {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			j.remove()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		j.dirs = append(j.dirs, d)
		if err := j.limit(k.version, d, l); err != nil {
			j.remove()
			return nil, err
		}
	}
	return j, nil
}

// limit writes the limits of one job directory.
func (j *jobCgroup) limit(version, d string, l Limits) error {
	var writes [][2]string
	switch {
	case version == "v2":
		writes = [][2]string{{"pids.max", strconv.FormatUint(l.Processes, 10)}, {"memory.max", strconv.FormatUint(l.MemoryBytes, 10)}, {"memory.swap.max", "0"}}
	case strings.Contains(d, "/pids/"):
		writes = [][2]string{{"pids.max", strconv.FormatUint(l.Processes, 10)}}
	case strings.Contains(d, "/memory/"):
		writes = [][2]string{{"memory.limit_in_bytes", strconv.FormatUint(l.MemoryBytes, 10)}}
	}
	for _, w := range writes {
		err := os.WriteFile(filepath.Join(d, w[0]), []byte(w[1]), 0)
		if err != nil && w[0] != "memory.swap.max" {
			return fmt.Errorf("cgroup %s: %w", w[0], err)
		}
	}
	return nil
}

// setLimits changes the limits of a job that has not started its command.
func (j *jobCgroup) setLimits(l Limits) error {
	if j == nil {
		return nil
	}
	for _, d := range j.dirs {
		if err := j.limit(j.version, d, l); err != nil {
			return err
		}
	}
	return nil
}

// add moves a process into the job's cgroups.
func (j *jobCgroup) add(pid int) error {
	if j == nil {
		return nil
	}
	for _, d := range j.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return nil
}

// joinedByChild reports whether a child started on demand for cfg joins
// the job's cgroups itself (child.Config.Cgroups) rather than being moved
// into them by claw: with v1, where a thread may move itself without the
// lock that moving a process takes, whose wait for an RCU grace period
// was most of an on-demand start on an idle machine. A tool that runs in
// the child itself runs on any of its threads, so claw moves it whole.
func (j *jobCgroup) joinedByChild(cfg *child.Config) bool {
	return j != nil && j.version == "v1" && !cfg.InProcess
}

// kill kills every process of the job, wherever it moved in the process
// tree (a setsid'd grandchild left the session, not the cgroup): v2's
// cgroup.kill, or SIGKILL to each process listed in v1.
func (j *jobCgroup) kill() {
	if j == nil {
		return
	}
	for _, d := range j.dirs {
		if os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0) == nil {
			continue
		}
		for range 3 { // a process may fork while the list is read
			data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			if err != nil || len(data) == 0 {
				break
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
					unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
	}
}

// remove deletes the job's cgroups (they must be empty).
func (j *jobCgroup) remove() {
	if j == nil {
		return
	}
	for _, d := range j.dirs {
		os.Remove(d)
	}
}

// removeWhenEmpty deletes the job's cgroups once the processes in them,
// which were killed, are gone; it gives up after about a second.
func (j *jobCgroup) removeWhenEmpty() {
	if j == nil {
		return
	}
	for i := 0; i < 50; i++ {
		j.remove()
		if _, err := os.Stat(j.dirs[0]); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
