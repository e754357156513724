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
	"strings"
	"syscall"
	"time"

	"github.com/clawsec/claw/internal/hook"
)

// HookEntry is the hidden claw entry the generated settings run as the
// agent's hook: claw __delegate_hook SPOOL.
const HookEntry = "__delegate_hook"

// relayDeadline bounds one relayed decision, from the event written to
// the answer read; the settings give the agent's hook a longer timeout.
const relayDeadline = 30 * time.Second

// pollEvery is how often the relay and the spool look for files.
const pollEvery = 10 * time.Millisecond

// The spool's directories: requests the sandbox writes, answers it reads.
const (
	reqDir = "req"
	ansDir = "ans"
)

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
	for time.Now().Before(deadline) {
		b, err := readFile(filepath.Join(spool, ansDir, id+".json"), maxAnswer)
		if errors.Is(err, os.ErrNotExist) {
			time.Sleep(pollEvery)
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
		case <-t.C:
		}
	}
}

// writeAnswer makes the answer to request id appear whole.
func writeAnswer(spool, id string, a answer) {
	b, _ := json.Marshal(a)
	tmp := filepath.Join(spool, ansDir, "."+id)
	if os.WriteFile(tmp, b, 0o644) == nil {
		os.Rename(tmp, filepath.Join(spool, ansDir, id+".json"))
	}
}
