package main

import (
	"bytes"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

const execLong = `Run one shell command through the whole path: the gate decides, the
decision receipt is written, a human approves when the policy asks (on a
terminal: "Approve? [y/N]"), the command runs in the sandbox the decision
allows, and the outcome receipt closes it.

The command is the exact string the gate analysed; several arguments are
joined with spaces, as ssh does. It runs through bash in the workspace.

EXIT STATUS
  the command's own status when it ran; 3 denied (or rejected), 6 needs
  approval and there is no terminal to ask, 5 sandbox unavailable, 126
  sandbox setup failed (nothing ran), 127 command not found, 1 error.`

func newExecCommand(g *globals) *cobra.Command {
	o := &actionOptions{}
	var asJSON bool
	c := &cobra.Command{
		Use:   "exec [flags] -- COMMAND…",
		Short: "Run one shell command through the gate, the sandbox and the receipts",
		Long:  execLong,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var path []string
			b, closeLog, err := openBroker(c.Context(), g, o, func(bc *runtime.BrokerConfig, _ *env) { path = bc.Sandbox.Path })
			if err != nil {
				return err
			}
			defer closeLog()
			a := runtime.Action{Tool: "shell", Args: map[string]any{"command": strings.Join(args, " ")}}
			out, err := b.Invoke(c.Context(), a, "")
			if out != nil && out.Result != nil && bytes.Contains(out.Result.Stderr, []byte(": command not found")) {
				defer infof(g.stderr, "hint: commands are looked up on the sandbox's PATH %s; [sandbox] path in the config sets it (README: How PATH is built)", strings.Join(path, ":"))
			}
			return outcomeExit(g, out, err, asJSON)
		},
	}
	o.addFlags(c.Flags())
	o.keys.addFlags(c)
	addOutputFlag(c, &asJSON)
	return c
}
