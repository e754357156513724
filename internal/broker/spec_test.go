package broker

import (
	"os"
	"testing"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
)

// specFor builds the executor Spec the broker would run a for, with the
// decision the rig's gate makes.
func specFor(t *testing.T, r *rig, a gate.Action) (executor.Spec, error) {
	t.Helper()
	in := gate.BuildInput(a, gate.Context{Autonomy: "full", Workspace: r.ws, Cwd: r.ws, Home: r.b.cfg.Home, Channel: "test"})
	d, err := r.b.cfg.Gate.DecideInput(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return r.b.spec(a, in, d)
}

// run_as applies only when claw runs as root: the executor refuses to
// switch users for anyone else, so a non-root claw with the default
// run_as = "nobody" could run nothing.
func TestSpecRunAs(t *testing.T) {
	r := newRigWith(t, "full", nil, func(c *Config) { c.Sandbox.RunAs = "nobody" })
	real := ""
	if os.Geteuid() == 0 {
		real = "nobody"
	}
	for _, tc := range []struct {
		name    string
		euid    func() int
		runAs   string
		wantRun string
	}{
		{name: "root", euid: func() int { return 0 }, runAs: "nobody", wantRun: "nobody"},
		{name: "not root", euid: func() int { return 1000 }, runAs: "nobody", wantRun: ""},
		{name: "root without run_as", euid: func() int { return 0 }, runAs: "", wantRun: ""},
		{name: "this process", euid: os.Geteuid, runAs: "nobody", wantRun: real},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(f func() int) { geteuid = f }(geteuid)
			geteuid = tc.euid
			r.b.cfg.Sandbox.RunAs = tc.runAs
			for _, a := range []gate.Action{sh("ls"), {Tool: "file_read", Args: map[string]any{"path": "f.txt"}}} {
				s, err := specFor(t, r, a)
				if err != nil {
					t.Fatalf("%s: %v", a.Tool, err)
				}
				if s.RunAs != tc.wantRun {
					t.Errorf("%s: RunAs %q, want %q", a.Tool, s.RunAs, tc.wantRun)
				}
			}
		})
	}
}
