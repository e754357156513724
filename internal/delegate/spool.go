package delegate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawsec/claw/internal/hook"
)

// HookEntry is the hidden claw entry the generated settings run as the
// agent's hook: claw __delegate_hook SPOOL.
const HookEntry = "__delegate_hook"

// relayDeadline bounds one relayed decision, from the event written to
// the answer read; the settings give the agent's hook a longer timeout.
const relayDeadline = 30 * time.Second

// The relay, in the sandbox, cannot watch the spool (the sandbox refuses
// inotify): it looks for its answer after pollFirst, then twice as long
// each time, at most pollEvery apart; an answer is usually there within
// a few milliseconds. The spool's server watches the request directory
// with inotify, and looks every pollEvery besides (or only, where inotify
// is not available).
const (
	pollFirst = 500 * time.Microsecond
	pollEvery = 10 * time.Millisecond
)

// The spool's directories: requests the sandbox writes, answers it reads.
const (
	reqDir = "req"
	ansDir = "ans"
)

// spoolPrefix starts the name of a run's spool in the temporary
// directory, followed by spoolOwner: the PID namespace and the pid of
// the claw that made it.
const spoolPrefix = "claw-delegate-"

// spoolOwner names this claw in its spools' names: "NS.PID-", NS the
// inode of its PID namespace (0 when it cannot be read).
func spoolOwner() string {
	return fmt.Sprintf("%d.%d-", pidNamespace(), os.Getpid())
}

func pidNamespace() uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
}

// sweepSpools removes the spools in dir that a claw killed before it
// could clean up left behind: those of this user made in this PID
// namespace whose claw is gone. A spool of a running pid (perhaps
// reused), of another namespace (a container sharing the directory, where
// the pid means another process) or of an unknown one is left alone.
func sweepSpools(dir string) {
	ns := pidNamespace()
	ents, err := os.ReadDir(dir)
	if ns == 0 || err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), spoolPrefix)
		owner, _, _ := strings.Cut(rest, "-")
		nsText, pidText, _ := strings.Cut(owner, ".")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || nsText != strconv.FormatUint(ns, 10) || !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, isUnix := fi.Sys().(*syscall.Stat_t); !isUnix || int(st.Uid) != os.Geteuid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(path)
		}
	}
}

// answer is one relayed hook answer: the exit status and what the hook
// prints.
type answer struct {
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// HookMain is [HookEntry]: it relays the event on standard input to the
// parent claw through the spool directory args[0] and answers as the
// parent decided. Anything that goes wrong blocks the tool call: exit 2.
func HookMain(args []string) int {
	a, err := relay(args, os.Stdin)
	if err == nil {
		err = hook.CheckAnswer(hook.ClaudeCode, a.Exit, a.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "claw: blocked: %v\n", err)
		return hook.ExitBlock
	}
	os.Stderr.WriteString(a.Stderr)
	if _, err := os.Stdout.WriteString(a.Stdout); err != nil {
		return hook.ExitBlock
	}
	return a.Exit
}

// relay writes the event into the spool and waits for its answer.
func relay(args []string, stdin io.Reader) (answer, error) {
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		return answer{}, errors.New("usage: claw " + HookEntry + " SPOOL")
	}
	spool := args[0]
	ev, err := io.ReadAll(io.LimitReader(stdin, hook.MaxInput+1))
	if err != nil {
		return answer{}, fmt.Errorf("failed to read the hook event: %w", err)
	}
	id := newID()
	tmp := filepath.Join(spool, reqDir, "."+id)
	if err := os.WriteFile(tmp, ev, 0o600); err != nil {
		return answer{}, fmt.Errorf("failed to hand the event to claw: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(spool, reqDir, id+".json")); err != nil {
		return answer{}, fmt.Errorf("failed to hand the event to claw: %w", err)
	}
	deadline := time.Now().Add(relayDeadline)
	for wait := pollFirst; time.Now().Before(deadline); wait = min(2*wait, pollEvery) {
		b, err := readFile(filepath.Join(spool, ansDir, id+".json"), maxAnswer)
		if errors.Is(err, os.ErrNotExist) {
			time.Sleep(wait)
			continue
		}
		if err != nil {
			return answer{}, fmt.Errorf("failed to read claw's answer: %w", err)
		}
		var a answer
		if err := json.Unmarshal(b, &a); err != nil {
			return answer{}, fmt.Errorf("claw's answer is malformed: %w", err)
		}
		return a, nil
	}
	return answer{}, fmt.Errorf("no answer from claw within %s", relayDeadline)
}

// maxAnswer bounds a relayed answer, as encoded (the hook's reason is
// clipped far below it).
const maxAnswer = 64 << 10

// newID is a request's name: random, so that nobody can guess it.
func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// readFile reads a file of the spool, of at most n bytes, never through
// a link: the sandbox writes there.
func readFile(path string, n int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > n {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), n)
	}
	return b, nil
}

// decideFunc decides one event as the hook would, returning its answer.
type decideFunc func(ctx context.Context, event []byte) answer

// serve answers the spool's requests until ctx ends, one at a time, in
// the order they are found.
func serve(ctx context.Context, spool string, decide decideFunc) {
	arrived := watchDir(ctx, filepath.Join(spool, reqDir))
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		ents, _ := os.ReadDir(filepath.Join(spool, reqDir))
		for _, e := range ents {
			name := e.Name()
			id, ok := strings.CutSuffix(name, ".json")
			if !ok || strings.HasPrefix(name, ".") {
				continue
			}
			path := filepath.Join(spool, reqDir, name)
			b, err := readFile(path, hook.MaxInput+1)
			os.Remove(path)
			a := answer{Exit: hook.ExitBlock, Stderr: "claw: blocked: the event could not be read\n"}
			if err == nil {
				a = decide(ctx, b)
			}
			writeAnswer(spool, id, a)
		}
		select {
		case <-ctx.Done():
			return
		case <-arrived:
		case <-t.C:
		}
	}
}

// watchDir returns a channel that receives when a file is moved into
// dir or written there, until ctx ends; where inotify is not available
// it never receives, and the caller's polling is all there is.
func watchDir(ctx context.Context, dir string) <-chan struct{} {
	c := make(chan struct{}, 1)
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return c
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE|unix.IN_ONLYDIR); err != nil {
		unix.Close(fd)
		return c
	}
	f := os.NewFile(uintptr(fd), "inotify "+dir) // the runtime's poller wakes the read
	go func() {
		<-ctx.Done()
		f.Close()
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.Read(buf); err != nil {
				return // closed at ctx's end
			}
			select {
			case c <- struct{}{}:
			default: // one wake-up is pending: it will see every file
			}
		}
	}()
	return c
}

// writeAnswer makes the answer to request id appear whole.
func writeAnswer(spool, id string, a answer) {
	b, _ := json.Marshal(a)
	tmp := filepath.Join(spool, ansDir, "."+id)
	if os.WriteFile(tmp, b, 0o644) == nil {
		os.Rename(tmp, filepath.Join(spool, ansDir, id+".json"))
	}
}
