package sop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted carries out steps by the outcomes a test gives it, and notes
// each call.
type scripted struct {
	mu       sync.Mutex
	calls    []string
	outcomes map[string]Outcome // by step id; missing: ok with output "out:ID"
	block    map[string]bool    // steps that wait until ctx ends
	args     map[string]map[string]any
	messages map[string]string
}

func (s *scripted) do(ctx context.Context, step string) Outcome {
	s.mu.Lock()
	s.calls = append(s.calls, step)
	out, ok := s.outcomes[step]
	block := s.block[step]
	s.mu.Unlock()
	if block {
		<-ctx.Done()
		return Outcome{Status: OutcomeFailed, Error: "interrupted"}
	}
	if !ok {
		out = Outcome{Status: OutcomeOK, Output: "out:" + step}
	}
	return out
}

func (s *scripted) Tool(ctx context.Context, run, step, tool string, args map[string]any) (Outcome, error) {
	s.mu.Lock()
	if s.args == nil {
		s.args = map[string]map[string]any{}
	}
	s.args[step] = args
	s.mu.Unlock()
	return s.do(ctx, step), nil
}

func (s *scripted) Agent(ctx context.Context, run, step, message string) (Outcome, error) {
	s.mu.Lock()
	if s.messages == nil {
		s.messages = map[string]string{}
	}
	s.messages[step] = message
	s.mu.Unlock()
	return s.do(ctx, step), nil
}

func (s *scripted) Approve(ctx context.Context, run, step, prompt string) (Outcome, error) {
	return s.do(ctx, step), nil
}

func (s *scripted) called() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.calls, ",")
}

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil { // claw's memory database, opened first
		t.Fatal(err)
	}
	st, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func daily(t testing.TB) (*SOP, []byte) {
	src := readDaily(t)
	p, err := Decode(src, "SOP.toml", known)
	if err != nil {
		t.Fatal(err)
	}
	return p, src
}

// TestRunWaitsAndResumes runs the daily-check SOP to its approval step,
// which nobody can answer; a new process (a new store on the same file)
// resumes the run at that step and finishes it with the saved outputs.
func TestRunWaitsAndResumes(t *testing.T) {
	ctx := context.Background()
	st, path := newStore(t)
	p, src := daily(t)
	r, err := st.Create(ctx, p, src)
	if err != nil {
		t.Fatal(err)
	}
	steps := &scripted{outcomes: map[string]Outcome{"approval": {Status: OutcomeWaiting, Error: "nobody to ask"}}}
	if err := (&Runner{Store: st, Steps: steps}).Run(ctx, p, r); err != nil {
		t.Fatal(err)
	}
	if r.State != StateWaiting || r.Next != 2 || steps.called() != "list,summarize,approval" {
		t.Fatalf("state %s next %d calls %s", r.State, r.Next, steps.called())
	}
	if m := steps.messages["summarize"]; !strings.HasPrefix(m, "Summarize the file list") || !strings.Contains(m, "out:list") {
		t.Fatalf("agent message lacks the previous output: %q", m)
	}

	st2, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	saved, err := st2.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.State != StateWaiting || saved.Next != 2 || saved.Steps[1].Output != "out:summarize" || saved.Steps[2].Status != StepWaiting || string(saved.Source) != string(src) {
		t.Fatalf("saved run: %+v", saved)
	}
	again := &scripted{}
	if err := (&Runner{Store: st2, Steps: again}).Run(ctx, p, saved); err != nil {
		t.Fatal(err)
	}
	if saved.State != StateDone || again.called() != "approval,write" {
		t.Fatalf("state %s calls %s", saved.State, again.called())
	}
	if got := again.args["write"]; got["content"] != "out:summarize" || got["path"] != "daily-check.txt" || got[ContentFrom] != nil {
		t.Fatalf("write args: %v", got)
	}
	done, _ := st2.Get(ctx, r.ID)
	for _, s := range done.Steps {
		if s.Status != StepOK {
			t.Fatalf("step %s: %s", s.ID, s.Status)
		}
	}
}

// TestRunKilledMidStep leaves a step saved as running (its process died)
// and checks that resume runs that step again, not the ones before it.
func TestRunKilledMidStep(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t)
	p, src := daily(t)
	r, _ := st.Create(ctx, p, src)
	r.Steps[0] = StepState{ID: "list", Status: StepOK, Output: "files"}
	r.Next = 1
	if err := st.Save(ctx, r, 0); err != nil {
		t.Fatal(err)
	}
	r.Steps[1].Status = StepRunning
	if err := st.Save(ctx, r, 1); err != nil {
		t.Fatal(err)
	}
	saved, _ := st.Get(ctx, r.ID)
	steps := &scripted{}
	if err := (&Runner{Store: st, Steps: steps}).Run(ctx, p, saved); err != nil {
		t.Fatal(err)
	}
	if steps.called() != "summarize,approval,write" || saved.State != StateDone {
		t.Fatalf("calls %s state %s", steps.called(), saved.State)
	}
	if !strings.Contains(steps.messages["summarize"], "files") {
		t.Fatalf("the saved output of list was lost: %q", steps.messages["summarize"])
	}
}

