package sop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawsec/claw/internal/textesc"
)

// Outcome statuses a [Steps] method returns.
const (
	OutcomeOK      = "ok"      // the step did what it was for
	OutcomeFailed  = "failed"  // it failed (a denial, a rejection, a tool error)
	OutcomeWaiting = "waiting" // it needs an approval nobody could be asked for
	OutcomeStopped = "stopped" // the emergency stop is engaged
)

// Outcome is what one step did.
type Outcome struct {
	Status   string
	Output   string // a tool's result or an agent's reply
	ActionID string // the broker's action id, when there was one action
	Error    string
}

// Steps carries out steps. Every method takes its action through the
// broker with the run and step ids in ctx' receipts; an error means the
// broker itself failed (a receipt could not be written) and the run stops
// where it is.
type Steps interface {
	Tool(ctx context.Context, run, step, tool string, args map[string]any) (Outcome, error)
	Agent(ctx context.Context, run, step, message string) (Outcome, error)
	Approve(ctx context.Context, run, step, prompt string) (Outcome, error)
}

// Runner runs SOPs step by step, saving the run after every step.
type Runner struct {
	Store *Store
	Steps Steps
	// Estop reports whether the emergency stop is engaged; checked before
	// every step (the broker checks it again for every action).
	Estop func() bool
	// Redact is applied to every output before it is saved or passed on.
	Redact func(string) string
	// Poll is how often a running run looks for a cancel made by another
	// process (default 500 ms).
	Poll time.Duration
	// OnStep, when set, is told each step as it starts and ends.
	OnStep func(r *Run, i int)
	// PID and Alive, when Alive is set, make a run one process's at a
	// time: Run claims it for PID first (see [Store.Claim]) and fails
	// with ErrBusy while another live process holds it.
	PID   int
	Alive func(pid int) bool
}

// ErrCancelled is the cause of a run's context once the run is cancelled.
var ErrCancelled = errors.New("the run was cancelled")

// maxPrevious bounds the previous step's output an agent step is given.
const maxPrevious = 64 << 10

// Run runs r (of p) from its next step until it ends, waits for an
// approval nobody can give, fails, or is stopped or cancelled. The run is
// saved before each step starts and after it ends, so a process killed at
// any point leaves the run resumable at the step it was on; that step runs
// again on resume.
func (rn *Runner) Run(ctx context.Context, p *SOP, r *Run) error {
	if len(r.Steps) != len(p.Steps) {
		return fmt.Errorf("run %s has %d steps, its SOP %d", r.ID, len(r.Steps), len(p.Steps))
	}
	if rn.Alive != nil {
		if err := rn.Store.Claim(ctx, r.ID, rn.PID, rn.Alive); err != nil {
			return err
		}
		defer rn.Store.Release(context.WithoutCancel(ctx), r.ID, rn.PID)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go rn.watchCancel(ctx, cancel, r.ID)
	save := context.WithoutCancel(ctx)
	r.State, r.Error = StateRunning, ""
	for r.Next < len(p.Steps) {
		i := r.Next
		st := p.Steps[i]
		if state, err := rn.Store.State(save, r.ID); err != nil {
			return err
		} else if state == StateCancelled || errors.Is(context.Cause(ctx), ErrCancelled) {
			r.State = StateCancelled
			return nil
		}
		if rn.Estop != nil && rn.Estop() {
			r.State, r.Error = StateStopped, "the emergency stop is engaged"
			r.Steps[i].Status = StepStopped
			return rn.Store.Save(save, r, i)
		}
		r.Steps[i] = StepState{ID: st.ID, Status: StepRunning}
		if err := rn.Store.Save(save, r, i); err != nil {
			return err
		}
		rn.notify(r, i)
		out, err := rn.step(ctx, p, r, i)
		if err != nil {
			r.Steps[i].Error = err.Error()
			r.State, r.Error = StateFailed, fmt.Sprintf("step %s: %v", st.ID, err)
			return errors.Join(err, rn.Store.Save(save, r, i))
		}
		if errors.Is(context.Cause(ctx), ErrCancelled) {
			r.State = StateCancelled
			r.Steps[i].Status, r.Steps[i].Error = StepFailed, ErrCancelled.Error()
			return rn.Store.Save(save, r, i)
		}
		rn.record(r, i, out)
		switch out.Status {
		case OutcomeOK:
			r.Next++
		case OutcomeWaiting:
			r.State = StateWaiting
		case OutcomeStopped:
			r.State, r.Error = StateStopped, "the emergency stop is engaged"
		default:
			if st.OnFailure == Continue {
				r.Next++
				break
			}
			r.State, r.Error = StateFailed, fmt.Sprintf("step %s failed: %s", st.ID, out.Error)
		}
		if r.Next == len(p.Steps) {
			r.State = StateDone
		}
		if err := rn.Store.Save(save, r, i); err != nil {
			return err
		}
		rn.notify(r, i)
		if r.State != StateRunning {
			return nil
		}
	}
	r.State = StateDone
	return nil
}

func (rn *Runner) notify(r *Run, i int) {
	if rn.OnStep != nil {
		rn.OnStep(r, i)
	}
}

// record puts a step's outcome into the run.
func (rn *Runner) record(r *Run, i int, out Outcome) {
	s := &r.Steps[i]
	s.ActionID, s.Error = out.ActionID, rn.redact(out.Error)
	s.Output = cutOutput(rn.redact(out.Output))
	switch out.Status {
	case OutcomeOK:
		s.Status = StepOK
	case OutcomeWaiting:
		s.Status = StepWaiting
	case OutcomeStopped:
		s.Status = StepStopped
	default:
		s.Status = StepFailed
	}
}

func (rn *Runner) redact(s string) string {
	if rn.Redact == nil {
		return s
	}
	return rn.Redact(s)
}

// step carries out step i.
func (rn *Runner) step(ctx context.Context, p *SOP, r *Run, i int) (Outcome, error) {
	st := p.Steps[i]
	switch st.Kind {
	case KindTool:
		args := make(map[string]any, len(st.Args))
		for k, v := range st.Args {
			args[k] = v
		}
		if from := st.From(); from != "" {
			delete(args, ContentFrom)
			args["content"] = outputOf(p, r, from)
		}
		return rn.Steps.Tool(ctx, r.ID, st.ID, st.Tool, args)
	case KindAgent:
		msg := st.Prompt
		if i > 0 && r.Steps[i-1].Output != "" {
			prev := r.Steps[i-1].Output
			prev = textesc.Prefix(prev, maxPrevious)
			msg += "\n\nOutput of step " + p.Steps[i-1].ID + ":\n" + prev
		}
		return rn.Steps.Agent(ctx, r.ID, st.ID, msg)
	case KindApproval:
		return rn.Steps.Approve(ctx, r.ID, st.ID, st.Prompt)
	}
	return Outcome{}, fmt.Errorf("unknown step kind %q", st.Kind)
}

// outputOf is the saved output of the step with the given id.
func outputOf(p *SOP, r *Run, id string) string {
	for j, st := range p.Steps {
		if st.ID == id {
			return r.Steps[j].Output
		}
	}
	return ""
}

// watchCancel cancels ctx when another process cancels the run.
func (rn *Runner) watchCancel(ctx context.Context, cancel context.CancelCauseFunc, id string) {
	poll := rn.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if state, err := rn.Store.State(ctx, id); err == nil && state == StateCancelled {
				cancel(ErrCancelled)
				return
			}
		}
	}
}
