package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/sop"
	"github.com/clawsec/claw/internal/textesc"
)

// SOPDir is WORKSPACE/sops, of workspace or else of the config env
// loads.
func SOPDir(env func() (*Env, error), workspace string) (string, error) {
	if workspace == "" {
		e, err := env()
		if err != nil {
			return "", err
		}
		workspace = e.Config.WorkspaceDir
	}
	ws, err := CanonicalDir(workspace)
	if err != nil {
		return "", err
	}
	return filepath.Join(ws, "sops"), nil
}

// LoadSOP reads and validates dir/NAME/SOP.toml, returning the SOP and
// its source.
func LoadSOP(dir, name string) (*sop.SOP, []byte, error) {
	if !sop.ValidName(name) {
		return nil, nil, Usagef("%q is not an SOP name (lower-case letters, digits, - and _)", name)
	}
	path := filepath.Join(dir, name, "SOP.toml")
	data, err := ReadBounded(path, sop.MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, WithCode(ExitError, fmt.Errorf("%w: %s", sop.ErrNotFound, path), "see 'claw sop list'")
	}
	if err != nil {
		return nil, nil, WithCode(ExitError, err)
	}
	p, err := DecodeSOP(data, path, name)
	if err != nil {
		return nil, nil, err
	}
	return p, data, nil
}

// SOPEntry is an SOP as claw sop list shows it.
type SOPEntry struct {
	Name        string `json:"name"`
	Steps       int    `json:"steps"`
	Description string `json:"description"`
	Valid       bool   `json:"valid"`
}

// ListSOPs lists the SOPs of dir; one that does not validate is listed
// as invalid.
func ListSOPs(dir string) ([]SOPEntry, error) {
	names, err := SOPNames(dir)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	list := []SOPEntry{}
	for _, n := range names {
		p, _, err := LoadSOP(dir, n)
		if err != nil {
			list = append(list, SOPEntry{Name: n, Description: "invalid: see 'claw sop validate " + n + "'"})
			continue
		}
		list = append(list, SOPEntry{n, len(p.Steps), p.Description, true})
	}
	return list, nil
}

// SOPsToCheck are the SOPs of dir claw sop validate checks: names, or
// else every SOP of dir, of which there must be one.
func SOPsToCheck(dir string, names []string) ([]string, error) {
	if len(names) > 0 {
		return names, nil
	}
	names, err := SOPNames(dir)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	if len(names) == 0 {
		return nil, WithCode(ExitError, fmt.Errorf("no SOPs in %s", dir), "write one as "+filepath.Join(dir, "NAME", "SOP.toml"))
	}
	return names, nil
}

// CheckSOP validates dir/NAME/SOP.toml and returns its problems as lines
// to show, none when it is valid. A name that cannot be an SOP's is a
// usage error.
func CheckSOP(dir, name string) ([]string, error) {
	_, _, err := LoadSOP(dir, name)
	var errs *config.Errors
	var ce *Error
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &errs):
		lines := make([]string, 0, len(errs.List))
		for _, e := range errs.List {
			lines = append(lines, textesc.String(e.Error()))
		}
		return lines, nil
	case errors.As(err, &ce) && ce.Code == ExitUsage:
		return nil, err
	}
	return []string{"claw: " + textesc.String(err.Error())}, nil
}

// OpenSOPRuns opens the run store in the memory database of env's config.
func OpenSOPRuns(env func() (*Env, error)) (*sop.Store, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	return openSOPRuns(e)
}

// openSOPRuns opens the run store in the memory database of e's config.
func openSOPRuns(e *Env) (*sop.Store, error) {
	st, err := OpenSOPStore(e.Config.Agent.MemoryDB)
	if errors.Is(err, ErrNoSOPRuns) {
		return nil, WithCode(ExitError, err, "start one with 'claw sop run NAME'")
	}
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	return st, nil
}

