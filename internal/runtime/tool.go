package runtime

import (
	"encoding/json"
	"fmt"

	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/toolkind"
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

// ToolEntry is a tool as claw tool list shows it.
type ToolEntry struct {
	Name        string   `json:"name"`
	Required    []string `json:"required"`
	Optional    []string `json:"optional"`
	Description string   `json:"description"`
	Risk        string   `json:"risk"`
	Runs        bool     `json:"runs"` // claw tool run carries it out
}

// ToolList lists the tools agents use, and the installed, unchanged
// plugin tools of the claw home, when one is given.
func ToolList(home string) []ToolEntry {
	var list []ToolEntry
	for _, k := range gate.KindNames() {
		spec := gate.Kinds[toolkind.Kind(k)]
		// The nominal risk; the gate computes each call's own.
		risk := "varies"
		if t, ok := tool.Lookup(k); ok {
			risk = t.Risk
		}
		list = append(list, ToolEntry{k, nonNil(spec.Required), nonNil(spec.Optional), toolDocs[k], risk, Runnable(k)})
	}
	if home != "" {
		names, descs := PluginTools(PluginStore(home))
		for i, n := range names {
			list = append(list, ToolEntry{n, []string{}, []string{"args"}, descs[i] + " (claw tool run plugin)", "varies", true})
		}
	}
	return list
}

// ToolAction is the action of claw tool run NAME with the arguments
// argsJSON (a JSON object; empty means none).
func ToolAction(name, argsJSON string) (gate.Action, error) {
	if argsJSON == "" {
		argsJSON = "{}"
	}
	quoted, _ := json.Marshal(name)
	a, err := gate.ParseAction([]byte(`{"tool":` + string(quoted) + `,"args":` + argsJSON + `}`))
	if err != nil {
		return a, WithCode(ExitUsage, fmt.Errorf("--args: %w", err))
	}
	if _, known := gate.Kinds[toolkind.Kind(name)]; known && !Runnable(name) {
		return a, Usagef("%s is carried out by the agent runtime, not by claw tool run", name)
	}
	return a, nil
}

// ToolResult is what claw tool run prints for the outcome of a tool
// call: its status, sandbox, error and result; nil when the outcome is
// shown as any action's (a shell command, or a tool that did not run).
func ToolResult(name string, out *broker.Outcome) map[string]any {
	switch {
	case out == nil || out.Result == nil || name == "shell":
		return nil
	case out.Status == broker.StatusError, out.Status == broker.StatusSetupFailed,
		out.Status == broker.StatusUnavailable, out.Status == broker.StatusNotFound:
		return nil
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
	return result
}
