package executor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A warm child: Prestart keeps one sandbox child started ahead of the next
// Run, so an action does not wait for the clone into new namespaces, the
// id maps, the cgroup attach and the helper's own start (about half of a
// spawn). The child has done nothing else: it has no config, no
// confinement and no command until Run hands it an action, after which it
// confines itself exactly like a child started on demand. It is used once.
// Only actions without a network grant take it (it was cloned into a new
// network namespace); the others start their child on demand.

// warmTaken counts the actions that ran in a prestarted child.
var warmTaken atomic.Int64

var warm struct {
	sync.Mutex
	users    int          // Prestart calls not yet matched by StopPrestart
	next     chan *proc   // a child being started or ready; nil when none
	slots    []*armedSlot // armed workers by plan, least recently used first
	removing int          // homes of finished actions being removed
	removed  sync.Cond    // signalled (on warm's lock) when removing drops to 0
}

func init() { warm.removed.L = &warm.Mutex }

// Prestart makes Run keep one sandbox child started ahead of the next
// action, and, after each action, armed workers for its confinement plan
// (see the package doc), for long-lived programs (the agent REPL, the
// daemon, the MCP proxy). A short-lived program should not call it: the
// children would be started for nothing. Each call must be matched by one
// StopPrestart; the children are kept while any caller wants them.
func Prestart() {
	warm.Lock()
	warm.users++
	warm.Unlock()
	refill()
}

// StopPrestart undoes one Prestart. When no caller wants a prestarted
// child any more, the one kept (if any) and every armed worker are
// killed, with their home directories and cgroups, before it returns.
func StopPrestart() {
	warm.Lock()
	if warm.users > 0 {
		warm.users--
	}
	var chs []chan *proc
	if warm.users == 0 {
		if warm.next != nil {
			chs = append(chs, warm.next)
		}
		for _, s := range warm.slots {
			s.endDeferral(true)
			chs = append(chs, s.workers...)
		}
		warm.next, warm.slots = nil, nil
	}
	warm.Unlock()
	for _, ch := range chs {
		if p := <-ch; p != nil {
			p.discard()
		}
	}
	waitHomes()
}

// removeHome removes the home of a finished action. While a caller keeps
// children started ahead (a long-lived program) it does so in the
// background, after Run has returned, and StopPrestart waits for it: no
// later action can see that home, since every child has its own, made
// when it was started. Otherwise it is removed before Run returns.
func removeHome(h *sandboxHome) {
	warm.Lock()
	later := warm.users > 0
	if later {
		warm.removing++
	}
	warm.Unlock()
	if !later {
		h.remove()
		return
	}
	go func() {
		if homeRemoval != nil {
			homeRemoval()
		}
		h.remove()
		warm.Lock()
		if warm.removing--; warm.removing == 0 {
			warm.removed.Broadcast()
		}
		warm.Unlock()
	}()
}

// homeRemoval (tests) runs before a home is removed in the background.
var homeRemoval func()

// waitHomes waits until the homes being removed in the background are.
func waitHomes() {
	warm.Lock()
	for warm.removing > 0 {
		warm.removed.Wait()
	}
	warm.Unlock()
}

// refill starts the next warm child, unless one is on its way.
func refill() {
	warm.Lock()
	defer warm.Unlock()
	if warm.users == 0 || warm.next != nil {
		return
	}
	ch := make(chan *proc, 1)
	warm.next = ch
	go spawnWarm(ch)
}

// spawnWarm starts a child and holds its OS thread until the child has
// been waited for (its parent-death signal is tied to that thread).
func spawnWarm(ch chan<- *proc) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sup := fastSupport()
	if checkedReady.Load() {
		sup = Check()
	}
	l, err := findHelper()
	if err != nil || sup.Require(DefaultMinLandlockABI) != nil {
		ch <- nil
		return
	}
	limits := withDefaults(Spec{}).Limits
	var cg *jobCgroup
	if k := jobCgroups(); k.version != "" {
		if cg, err = newJobCgroup(k, limits); err != nil {
			ch <- nil // Run starts one on demand and reports why
			return
		}
	}
	// the child's mount namespace is a copy of this one as it is now: a
	// mount or unmount from here on makes it stale. A raw descriptor: the
	// Go runtime's poller would register an *os.File with epoll, whose
	// wake-ups read (and so clear) the kernel's change mark.
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		ch <- nil
		return
	}
	home, err := newHome()
	if err != nil {
		unix.Close(mounts)
		cg.remove()
		ch <- nil
		return
	}
	p, err := startProc(l, sup.ns, false, cg, startPrestarted)
	if err != nil {
		unix.Close(mounts)
		cg.remove()
		home.remove()
		ch <- nil
		return
	}
	p.cgLimits, p.home, p.mounts = limits, home, mounts
	ch <- p
	<-p.done
}

// takeWarm returns the warm child when it fits the action (same helper,
// same namespaces, no network). A child still starting is waited for: it
// is further along than a new one would be. The next one is started when
// the action is over (Run calls refill), so that it does not compete with
// the action for the CPUs.
func takeWarm(l launcher, m nsMode, netOn bool, limits Limits) *proc {
	if netOn {
		return nil
	}
	warm.Lock()
	ch := warm.next
	if ch != nil {
		warm.next = nil
	}
	warm.Unlock()
	if ch == nil {
		return nil
	}
	p := <-ch
	if p == nil {
		return nil
	}
	if p.l != l || p.m != m || p.netOn || !p.alive() || mountsChanged(p.mounts) {
		p.discard()
		return nil
	}
	if limits != p.cgLimits {
		if err := p.cg.setLimits(limits); err != nil {
			p.discard()
			return nil
		}
	}
	p.start = time.Now()
	warmTaken.Add(1)
	return p
}

// mountsChanged reports whether anything was mounted or unmounted in this
// mount namespace since fd (its mountinfo) was opened: the kernel marks
// the file with an exceptional condition then. When it cannot tell, the
// answer is yes.
func mountsChanged(fd int) bool {
	if fd < 0 {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	return err != nil || n != 0
}
