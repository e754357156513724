package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/sop"
	"github.com/clawsec/claw/internal/toolkind"
)

// Runnable reports whether claw tool run can execute the tool kind (the
// others are decided by the gate but carried out by the agent runtime).
func Runnable(kind string) bool {
	switch kind {
	case "shell", "file_read", "file_write", "edit_file", "file_list", "http", "plugin":
		return true
	}
	return false
}

// SOPTool reports whether a tool can be an SOP tool step's: the tools the
// broker itself carries out.
func SOPTool(name string) bool {
	return Runnable(name) || name == "time" || name == "memory_search"
}

// DecodeSOP decodes and validates the SOP file at path, which must be
// the SOP name's.
func DecodeSOP(data []byte, path, name string) (*sop.SOP, error) {
	p, err := sop.Decode(data, path, SOPTool)
	if err != nil {
		return nil, err
	}
	if p.Name != name {
		return nil, fmt.Errorf("%s: name %q is not its directory's %q", path, p.Name, name)
	}
	return p, nil
}

// SOPNames are the directories of dir that hold an SOP.toml, sorted.
func SOPNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "SOP.toml")); err == nil && e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// ErrNoSOPRuns means the memory database, which holds the runs, does not
// exist yet; it wraps fs.ErrNotExist.
var ErrNoSOPRuns = errors.New("no runs yet")

// OpenSOPStore opens the run store in the memory database at path.
func OpenSOPStore(path string) (*sop.Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSOPRuns, err)
	}
	return sop.OpenStore(path)
}

// SOPRunner is the runner of SOP runs through steps, stopped by the
// emergency stop file HOME/ESTOP, and reporting each step to onStep.
func SOPRunner(st *sop.Store, steps sop.Steps, home string, redact func(string) string, onStep func(*sop.Run, int)) *sop.Runner {
	estop := filepath.Join(home, "ESTOP")
	return &sop.Runner{
		Store:  st,
		Steps:  steps,
		Estop:  func() bool { _, err := os.Lstat(estop); return !errors.Is(err, fs.ErrNotExist) },
		Redact: redact,
		PID:    os.Getpid(),
		Alive:  processAlive,
		OnStep: onStep,
	}
}

// processAlive reports whether a process with that pid exists (signal 0;
// EPERM means it exists under another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// SOPSteps carries out the steps of SOP runs through the broker and the
// agent.
type SOPSteps struct {
	broker *broker.Broker
	agent  *agent.Agent
}

// NewSOPSteps carries out tool and approval steps through b, agent steps
// through a.
func NewSOPSteps(b *broker.Broker, a *agent.Agent) *SOPSteps { return &SOPSteps{broker: b, agent: a} }

func (s *SOPSteps) Tool(ctx context.Context, run, step, tool string, args map[string]any) (sop.Outcome, error) {
	out, err := s.broker.Invoke(broker.WithRunStep(ctx, run, step), gate.Action{Tool: toolkind.Kind(tool), Args: args}, "")
	return sopOutcome(out, err, func(res *sop.Outcome) {
		if r := out.Result; r != nil {
			res.Output = string(r.Stdout)
			if r.Tool != nil && r.Tool.Payload != nil {
				res.Output = string(r.Tool.Payload)
			}
		}
	})
}

func (s *SOPSteps) Approve(ctx context.Context, run, step, prompt string) (sop.Outcome, error) {
	a := gate.Action{Tool: "sop_approval", Args: map[string]any{"run": run, "step": step, "prompt": prompt}}
	why := gate.Reason{ID: "sop.approval_step", Severity: "medium", Msg: "an approval step of an SOP waits for a person: " + prompt}
	out, err := s.broker.Confirm(broker.WithRunStep(ctx, run, step), a, "", why)
	return sopOutcome(out, err, func(res *sop.Outcome) {
		if out.Approval != nil {
			res.Output = out.Approval.Result + " by " + out.Approval.By
		}
	})
}

func (s *SOPSteps) Agent(ctx context.Context, run, step, message string) (sop.Outcome, error) {
	res, err := s.agent.Turn(broker.WithRunStep(ctx, run, step), agent.TurnRequest{NewConversation: true, Message: message})
	if errors.Is(err, broker.ErrNoReceipt) {
		return sop.Outcome{}, err
	}
	if err != nil {
		return sop.Outcome{Status: sop.OutcomeFailed, Error: err.Error()}, nil
	}
	for _, tc := range res.ToolCalls {
		if tc.Status == broker.StatusEstop {
			return sop.Outcome{Status: sop.OutcomeStopped, Output: res.Reply, Error: "the emergency stop is engaged"}, nil
		}
	}
	return sop.Outcome{Status: sop.OutcomeOK, Output: res.Reply}, nil
}

// sopOutcome maps a broker outcome to a step's; ok fills in the output of
// a step that succeeded.
func sopOutcome(out *broker.Outcome, err error, ok func(*sop.Outcome)) (sop.Outcome, error) {
	if out == nil || out.Status == broker.StatusError {
		if err == nil {
			err = errors.New("the broker failed")
		}
		return sop.Outcome{}, err
	}
	res := sop.Outcome{ActionID: out.ActionID}
	switch out.Status {
	case broker.StatusOK:
		res.Status = sop.OutcomeOK
		ok(&res)
		return res, nil
	case broker.StatusNeedsApproval:
		res.Status = sop.OutcomeWaiting
	case broker.StatusEstop:
		res.Status = sop.OutcomeStopped
	default:
		res.Status = sop.OutcomeFailed
	}
	res.Error = out.Status
	if out.Err != nil {
		res.Error += ": " + out.Err.Error()
	} else if r := out.Result; r != nil && r.Tool != nil && r.Tool.Error != "" {
		res.Error += ": " + r.Tool.Error
	}
	return res, nil
}