// ClearSOPRuns deletes every run kept in the memory database of env's
// config (none when there is no database yet).
func ClearSOPRuns(ctx context.Context, env func() (*Env, error)) (int, error) {
	e, err := env()
	if err != nil {
		return 0, err
	}
	st, err := openSOPRuns(e)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer st.Close()
	n, err := st.Clear(ctx)
	if err != nil {
		return 0, WithCode(ExitError, err)
	}
	return n, nil
}

// RecentRuns are the n most recent runs of st, newest first.
func RecentRuns(ctx context.Context, st *sop.Store, n int) ([]*sop.Run, error) {
	runs, err := st.List(ctx, n)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	if runs == nil {
		runs = []*sop.Run{}
	}
	return runs, nil
}

// GetRun is the run id of st.
func GetRun(ctx context.Context, st *sop.Store, id string) (*sop.Run, error) {
	r, err := st.Get(ctx, id)
	if err != nil {
		return nil, WithCode(ExitError, err, "see 'claw sop status'")
	}
	return r, nil
}

// ResumeRun is the resumption of the run id, which must be resumable.
func ResumeRun(id string) SOPRun {
	return SOPRun{Open: func(ctx context.Context, st *sop.Store) (*sop.Run, error) {
		r, err := st.Get(ctx, id)
		if errors.Is(err, sop.ErrNoRun) {
			return nil, WithCode(ExitError, err, "see 'claw sop status'")
		}
		if err == nil && !r.Resumable() {
			return nil, WithCode(ExitError, fmt.Errorf("run %s is %s", r.ID, r.State))
		}
		return r, err
	}}
}

// CancelRun cancels the run id of st: it will not resume.
func CancelRun(ctx context.Context, st *sop.Store, id string) (*sop.Run, error) {
	r, err := GetRun(ctx, st, id)
	if err != nil {
		return nil, err
	}
	if !r.Resumable() {
		return nil, WithCode(ExitError, fmt.Errorf("run %s is already %s", r.ID, r.State))
	}
	if err := st.SetState(ctx, r.ID, sop.StateCancelled); err != nil {
		return nil, WithCode(ExitError, err)
	}
	return r, nil
}

// SOPApprover is the approver of an SOP run: the approvals queue of the
// claw serve at target, or else at the socket of env's config when a
// daemon answers there; else tty() (nil when nobody can be asked). daemon
// makes the client for a target; told hears the target when a daemon is
// the approver.
func SOPApprover(ctx context.Context, env func() (*Env, error), target string, daemon func(target string) (*approvals.Client, error), tty func() broker.Approver, told func(target string)) (broker.Approver, error) {
	cl, target, err := sopDaemon(ctx, env, target, daemon)
	if err != nil {
		return nil, err
	}
	if cl == nil {
		return tty(), nil
	}
	told(target)
	return cl, nil
}