func TestRunOnFailure(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		onFailure, state, calls string
	}{
		{"abort", StateFailed, "a"},
		{"continue", StateDone, "a,b"},
	} {
		t.Run(tt.onFailure, func(t *testing.T) {
			src := []byte("name = \"x\"\n[[steps]]\nid = \"a\"\nkind = \"tool\"\ntool = \"shell\"\nargs = {command = \"false\"}\non_failure = \"" + tt.onFailure + "\"\n[[steps]]\nid = \"b\"\nkind = \"agent\"\nprompt = \"go on\"\n")
			p, err := Decode(src, "f.toml", known)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := newStore(t)
			r, _ := st.Create(ctx, p, src)
			steps := &scripted{outcomes: map[string]Outcome{"a": {Status: OutcomeFailed, Error: "denied"}}}
			if err := (&Runner{Store: st, Steps: steps}).Run(ctx, p, r); err != nil {
				t.Fatal(err)
			}
			saved, _ := st.Get(ctx, r.ID)
			if saved.State != tt.state || steps.called() != tt.calls || saved.Steps[0].Status != StepFailed || saved.Steps[0].Error != "denied" {
				t.Fatalf("state %s calls %s step %+v", saved.State, steps.called(), saved.Steps[0])
			}
			if tt.onFailure == "abort" && !strings.Contains(saved.Error, "step a failed: denied") {
				t.Fatalf("error %q", saved.Error)
			}
		})
	}
}

// TestRunEstop: an engaged stop ends the run before its next step, and a
// step the broker stopped stops the run whatever on_failure says.
func TestRunEstop(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t)
	p, src := daily(t)
	r, _ := st.Create(ctx, p, src)
	steps := &scripted{}
	if err := (&Runner{Store: st, Steps: steps, Estop: func() bool { return true }}).Run(ctx, p, r); err != nil {
		t.Fatal(err)
	}
	if steps.called() != "" || r.State != StateStopped {
		t.Fatalf("calls %q state %s", steps.called(), r.State)
	}
	steps = &scripted{outcomes: map[string]Outcome{"summarize": {Status: OutcomeStopped}}}
	if err := (&Runner{Store: st, Steps: steps, Estop: func() bool { return false }}).Run(ctx, p, r); err != nil {
		t.Fatal(err)
	}
	saved, _ := st.Get(ctx, r.ID)
	if steps.called() != "list,summarize" || saved.State != StateStopped || saved.Next != 1 || saved.Steps[1].Status != StepStopped {
		t.Fatalf("calls %q run %+v", steps.called(), saved)
	}
}

// TestRunCancelled: a cancel saved by another process ends a step that is
// waiting, and the run is not resumable.
func TestRunCancelled(t *testing.T) {
	ctx := context.Background()
	st, path := newStore(t)
	p, src := daily(t)
	r, _ := st.Create(ctx, p, src)
	steps := &scripted{block: map[string]bool{"approval": true}}
	done := make(chan error, 1)
	go func() { done <- (&Runner{Store: st, Steps: steps, Poll: 10 * time.Millisecond}).Run(ctx, p, r) }()
	other, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for {
		s, _ := other.Get(ctx, r.ID)
		if s.Steps[2].Status == StepRunning {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := other.SetState(ctx, r.ID, StateCancelled); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	saved, _ := other.Get(ctx, r.ID)
	if saved.State != StateCancelled || saved.Resumable() || steps.called() != "list,summarize,approval" {
		t.Fatalf("run %+v calls %s", saved, steps.called())
	}
}

func TestStoreUnknownRun(t *testing.T) {
	st, _ := newStore(t)
	if _, err := st.Get(context.Background(), "run-nope"); err == nil || !strings.Contains(err.Error(), "no such run") {
		t.Fatalf("Get: %v", err)
	}
	if err := st.SetState(context.Background(), "run-nope", StateCancelled); err == nil {
		t.Fatal("SetState of an unknown run succeeded")
	}
}

func TestCutOutput(t *testing.T) {
	long := strings.Repeat("é", MaxOutput)
	got := cutOutput(long)
	if len(got) > MaxOutput || !strings.HasSuffix(got, "[output cut]") || !strings.HasPrefix(got, "éé") {
		t.Fatalf("len %d", len(got))
	}
	if cutOutput("short") != "short" {
		t.Fatal("short output changed")
	}
}

// TestOpenStoreNeedsDatabase: the store never creates a database of its
// own (claw opens the memory database, with its mode, first).
func TestOpenStoreNeedsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	if st, err := OpenStore(path); err == nil {
		st.Close()
		t.Fatal("opened a database that does not exist")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("created %s: %v", path, err)
	}
}

// TestRunClaimed: a run held by a live process is not run by another; one
// held by a process that died (killed mid-run) is taken over, and a run
// that ends is released.
func TestRunClaimed(t *testing.T) {
	ctx := context.Background()
	st, _ := newStore(t)
	p, src := daily(t)
	r, _ := st.Create(ctx, p, src)
	if err := st.Claim(ctx, r.ID, 100, func(int) bool { return true }); err != nil {
		t.Fatal(err)
	}
	steps := &scripted{}
	alive := func(pid int) bool { return pid == 100 }
	err := (&Runner{Store: st, Steps: steps, PID: 200, Alive: alive}).Run(ctx, p, r)
	if !errors.Is(err, ErrBusy) || steps.called() != "" {
		t.Fatalf("ran a run another live process holds: %v, calls %q", err, steps.called())
	}
	dead := func(int) bool { return false }
	if err := (&Runner{Store: st, Steps: steps, PID: 200, Alive: dead}).Run(ctx, p, r); err != nil {
		t.Fatal(err)
	}
	if steps.called() != "list,summarize,approval,write" {
		t.Fatalf("calls %q", steps.called())
	}
	if err := st.Claim(ctx, r.ID, 300, func(int) bool { return true }); err != nil {
		t.Fatalf("a finished run is still held: %v", err)
	}
	if err := st.Claim(ctx, "run-nope", 1, dead); !errors.Is(err, ErrNoRun) {
		t.Fatalf("Claim of an unknown run: %v", err)
	}
}
