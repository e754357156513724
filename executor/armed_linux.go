package executor

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"golang.org/x/sys/unix"
)

// Armed workers: with Prestart on, after an action the executor starts a
// fresh child for the same confinement plan and lets it confine itself
// at once (mounts, /proc, rlimits, credentials, Landlock, seccomp), so
// that the next action with that plan only hands it its command,
// environment and directory. A worker is keyed by the digest of its plan
// and runs one action; it is taken only when the action's plan is
// byte for byte the one it was confined to, it is alive, the mount table
// has not changed and every granted path is still the file it was; on
// anything else it is discarded and the action starts its child as
// before.

// armedPlans is how many different plans are kept armed at once, and
// armedDepth how many workers each: actions that follow each other at
// once each find one ready while the replacements of the ones before
// arm. Arming takes longer than such an action (the relay's and the
// helper's starts, the confinement, and, with cgroup v1, the move into
// the job cgroup, which waits for the kernel's RCU grace period): with
// three a replacement has two actions' time to get ready, not one.
const (
	armedPlans = 4
	armedDepth = 3
)

// armTimeout bounds how long a worker may take to confine itself, and
// armWait how long an action waits for one still doing so (one started
// for the action would compete with it for the CPUs, so waiting is
// usually quicker).
const (
	armTimeout = 10 * time.Second
	armWait    = time.Second
)

// armDefer is how long the replacement of a worker waits before it
// starts arming when another worker of its plan is ready: the caller's
// work right after the action (the broker's outcome receipt) then does
// not compete with the relay's and the helper's starts and the
// confinement for the CPUs. It starts at once when that other worker is
// taken meanwhile, or when none is ready (the next action would wait
// for it).
const armDefer = 3 * time.Millisecond

// armedTaken counts the actions that ran in an armed worker, armedMissed
// those that had a plan and found no worker that fit.
var armedTaken, armedMissed atomic.Int64

// armEvery (tests) arms a worker for an action's plan before taking one,
// so that every action with a plan runs in an armed worker.
var armEvery bool

// armedSlot holds the workers of one plan, each on its way or ready,
// and, when not nil, the deferral of replacements waiting out armDefer.
type armedSlot struct {
	plan     *plan
	workers  []chan *proc
	deferred *deferral
}

// deferral holds back the start of replacements: closing kick starts
// them; with dropped set (under warm's lock) they are not armed at all.
type deferral struct {
	kick    chan struct{}
	dropped bool
}

// endDeferral ends s's deferral: its replacements start arming now, or,
// with drop, are not armed. The caller holds warm's lock.
func (s *armedSlot) endDeferral(drop bool) {
	if s.deferred != nil {
		s.deferred.dropped = drop
		close(s.deferred.kick)
		s.deferred = nil
	}
}

// plan is the confinement of one action: everything a child applies
// before it knows the command. canon is its canonical encoding and key
// its digest.
type plan struct {
	key    string
	canon  []byte
	l      launcher
	m      nsMode
	netOn  bool
	limits Limits
	cfg    *child.Config // Mode armed; RW without the home directory
}

// newPlan is the plan of cfg, a child config without its home directory,
// command, environment and directory (those are the request's).
func newPlan(l launcher, m nsMode, netOn bool, limits Limits, cfg *child.Config) (*plan, error) {
	c := *cfg // its own copy of every list: the plan outlives the action
	c.Mode = child.ModeArmed
	c.Argv, c.Env, c.Dir = nil, nil, ""
	c.RO, c.RW, c.Protect, c.Dev = slices.Clone(c.RO), slices.Clone(c.RW), slices.Clone(c.Protect), slices.Clone(c.Dev)
	c.TCPPorts, c.UDPPorts, c.Limits = slices.Clone(c.TCPPorts), slices.Clone(c.UDPPorts), slices.Clone(c.Limits)
	c.BPF = slices.Clone(c.BPF)
	canon, err := json.Marshal(struct {
		Helper string        `json:"helper"`
		Argv0  string        `json:"argv0"`
		Self   bool          `json:"self"`
		NS     string        `json:"ns"`
		NetOn  bool          `json:"net_on"`
		Limits Limits        `json:"limits"`
		Config *child.Config `json:"config"`
	}{l.path, l.argv0, l.self, fmt.Sprintf("%+v", m), netOn, limits, &c})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return &plan{key: hex.EncodeToString(sum[:]), canon: canon, l: l, m: m, netOn: netOn, limits: limits, cfg: &c}, nil
}

// config is the plan's child config for a worker whose home is home.
func (pl *plan) config(home string) *child.Config {
	c := *pl.cfg
	c.RW = append([]string{home}, pl.cfg.RW...)
	return &c
}