// sopDaemon is the approvals queue of the claw serve an SOP run asks: at
// target, or else at the socket of env's config when a daemon answers
// there (nil, with no error, when none does).
func sopDaemon(ctx context.Context, env func() (*Env, error), target string, daemon func(target string) (*approvals.Client, error)) (*approvals.Client, string, error) {
	given := target != ""
	if !given {
		e, err := env()
		if err != nil {
			return nil, "", err
		}
		if fi, err := os.Stat(e.Config.Serve.Socket); err != nil || fi.Mode()&fs.ModeSocket == 0 {
			return nil, "", nil
		}
		target = "unix:" + e.Config.Serve.Socket
	}
	cl, err := daemon(target)
	if err != nil {
		return nil, "", err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cl.Pending(pctx); err != nil {
		if given {
			return nil, "", WithCode(ExitError, fmt.Errorf("the daemon at %s does not answer: %w", target, err), "start it with 'claw serve'")
		}
		return nil, "", nil // a socket left behind by a daemon that died
	}
	return cl, target, nil
}

// NewRun is a new run of the SOP dir/NAME/SOP.toml, which must be valid.
func NewRun(dir, name string) (SOPRun, error) {
	p, src, err := LoadSOP(dir, name)
	var errs *config.Errors
	if errors.As(err, &errs) {
		return SOPRun{}, WithCode(ExitError, err, "see 'claw sop validate "+name+"'")
	} else if err != nil {
		return SOPRun{}, err
	}
	return SOPRun{SOP: p, Open: func(ctx context.Context, st *sop.Store) (*sop.Run, error) { return st.Create(ctx, p, src) }}, nil
}

// SOPRun is a run to start or resume.
type SOPRun struct {
	SOP     *sop.SOP                                            // nil: the SOP the run started with
	Open    func(context.Context, *sop.Store) (*sop.Run, error) // creates or finds the run
	Started func(*sop.Run)                                      // told the run before its first step
	OnStep  func(*sop.Run, int)                                 // told each step's end
}

// RunSOP runs a run to its end or its next stop, through an agent
// runtime of s with approver. The run is returned when it ran; the error
// is then how it ended, with its exit code and hints.
func RunSOP(ctx context.Context, s Setup, approver broker.Approver, in SOPRun) (*sop.Run, error) {
	// The run tables are made before the memory store opens the file
	// when it exists: SQLite connections opened earlier may keep the
	// schema they saw (see claw memory clear).
	e, err := s.Env()
	if err != nil {
		return nil, err
	}
	st, err := openSOPRuns(e)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	rt, err := NewAgent(ctx, s, "sop", approver)
	if err != nil {
		if st != nil {
			st.Close()
		}
		return nil, err
	}
	defer rt.Close()
	if st == nil { // the first run: the memory store made the file
		if st, err = sop.OpenStore(rt.Memory.Path()); err != nil {
			return nil, WithCode(ExitError, err)
		}
	}
	defer st.Close()
	r, err := in.Open(ctx, st)
	if err != nil {
		return nil, err
	}
	p := in.SOP
	if p == nil { // a resumed run follows the SOP it started with
		if p, err = sop.Decode(r.Source, r.SOP+"/SOP.toml (as the run started)", SOPTool); err != nil {
			return nil, WithCode(ExitError, err)
		}
	}
	in.Started(r)
	rn := SOPRunner(st, NewSOPSteps(rt.Broker, rt.Agent), rt.Env.Home, rt.Redact, in.OnStep)
	if err := rn.Run(ctx, p, r); errors.Is(err, sop.ErrBusy) {
		return nil, WithCode(ExitError, fmt.Errorf("run %s: %w", r.ID, err), "wait for it, or cancel it with 'claw sop cancel "+r.ID+"'")
	} else if err != nil {
		return nil, WithCode(ExitError, err, "the run is saved: see 'claw sop status "+r.ID+"'")
	}
	return r, sopEnd(r)
}

// sopEnd maps the state a run stopped in to claw's exit codes and hints.
func sopEnd(r *sop.Run) error {
	switch r.State {
	case sop.StateDone:
		return nil
	case sop.StateWaiting:
		return WithCode(ExitNeedsHuman, fmt.Errorf("run %s waits for an approval and nobody could be asked", r.ID),
			"start 'claw serve' (or use a terminal) and run 'claw sop resume "+r.ID+"'")
	case sop.StateStopped:
		return WithCode(ExitDenied, fmt.Errorf("run %s: %s", r.ID, r.Error), "clear it with 'claw estop --clear', then 'claw sop resume "+r.ID+"'")
	case sop.StateCancelled:
		return WithCode(ExitError, fmt.Errorf("run %s was cancelled", r.ID))
	}
	return WithCode(ExitError, fmt.Errorf("run %s: %s", r.ID, textesc.String(r.Error)), "see 'claw sop status "+r.ID+"'; fix the cause and 'claw sop resume "+r.ID+"'")
}
