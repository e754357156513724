package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawsec/claw/executor"
	"github.com/spf13/cobra"
)

func init() { registerCommand("doctor", newDoctorCommand) }

func newDoctorCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Show what the kernel supports and what claw will enforce",
		Long: `Probe the kernel (Landlock ABI, seccomp, namespaces, a fresh /proc, cgroups)
by starting one sandboxed child, and print what every sandboxed action gets
and what is missing.

EXIT STATUS
  0 the sandbox is available, 5 it is not (claw refuses to run actions).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runDoctor(g, asJSON) },
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}

func runDoctor(g *globals, asJSON bool) error {
	s := executor.Check()
	err := s.Require(0)
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
		fmt.Fprintf(w, "landlock          ABI %d (errata %#x; claw requires %d)\n", s.LandlockABI, s.LandlockErrata, executor.DefaultMinLandlockABI)
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
		status := "sandbox: available"
		if err != nil {
			status = "sandbox: UNAVAILABLE: " + strings.TrimPrefix(err.Error(), executor.ErrUnavailable.Error()+": ")
		}
		fmt.Fprintf(w, "\n%s\n", status)
	}
	if errors.Is(err, executor.ErrUnavailable) {
		return withCode(exitSandbox, nil)
	}
	return nil
}