// paths are the granted paths whose files the worker's confinement holds.
func (pl *plan) paths() []string {
	c := pl.cfg
	ps := slices.Concat(c.RO, c.RW, c.Protect, c.Dev)
	if c.Exe != "" {
		ps = append(ps, c.Exe)
	}
	return ps
}

// fileID is what a path was: absent, or a file on a device, both for the
// path itself and for what it leads to.
type fileID struct {
	lok, ok     bool
	ldev, lino  uint64
	dev, ino    uint64
	lmode, mode uint32
}

// fingerprint identifies the file at each path. Landlock's rules and the
// bind mounts hold the files a path led to when the worker confined
// itself; a path that now leads elsewhere (renamed, replaced, created or
// removed) would make the worker's grants differ from the plan's.
func fingerprint(paths []string) []fileID {
	ids := make([]fileID, len(paths))
	for i, p := range paths {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue // absent: nothing there to follow either
		}
		ids[i].lok, ids[i].ldev, ids[i].lino, ids[i].lmode = true, st.Dev, st.Ino, st.Mode&unix.S_IFMT
		if ids[i].lmode != unix.S_IFLNK { // it leads to itself: no second lookup
			ids[i].ok, ids[i].dev, ids[i].ino, ids[i].mode = true, st.Dev, st.Ino, ids[i].lmode
			continue
		}
		if unix.Stat(p, &st) == nil {
			ids[i].ok, ids[i].dev, ids[i].ino, ids[i].mode = true, st.Dev, st.Ino, st.Mode&unix.S_IFMT
		}
	}
	return ids
}

// prestarting reports whether a caller wants children started ahead.
func prestarting() bool {
	warm.Lock()
	defer warm.Unlock()
	return warm.users > 0
}

// takeArmed returns the armed worker of pl, or nil when there is none or
// it does not fit. A worker still confining itself is waited for, up to
// armWait.
func takeArmed(pl *plan) *proc {
	if pl == nil {
		return nil
	}
	warm.Lock()
	var ch chan *proc
	if i := slices.IndexFunc(warm.slots, func(s *armedSlot) bool { return s.plan.key == pl.key }); i >= 0 {
		s := warm.slots[i]
		if len(s.workers) > 0 {
			// a ready one first (its buffer holds it), else the oldest
			j := max(0, slices.IndexFunc(s.workers, func(c chan *proc) bool { return len(c) > 0 }))
			ch = s.workers[j]
			s.workers = slices.Delete(s.workers, j, j+1)
		}
		// the next action is here: a deferred replacement arms now
		s.endDeferral(false)
		warm.slots = append(slices.Delete(warm.slots, i, i+1), s) // most recently used last
	}
	warm.Unlock()
	if ch == nil {
		return nil
	}
	var p *proc
	d := armWait
	if armEvery { // tests: a loaded machine must not make an action miss
		d = armTimeout
	}
	wait := time.NewTimer(d)
	defer wait.Stop()
	select {
	case p = <-ch:
	case <-wait.C: // stuck: the action starts its own child
		go func() {
			if p := <-ch; p != nil {
				p.discard()
			}
		}()
		return nil
	}
	if p == nil {
		return nil
	}
	if !fits(p, pl) {
		p.discard()
		return nil
	}
	p.start = time.Now()
	armedTaken.Add(1)
	return p
}

// fits reports whether the armed worker p is confined exactly as pl asks
// and nothing it holds has changed since.
func fits(p *proc, pl *plan) bool {
	return p.plan != nil && bytes.Equal(p.plan.canon, pl.canon) && p.alive() &&
		!mountsChanged(p.mounts) && slices.Equal(p.fp, fingerprint(pl.paths()))
}

// rearm starts fresh workers for pl (after an action with that plan) up
// to armedDepth, unless no caller wants prestarted children. The least
// recently used plan's workers make room when armedPlans are kept.
func rearm(pl *plan) {
	if pl == nil {
		return
	}
	warm.Lock()
	defer warm.Unlock()
	if warm.users == 0 {
		return
	}
	i := slices.IndexFunc(warm.slots, func(s *armedSlot) bool { return s.plan.key == pl.key })
	if i < 0 {
		if len(warm.slots) >= armedPlans {
			dropSlot(warm.slots[0])
			warm.slots = warm.slots[1:]
		}
		warm.slots = append(warm.slots, &armedSlot{plan: pl})
		i = len(warm.slots) - 1
	}
	s := warm.slots[i]
	var d *deferral // nil: arm at once
	if slices.ContainsFunc(s.workers, func(c chan *proc) bool { return len(c) > 0 }) {
		if s.deferred == nil {
			s.deferred = &deferral{kick: make(chan struct{})}
		}
		d = s.deferred
	}
	for len(s.workers) < armedDepth {
		ch := make(chan *proc, 1)
		s.workers = append(s.workers, ch)
		go spawnArmed(pl, ch, d)
	}
}

