package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

// sopOptions are the flags of the sop commands.
type sopOptions struct {
	actionOptions
	approvalsFrom string
	tokenFile     string
	asJSON        bool
}

func newSOPCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "sop",
		Short: "Run standard operating procedures: workflows of tool, agent and approval steps",
		Long: `An SOP is a file WORKSPACE/sops/NAME/SOP.toml: a name, a description and
[[steps]] of kind tool (a tool call through the gate, the sandbox and the
receipts), agent (one turn of claw's agent) or approval (a human says go
on). A run's state is saved in the memory database after every step, so a
run whose claw was killed resumes where it stopped ('claw sop resume RUN').
Every action of a run is receipted with the run and step ids.`,
	}
	c.AddCommand(newSOPListCommand(g), newSOPValidateCommand(g), newSOPRunCommand(g),
		newSOPStatusCommand(g), newSOPResumeCommand(g), newSOPCancelCommand(g))
	return c
}

func newSOPListCommand(g *globals) *cobra.Command {
	o := &sopOptions{}
	c := &cobra.Command{
		Use:   "list",
		Short: "List the SOPs of the workspace",
		Long: `List WORKSPACE/sops/*/SOP.toml: name, steps and description; an SOP that
does not validate is listed as invalid.

EXIT STATUS
  0 listed, 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := runtime.SOPDir(g.runtimeEnv, o.workspace)
			if err != nil {
				return err
			}
			rows, err := runtime.ListSOPs(dir)
			if err != nil {
				return err
			}
			if o.asJSON {
				return writeConfigJSON(g, map[string]any{"sops": rows})
			}
			if len(rows) == 0 {
				infof(g.stderr, "no SOPs in %s", dir)
			}
			for _, r := range rows {
				fmt.Fprintf(g.stdout, "%-20s %2d steps  %s\n", r.Name, r.Steps, sanitize(r.Description))
			}
			return nil
		},
	}
	c.Flags().StringVar(&o.workspace, "workspace", "", "workspace directory (default from config)")
	addOutputFlag(c, &o.asJSON)
	return c
}

func newSOPValidateCommand(g *globals) *cobra.Command {
	o := &sopOptions{}
	c := &cobra.Command{
		Use:   "validate [NAME...]",
		Short: "Check SOP files and report every problem in them",
		Long: `Check WORKSPACE/sops/NAME/SOP.toml (every SOP without NAME) strictly: syntax,
unknown keys, types, step kinds, unique step ids, known tools ('claw tool
list'), content_from naming an earlier step, on_failure abort or continue.
Every problem is reported at once, one per line, as FILE:LINE:COL: KEY:
MESSAGE.

  claw sop validate daily-check

EXIT STATUS
  0 valid, 1 invalid or missing, 2 usage.`,
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := runtime.SOPDir(g.runtimeEnv, o.workspace)
			if err != nil {
				return err
			}
			names, err := runtime.SOPsToCheck(dir, args)
			if err != nil {
				return err
			}
			bad := 0
			for _, n := range names {
				problems, err := runtime.CheckSOP(dir, n)
				if err != nil {
					return err
				}
				if len(problems) == 0 {
					fmt.Fprintf(g.stdout, "ok: %s\n", n)
					continue
				}
				for _, p := range problems {
					fmt.Fprintln(g.stderr, p)
				}
				bad++
			}
			if bad > 0 {
				return withCode(exitError, fmt.Errorf("%d of %d SOPs are invalid", bad, len(names)))
			}
			return nil
		},
	}
	c.Flags().StringVar(&o.workspace, "workspace", "", "workspace directory (default from config)")
	return c
}

const sopRunExit = `
EXIT STATUS
  0 the run finished, 1 a step failed (on_failure = "abort") or error,
  2 usage, 3 stopped by the emergency stop, 6 waiting at an approval that
  nobody could be asked for (no 'claw serve' and no terminal): approve it
  later with 'claw sop resume RUN'.`

func newSOPRunCommand(g *globals) *cobra.Command {
	o := &sopOptions{}
	c := &cobra.Command{
		Use:   "run NAME",
		Short: "Run an SOP",
		Long: `Run WORKSPACE/sops/NAME/SOP.toml step by step. Tool steps go through the gate,
the approvals, the sandbox and the receipts like any tool call; agent steps
run one turn of claw's agent; an approval step waits for a human: through
the approvals queue of a running 'claw serve' (its socket, or
--approvals-from), else on this terminal. The run id is printed first;
the run's state is saved after every step.

  claw sop run daily-check
` + sopRunExit,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := runtime.SOPDir(g.runtimeEnv, o.workspace)
			if err != nil {
				return err
			}
			in, err := runtime.NewRun(dir, args[0])
			if err != nil {
				return err
			}
			return runSOP(c.Context(), g, o, in)
		},
	}
	o.addRunFlags(c)
	return c
}

func newSOPResumeCommand(g *globals) *cobra.Command {
	o := &sopOptions{}
	c := &cobra.Command{
		Use:   "resume RUN",
		Short: "Resume a run where it stopped",
		Long: `Resume a run that waits at an approval, was stopped, failed, or whose claw
was killed: from the step it was on, with the SOP as it was when the run
started. A step whose process died while it ran runs again.

  claw sop resume RUN
` + sopRunExit,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runSOP(c.Context(), g, o, runtime.ResumeRun(args[0]))
		},
	}
	o.addRunFlags(c)
	return c
}

func (o *sopOptions) addRunFlags(c *cobra.Command) {
	o.actionOptions.addFlags(c.Flags())
	o.keys.addFlags(c)
	c.Flags().StringVar(&o.approvalsFrom, "approvals-from", "", "ask approvals through this running 'claw serve': unix:/path/claw.sock or http://127.0.0.1:PORT (default its socket, when it is running)")
	c.Flags().StringVar(&o.tokenFile, "token-file", "", "the daemon's bearer token file (default [serve].token_file)")
}

// runSOP runs the run in to its end or its next stop, printing its
// steps as they end.
func runSOP(ctx context.Context, g *globals, o *sopOptions, in runtime.SOPRun) error {
	approver, err := runtime.SOPApprover(ctx, g.runtimeEnv, o.approvalsFrom,
		func(target string) (*runtime.ApprovalsClient, error) {
			return daemonApprover(g, target, o.tokenFile, "sop")
		},
		func() runtime.Approver { return newTTYApprover(g) },
		func(target string) { infof(g.stderr, "approvals go to the daemon at %s", target) })
	if err != nil {
		return err
	}
	in.Started = func(r *runtime.SOPRunState) { fmt.Fprintf(g.stderr, "run %s of %s\n", r.ID, r.SOP) }
	in.OnStep = func(r *runtime.SOPRunState, i int) {
		s := r.Steps[i]
		fmt.Fprintf(g.stderr, "  step %d/%d %s: %s%s\n", i+1, len(r.Steps), s.ID, s.Status, sanitizeSuffix(s.Error))
	}
	r, err := runtime.RunSOP(ctx, agentSetup(g, &o.actionOptions), approver, in)
	if r != nil {
		fmt.Fprintf(g.stdout, "%s %s\n", r.ID, r.State)
	}
	return err
}

func sanitizeSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + sanitizeClip(s, 200) + ")"
}

func newSOPStatusCommand(g *globals) *cobra.Command {
	o := &sopOptions{}
	var quiet bool
	c := &cobra.Command{
		Use:   "status [RUN]",
		Short: "Show the recent runs, or one run step by step",
		Long: `Without RUN, list the 20 most recent runs, newest first: id, SOP, state,
the step it is at. With RUN, show each of its steps: status, action id and
error. -q prints only the ids of the listed runs.

EXIT STATUS
  0 shown, 1 error (no such run), 2 usage.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := runtime.OpenSOPRuns(g.runtimeEnv)
			if err != nil {
				return err
			}
			defer st.Close()
			if len(args) == 0 {
				runs, err := runtime.RecentRuns(c.Context(), st, 20)
				if err != nil {
					return err
				}
				if o.asJSON {
					return writeConfigJSON(g, map[string]any{"runs": runs})
				}
				for _, r := range runs {
					if quiet {
						fmt.Fprintln(g.stdout, r.ID)
						continue
					}
					fmt.Fprintf(g.stdout, "%s  %-16s %-9s step %d  %s\n", r.ID, r.SOP, r.State, r.Next+1, r.Updated.Local().Format(time.DateTime))
				}
				return nil
			}
			r, err := runtime.GetRun(c.Context(), st, args[0])
			if err != nil {
				return err
			}
			if o.asJSON {
				return writeConfigJSON(g, r)
			}
			fmt.Fprintf(g.stdout, "run %s of %s: %s%s\n", r.ID, r.SOP, r.State, sanitizeSuffix(r.Error))
			for i, s := range r.Steps {
				fmt.Fprintf(g.stdout, "  %d %-16s %-8s %s%s\n", i+1, s.ID, s.Status, s.ActionID, sanitizeSuffix(s.Error))
			}
			return nil
		},
	}
	addOutputFlag(c, &o.asJSON)
	c.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the run ids")
	return c
}

func newSOPCancelCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "cancel RUN",
		Short: "Cancel a run",
		Long: `Cancel a run: it will not resume. A claw running it stops before its next
step, and a wait for an approval ends.

EXIT STATUS
  0 cancelled, 1 error (no such run, or it already finished), 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			st, err := runtime.OpenSOPRuns(g.runtimeEnv)
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := runtime.CancelRun(c.Context(), st, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s %s\n", r.ID, runtime.SOPCancelled)
			return nil
		},
	}
	return c
}

// clearSOPRuns deletes every run kept in the memory database (none when
// there is no database yet).
func clearSOPRuns(ctx context.Context, g *globals) (int, error) {
	return runtime.ClearSOPRuns(ctx, g.runtimeEnv)
}
