// Command fakeagent stands in for Claude Code in print mode
// (claude -p --output-format json): it takes --settings FILE,
// --max-turns N and the task as its last argument. The task is a JSON
// list of tool calls ({"tool":"Write","input":{...}}); before each, it
// runs the PreToolUse hook the settings install, with the event on
// standard input, as Claude Code documents: exit 2 blocks the call,
// exit 0 with hookSpecificOutput.permissionDecision "allow" lets it
// run, "deny" (and "ask": print mode cannot ask) does not. It then does
// what an allowed call asks (Write, Read, Bash) and prints one JSON
// result object. A Bash command has its $VARIABLES expanded from the
// agent's environment first, as a model that read them would write them.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

type call struct {
	Tool  string         `json:"tool"`
	Input map[string]any `json:"input"`
}

func main() {
	var settings string
	turns := 100
	args := os.Args[1:]
	for len(args) > 1 {
		switch args[0] {
		case "--settings":
			settings, args = args[1], args[2:]
		case "--max-turns":
			turns, _ = strconv.Atoi(args[1])
			args = args[2:]
		default:
			args = args[1:]
		}
	}
	if len(args) != 1 || settings == "" {
		fail("usage: fakeagent --settings FILE [--max-turns N] TASK")
	}
	hookCmd := hookCommand(settings)
	var calls []call
	if err := json.Unmarshal([]byte(args[0]), &calls); err != nil {
		fail("the task is not a JSON list of tool calls: " + err.Error())
	}
	cwd, _ := os.Getwd()
	var lines []string
	n := 0
	for _, c := range calls {
		if n == turns {
			lines = append(lines, "max turns reached")
			break
		}
		n++
		if cmd, ok := c.Input["command"].(string); ok && c.Tool == "Bash" {
			c.Input["command"] = os.ExpandEnv(cmd)
		}
		decision, why := askHook(hookCmd, cwd, c)
		if decision != "allow" {
			lines = append(lines, fmt.Sprintf("%s: %s (%s)", c.Tool, decision, why))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: allowed, %s", c.Tool, do(c)))
	}
	out, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false,
		"num_turns": n, "result": strings.Join(lines, "\n"), "session_id": "fake-session", "total_cost_usd": 0.01})
	fmt.Println(string(out))
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "fakeagent: "+msg)
	os.Exit(1)
}

// hookCommand is the command of the settings' PreToolUse hook.
func hookCommand(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err.Error())
	}
	var s struct {
		Hooks struct {
			PreToolUse []struct {
				Matcher string `json:"matcher"`
				Hooks   []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			} `json:"PreToolUse"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Hooks.PreToolUse) == 0 || len(s.Hooks.PreToolUse[0].Hooks) == 0 {
		fail("no PreToolUse hook in the settings")
	}
	return s.Hooks.PreToolUse[0].Hooks[0].Command
}

// askHook runs the hook for c and returns its decision and reason.
func askHook(cmd, cwd string, c call) (string, string) {
	ev, _ := json.Marshal(map[string]any{"session_id": "fake-session", "transcript_path": filepath.Join(cwd, ".t.jsonl"),
		"cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": c.Tool, "tool_input": c.Input})
	h := exec.Command("/bin/sh", "-c", cmd)
	h.Stdin = bytes.NewReader(ev)
	var stdout, stderr bytes.Buffer
	h.Stdout, h.Stderr = &stdout, &stderr
	err := h.Run()
	code := h.ProcessState.ExitCode()
	switch {
	case code == 2:
		return "blocked", strings.TrimSpace(stderr.String())
	case err != nil && code != 0:
		return "allow", "a failed hook does not block" // as Claude Code does
	}
	var o struct {
		H struct {
			D string `json:"permissionDecision"`
			R string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(stdout.Bytes(), &o) != nil || o.H.D == "" {
		return "allow", "no decision"
	}
	return o.H.D, o.H.R
}

// do runs an allowed call.
func do(c call) string {
	s := func(k string) string { v, _ := c.Input[k].(string); return v }
	switch c.Tool {
	case "Write":
		if err := os.WriteFile(s("file_path"), []byte(s("content")), 0o644); err != nil {
			return "failed: " + err.Error()
		}
		return "wrote " + s("file_path")
	case "Read":
		b, err := os.ReadFile(s("file_path"))
		if err != nil {
			return "failed: " + err.Error()
		}
		return "read " + strconv.Quote(string(b))
	case "Bash":
		out, err := exec.Command("/bin/sh", "-c", s("command")).CombinedOutput()
		if err != nil {
			return "failed: " + err.Error()
		}
		return "ran, output " + strconv.Quote(string(out))
	}
	return "nothing to do"
}