// dropSlot discards the workers of s, when they are ready, in the
// background.
func dropSlot(s *armedSlot) {
	s.endDeferral(true)
	for _, ch := range s.workers {
		go func() {
			if p := <-ch; p != nil {
				p.discard()
			}
		}()
	}
	s.workers = nil
}

// armStarts counts the workers started, armFailures those that could
// not be armed (their actions started a child as before).
var armStarts, armFailures atomic.Int64

// spawnArmed arms a worker for pl and holds its OS thread until the
// worker has been waited for (its parent-death signal is tied to it).
// With a deferral it first waits armDefer, or until the deferral ends; a
// worker no caller wants any more by then is not armed.
func spawnArmed(pl *plan, ch chan<- *proc, d *deferral) {
	if d != nil {
		t := time.NewTimer(armDefer)
		select {
		case <-t.C:
		case <-d.kick:
			t.Stop()
		}
		warm.Lock()
		dropped := d.dropped || warm.users == 0
		warm.Unlock()
		if dropped {
			ch <- nil
			return
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	armStarts.Add(1)
	p, err := arm(pl)
	if err != nil {
		armFailures.Add(1)
		ch <- nil
		return
	}
	ch <- p
	<-p.done
}

// arm starts a worker for pl, sends it its plan and waits until it
// reports that it is confined as the plan asks.
func arm(pl *plan) (*proc, error) {
	var cg *jobCgroup
	if k := jobCgroups(); k.version != "" {
		var err error
		if cg, err = newJobCgroup(k, pl.limits); err != nil {
			return nil, err
		}
	}
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil, err
	}
	home, err := newHome()
	if err != nil {
		unix.Close(mounts)
		cg.remove()
		return nil, err
	}
	cfg := pl.config(home.dir)
	if cfg.UID >= 0 {
		if err := os.Chown(home.dir, cfg.UID, cfg.GID); err != nil {
			unix.Close(mounts)
			cg.remove()
			home.remove()
			return nil, err
		}
	}
	before := fingerprint(pl.paths())
	p, err := startProc(pl.l, pl.m, pl.netOn, cg, startArmed)
	if err != nil {
		unix.Close(mounts)
		cg.remove()
		home.remove()
		return nil, err
	}
	p.cgLimits, p.home, p.mounts = pl.limits, home, mounts
	if err := confine(p, cfg); err != nil {
		p.discard()
		return nil, err
	}
	if !slices.Equal(before, fingerprint(pl.paths())) {
		p.discard()
		return nil, errors.New("a granted path changed while the worker confined itself")
	}
	p.plan, p.fp = pl, before
	return p, nil
}

// relayCgroupArgs are the relay's arguments that make it join the job
// cgroups cg itself, from the thread that clones an armed worker, instead
// of being moved into them by claw; nil when claw moves it. With v1,
// moving a whole process waits for an RCU grace period (a median of 9 ms
// per worker at load 7, most of arming it), a thread that moves itself
// does not. The worker and everything it starts are born inside.
func relayCgroupArgs(cg *jobCgroup, how startHow) []string {
	if how != startArmed || cg == nil || cg.version != "v1" {
		return nil
	}
	var args []string
	for _, d := range cg.dirs {
		args = append(args, child.ArgCgroup, d)
	}
	return args
}

// confine sends the worker its config and reads its "ready" line, which
// must say it applied what cfg asks.
func confine(p *proc, cfg *child.Config) error {
	if err := child.WriteFrame(p.cfgW, child.MarshalConfig(cfg)); err != nil {
		return err
	}
	p.stR.SetReadDeadline(time.Now().Add(armTimeout))
	br := bufio.NewReader(p.stR)
	line, err := br.ReadSlice('\n')
	p.stR.SetReadDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("worker status: %w", err)
	}
	var st child.Status
	if err := json.Unmarshal(line, &st); err != nil {
		return fmt.Errorf("worker status: %w", err)
	}
	if err := asPlanned(cfg, st); err != nil {
		return err
	}
	p.ready, p.stBuf = &st, br
	return nil
}

// asPlanned checks a worker's "ready" line against its config.
func asPlanned(cfg *child.Config, st child.Status) error {
	switch {
	case st.Stage != "ready" || st.Code != 0:
		return fmt.Errorf("worker not confined: %s %s", st.Stage, st.Err)
	case !st.Caps, st.Mount != cfg.MountNS, st.Proc != cfg.MountProc:
		return errors.New("worker confined otherwise than planned")
	case !cfg.Degraded && (st.ABI <= 0 || st.ABI < cfg.MinABI):
		return errors.New("worker without the planned Landlock ABI")
	case cfg.UID >= 0 && st.UID != cfg.UID:
		return errors.New("worker runs as another uid than planned")
	}
	return nil
}
