package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/internal/estop"
)

// ErrEstop is the cause of the context of an action cancelled because the
// emergency stop was engaged while it was waiting or running.
var ErrEstop = errors.New("cancelled by the emergency stop")

// estopPoll is how often the watcher also stats the ESTOP file, as a
// backstop for inotify (and the only check when inotify is unavailable).
const estopPoll = 100 * time.Millisecond

// estopInotify turns the inotify watch on; off, the poll alone remains
// (a test knob, to measure both).
var estopInotify = true

// running is the registry of actions in flight: their cancel functions,
// and the watcher that cancels them all when the ESTOP file appears. The
// watcher runs only while at least one action is in flight.
type running struct {
	mu      sync.Mutex
	next    uint64
	cancels map[uint64]inflight
	stop    chan struct{} // closed to end the current watcher
}

// inflight is one action in flight: its context and how to cancel it.
type inflight struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// track registers an action in flight. The returned context is cancelled
// with ErrEstop when the emergency stop is engaged; done unregisters it.
func (b *Broker) track(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if b.cfg.EstopFile == "" {
		return ctx, func() { cancel(nil) }
	}
	r := &b.running
	r.mu.Lock()
	if r.cancels == nil {
		r.cancels = map[uint64]inflight{}
	}
	id := r.next
	r.next++
	r.cancels[id] = inflight{ctx, cancel}
	if r.stop == nil {
		r.stop = make(chan struct{})
		b.startWatcher(r.stop)
	}
	r.mu.Unlock()
	// The watcher is in place: a file created from now on is seen. One
	// created before is seen here.
	if b.estopEngaged() {
		cancel(ErrEstop)
	}
	return ctx, func() {
		cancel(nil)
		r.mu.Lock()
		delete(r.cancels, id)
		if len(r.cancels) == 0 && r.stop != nil {
			close(r.stop)
			r.stop = nil
		}
		r.mu.Unlock()
	}
}

// Estopped reports whether the emergency stop is engaged (see
// Config.EstopFile): an autonomous run stops on it.
func (b *Broker) Estopped() bool { return b.estopEngaged() }

// estopEngaged reports whether the ESTOP file exists. Anything but a clean
// "does not exist" counts as engaged: fail closed.
func (b *Broker) estopEngaged() bool { return estop.Engaged(b.cfg.EstopFile) }

// cancelAll cancels every action in flight with ErrEstop. When that stops
// any that were still running, it logs estop_triggered (the event
// logx.EventEstopTriggered names; the broker does not import logx), once:
// a later poll finds them cancelled already.
func (b *Broker) cancelAll() {
	r := &b.running
	r.mu.Lock()
	n := 0
	for _, a := range r.cancels {
		if a.ctx.Err() == nil {
			n++
		}
		a.cancel(ErrEstop)
	}
	r.mu.Unlock()
	// after the cancels and outside the lock: a slow log never delays a stop
	if n > 0 {
		b.cfg.Logger.Warn("emergency stop: cancelled the actions in flight", "event", "estop_triggered", "actions", n)
	}
}

// startWatcher watches the ESTOP file's directory with inotify (set up
// before it returns, so no creation is missed) and polls it every
// estopPoll as a backstop, until stop is closed.
func (b *Broker) startWatcher(stop chan struct{}) {
	events := make(chan struct{}, 1)
	var f *os.File
	dir, name := filepath.Split(b.cfg.EstopFile)
	if fd, err := inotifyInit(); err == nil {
		if _, err := unix.InotifyAddWatch(fd, filepath.Clean(dir), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err == nil {
			f = os.NewFile(uintptr(fd), "inotify") // non-blocking: Close unblocks Read
		} else {
			unix.Close(fd)
		}
	}
	if f != nil {
		go func() {
			buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
			for {
				n, err := f.Read(buf)
				if err != nil {
					return
				}
				if inotifyNames(buf[:n], name) {
					select {
					case events <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	go func() {
		if f != nil {
			defer f.Close()
		}
		t := time.NewTicker(estopPoll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-events:
			case <-t.C:
			}
			if b.estopEngaged() {
				b.cancelAll()
			}
		}
	}()
}

func inotifyInit() (int, error) {
	if !estopInotify {
		return -1, errors.New("inotify is off")
	}
	return unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
}

// inotifyNames reports whether the events in buf name the file name.
func inotifyNames(buf []byte, name string) bool {
	for len(buf) >= unix.SizeofInotifyEvent {
		// struct inotify_event { int32 wd; uint32 mask, cookie, len; char name[]; }
		mask := binary.NativeEndian.Uint32(buf[4:8])
		end := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[12:16]))
		if end > len(buf) {
			return true // malformed: look at the file
		}
		n := buf[unix.SizeofInotifyEvent:end]
		for i, c := range n {
			if c == 0 {
				n = n[:i]
				break
			}
		}
		if string(n) == name || mask&unix.IN_Q_OVERFLOW != 0 {
			return true
		}
		buf = buf[end:]
	}
	return false
}
