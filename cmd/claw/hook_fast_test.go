package main

import (
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

// hookCall is what a hook command line sets, read by the fast path or by
// cobra.
type hookCall struct {
	format, workspace, passphrase, home, config string
	trusted                                     []string
	deadline                                    time.Duration
}

func fastParse(args []string) (hookCall, bool) {
	h, home, cfg, ok := parseFastHook(args)
	if !ok {
		return hookCall{}, false
	}
	return hookCall{string(h.Format), h.Workspace, h.PassphraseFile, home, cfg, slices.Sorted(maps.Keys(h.Trusted)), h.Deadline}, true
}

// cobraParse runs args through claw's command tree, with the hook's run
// replaced by what it does before it runs: read its flags, and check and
// complete them (setHookFlags).
func cobraParse(args []string) (hookCall, error) {
	g := &globals{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	root := newRootCommand(g)
	var got hookCall
	for _, c := range root.Commands() {
		if c.Name() != "hook" {
			continue
		}
		for _, agent := range c.Commands() {
			agent.RunE = func(c *cobra.Command, _ []string) error {
				h := &runtime.Hook{Format: runtime.HookFormat(c.Name())}
				h.Workspace, _ = c.Flags().GetString("workspace")
				h.PassphraseFile, _ = c.Flags().GetString("passphrase-file")
				h.Deadline, _ = c.Flags().GetDuration("deadline")
				trust, _ := c.Flags().GetStringSlice("trust-tool")
				if err := setHookFlags(h, trust); err != nil {
					return err
				}
				got = hookCall{string(h.Format), h.Workspace, h.PassphraseFile, g.home, g.config, slices.Sorted(maps.Keys(h.Trusted)), h.Deadline}
				return nil
			}
		}
	}
	root.SetArgs(args)
	err := root.Execute()
	return got, err
}

// The fast path takes exactly the hook command lines it claims, and reads
// them as cobra does; everything else goes to the command.
func TestParseFastHook(t *testing.T) {
	for _, args := range [][]string{
		{"hook", "claude-code"},
		{"hook", "codex"},
		{"hook", "claude-code", "--workspace", "/w s"},
		{"hook", "claude-code", "--workspace=/w=x", "--trust-tool", "TodoWrite", "--trust-tool=ExitPlanMode", "--trust-tool", "TodoWrite"},
		{"hook", "codex", "--deadline", "2s", "--passphrase-file", "/p", "--home", "~/h", "--config=/c.toml"},
		{"hook", "claude-code", "--deadline=0s"},
		{"hook", "claude-code", "--workspace", "--trust-tool"},
		{"hook", "claude-code", "--workspace="},
	} {
		fast, ok := fastParse(args)
		if !ok {
			t.Errorf("%q: not taken by the fast path", args)
			continue
		}
		slow, err := cobraParse(args)
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Errorf("%q: fast %+v, cobra %+v (%v)", args, fast, slow, err)
		}
	}
	for _, args := range [][]string{
		{},
		{"hook"},
		{"version"},
		{"--home", "/h", "hook", "claude-code"},
		{"hook", "gemini"},
		{"hook", "claude-code", "extra"},
		{"hook", "claude-code", "--no-daemon"},
		{"hook", "claude-code", "--no-daemon=false"},
		{"hook", "claude-code", "--help"},
		{"hook", "claude-code", "-h"},
		{"hook", "claude-code", "--"},
		{"hook", "claude-code", "--workspace"},
		{"hook", "claude-code", "--deadline", "soon"},
		{"hook", "claude-code", "--trust-tool", "mcp__x"},
		{"hook", "claude-code", "--trust-tool", "a,b"},
		{"hook", "claude-code", "--trust-tool", `"a"`},
		{"hook", "claude-code", "--trust-tool="},
		{"hook", "claude-code", "--trust-tool", " "},
		{"hook", "claude-code", "--worksp", "/w"},
		{"hook", "claude-code", "-workspace", "/w"},
	} {
		if fast, ok := fastParse(args); ok {
			t.Errorf("%q: taken by the fast path as %+v", args, fast)
		}
	}
}

// FuzzParseFastHook: any command line the fast path takes, cobra takes
// too, and reads the same.
func FuzzParseFastHook(f *testing.F) {
	f.Add("hook\x00claude-code\x00--workspace\x00/w\x00--trust-tool=TodoWrite")
	f.Add("hook\x00codex\x00--deadline\x00-1s\x00--home=\x00--config\x00--home")
	f.Add("hook\x00claude-code\x00--passphrase-file\x00--deadline=1h\x00--workspace=a=b")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		fast, ok := fastParse(args)
		if !ok {
			return
		}
		slow, err := cobraParse(args)
		if err != nil {
			t.Fatalf("%q: taken by the fast path as %+v, refused by cobra: %v", args, fast, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, cobra %+v", args, fast, slow)
		}
	})
}
