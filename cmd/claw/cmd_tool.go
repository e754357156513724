package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/runtime"
)

// toolDocs describe the tools an agent can call.
var toolDocs = map[string]string{
	"shell":         "run a command through bash in the workspace, sandboxed",
	"file_read":     "read a UTF-8 text file (size-capped)",
	"file_write":    "write a file atomically (temp file + rename)",
	"edit_file":     "replace one exact, unique occurrence of old with new",
	"file_list":     "list a directory recursively (depth and entry caps)",
	"http":          "GET (or POST) a URL on an allowed domain; SSRF-safe",
	"time":          "the current time",
	"memory_search": "search the conversation memory",
	"ask_user":      "ask the person a question and return the answer",
	"tool":          "call a tool of an MCP server",
	"plugin":        "call a tool of an installed plugin, sandboxed (JSON args on stdin)",
	"delegate":      "run a sub-agent turn on a sub-task, at most as trusted as the caller",
}

func newToolCommand(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "tool", Short: "List and run the tools agents use"}
	c.AddCommand(newToolListCommand(g), newToolRunCommand(g))
	return c
}

func newToolListCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the tools and their arguments",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			type row struct {
				Name        string   `json:"name"`
				Required    []string `json:"required"`
				Optional    []string `json:"optional"`
				Description string   `json:"description"`
				Risk        string   `json:"risk"`
				Runs        bool     `json:"runs"`
			}
			var rows []row
			for _, k := range gate.KindNames() {
				spec := gate.Kinds[k]
				// The nominal risk; the gate computes each call's own.
				risk := "varies"
				if t, ok := tool.Lookup(k); ok {
					risk = t.Risk
				}
				rows = append(rows, row{k, nonNil(spec.Required), nonNil(spec.Optional), toolDocs[k], risk, runtime.Runnable(k)})
			}
			if s, err := pluginStore(g); err == nil {
				names, descs := runtime.PluginTools(s)
				for i, n := range names {
					rows = append(rows, row{n, []string{}, []string{"args"}, descs[i] + " (claw tool run plugin)", "varies", true})
				}
			}
			if asJSON {
				return json.NewEncoder(g.stdout).Encode(rows)
			}
			for _, r := range rows {
				args := strings.Join(r.Required, " ")
				if len(r.Optional) > 0 {
					args += " [" + strings.Join(r.Optional, " ") + "]"
				}
				note := ""
				if !r.Runs {
					note = " (decided by the gate; runs in the agent)"
				}
				fmt.Fprintf(g.stdout, "%-14s %-7s %-28s %s%s\n", r.Name, r.Risk, args, r.Description, note)
			}
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

func newToolRunCommand(g *globals) *cobra.Command {
	o := &actionOptions{}
	var argsJSON string
	c := &cobra.Command{
		Use:         "run NAME --args JSON",
		Annotations: map[string]string{argValuesAnnotation: "tool"},
		Short:       "Run one tool call through the gate, the sandbox and the receipts",
		Long: `Run one tool call exactly as an agent's call would run: gate, receipts,
approval on a terminal, sandbox. The result is printed as JSON.

  claw tool run file_read --args '{"path":"README.md"}'

EXIT STATUS
  0 the tool succeeded, 1 it failed (the JSON says why), 3 denied, 6 needs
  approval and there is no terminal, 5 sandbox unavailable, 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if argsJSON == "" {
				argsJSON = "{}"
			}
			a, err := gate.ParseAction([]byte(`{"tool":` + mustJSON(name) + `,"args":` + argsJSON + `}`))
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("--args: %w", err))
			}
			if _, known := gate.Kinds[name]; known && !runtime.Runnable(name) {
				return usageErrorf("%s is carried out by the agent runtime, not by claw tool run", name)
			}
			b, closeLog, err := openBroker(c.Context(), g, o)
			if err != nil {
				return err
			}
			defer closeLog()
			out, err := b.Invoke(c.Context(), a, "")
			switch {
			case out == nil || out.Result == nil || name == "shell":
				return outcomeExit(g, out, err, true)
			case out.Status == broker.StatusError, out.Status == broker.StatusSetupFailed,
				out.Status == broker.StatusUnavailable, out.Status == broker.StatusNotFound:
				return outcomeExit(g, out, err, true)
			}
			res := out.Result
			result := map[string]any{"status": out.Status, "sandbox": res.Sandbox}
			if res.Tool != nil {
				if res.Tool.Error != "" {
					result["error"] = res.Tool.Error
				}
				if len(res.Tool.Payload) > 0 {
					result["result"] = json.RawMessage(res.Tool.Payload)
				}
			}
			enc := json.NewEncoder(g.stdout)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(result); err != nil {
				return err
			}
			if out.Status != broker.StatusOK {
				return silentExit(exitError)
			}
			return nil
		},
	}
	o.addFlags(c.Flags())
	o.keys.addFlags(c)
	c.Flags().StringVar(&argsJSON, "args", "", "the tool's arguments as a JSON object")
	addOldSpelling(c, &argsJSON, "json", "args")
	return c
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
