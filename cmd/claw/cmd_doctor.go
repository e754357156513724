package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

func newDoctorCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Show what the kernel supports and what claw will enforce",
		Long: `Probe the kernel (Landlock ABI, seccomp, namespaces, a fresh /proc, cgroups)
by starting one sandboxed child, and print what every sandboxed action gets,
what is missing, and for each way out of the grants that Landlock alone may
not close (host unix sockets, TCP Fast Open, listening, leases, extended
attributes, inotify, metadata, the hostname) whether this kernel's sandbox
confines it and how.

Then run the other checks (configuration, keys, receipts, providers, the
service), each problem with its fix.

EXIT STATUS
  0 all good, 5 the sandbox is unavailable (claw refuses to run actions),
  1 another check failed.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runDoctor(g, asJSON) },
	}
	addOutputFlag(c, &asJSON)
	c.Flags().BoolVar(&doctorOffline, "offline", false, "skip the checks that reach the network (provider endpoints)")
	return c
}

// doctorCheck is one check of claw doctor beyond the sandbox probe. Groups
// of commands add theirs from an init function in their own file.
type doctorCheck struct {
	Name string
	Run  func(g *globals) doctorResult
}

// doctorResult is what a check found: OK, or a problem and how to fix it.
type doctorResult = runtime.DoctorResult

func runDoctor(g *globals, asJSON bool) error {
	s := runtime.ProbeSandbox(loadDoctorState(g).Cfg)
	s.Checks = make([]doctorResult, 0, len(doctorChecks))
	failed := 0
	for _, c := range doctorChecks {
		r := c.Run(g)
		r.Name = c.Name
		if !r.OK && !r.Skipped {
			failed++
		}
		s.Checks = append(s.Checks, r)
	}
	if asJSON {
		if jerr := json.NewEncoder(g.stdout).Encode(s); jerr != nil {
			return jerr
		}
	} else {
		yes := func(b bool) string {
			if b {
				return "yes"
			}
			return "no"
		}
		w := g.stdout
		fmt.Fprintf(w, "kernel            %s\n", s.Kernel)
		fmt.Fprintf(w, "landlock          ABI %d (errata %#x; claw requires %d)\n", s.LandlockABI, s.LandlockErrata, s.MinLandlockABI)
		fmt.Fprintf(w, "seccomp           %s\n", yes(s.Seccomp))
		fmt.Fprintf(w, "user namespace    %s\n", yes(s.UserNS))
		fmt.Fprintf(w, "pid namespace     %s\n", yes(s.PIDNS))
		fmt.Fprintf(w, "mount namespace   %s\n", yes(s.MountNS))
		fmt.Fprintf(w, "net namespace     %s\n", yes(s.NetNS))
		fmt.Fprintf(w, "fresh /proc       %s\n", yes(s.FreshProc))
		cg := s.Cgroup
		if cg == "" {
			cg = "none usable"
		}
		fmt.Fprintf(w, "cgroups           %s\n", cg)
		fmt.Fprintf(w, "running as root   %s\n", yes(s.Root))
		helper := s.Helper
		if s.HelperIsSelf {
			helper += " (claw itself; install claw-sandbox next to claw for faster starts)"
		}
		fmt.Fprintf(w, "helper            %s\n", helper)
		fmt.Fprintln(w, "\nenforced on every action:")
		for _, e := range s.Enforced {
			fmt.Fprintf(w, "  - %s\n", e)
		}
		if len(s.Missing) > 0 {
			fmt.Fprintln(w, "\nnot available:")
			for _, m := range s.Missing {
				fmt.Fprintf(w, "  - %s\n", m)
			}
		}
		if len(s.Edges) > 0 {
			fmt.Fprintln(w, "\nedges of the grants, on this kernel:")
			for _, e := range s.Edges {
				mark := "confined"
				if !e.Confined {
					mark = "OPEN"
				}
				fmt.Fprintf(w, "  %-8s %s: %s\n", mark, e.Name, e.By)
			}
		}
		status := "sandbox: available"
		if s.Unavailable != "" {
			status = "sandbox: UNAVAILABLE: " + s.Unavailable
		}
		fmt.Fprintf(w, "\n%s\n", status)
		if len(s.Checks) > 0 {
			fmt.Fprintln(w, "\nchecks:")
		}
		for _, r := range s.Checks {
			mark := "ok  "
			switch {
			case r.Skipped:
				mark = "skip"
			case !r.OK:
				mark = "FAIL"
			}
			fmt.Fprintf(w, "  %s %-20s %s\n", mark, r.Name, sanitize(r.Detail))
			if !r.OK && !r.Skipped && r.Fix != "" {
				fmt.Fprintf(w, "       fix: %s\n", sanitize(r.Fix))
			}
		}
	}
	if s.Unavailable != "" {
		return withCode(exitSandbox, nil)
	}
	if failed > 0 {
		return withCode(exitError, fmt.Errorf("%d doctor check(s) failed", failed))
	}
	return nil
}
