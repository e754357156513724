// Command claw is a policy-first security gateway and sandboxed executor
// for LLM agents. See the README for the command reference.
package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/clawsec/claw/internal/runtime"
)

func main() { os.Exit(run(os.Args[1:])) }

// lazyRegexp returns a function that compiles expr on its first call, so
// that starting claw compiles no expression the command does not use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// fastHook answers `claw hook claude-code|codex` through a running claw
// serve before the command tree is built (an agent runs the hook once
// per tool call, and cobra's tree of every command costs more than the
// request), for the command lines parseFastHook understands. ok is false
// when it did not answer: the command then runs as usual, with g.stdin
// giving what was read and g.hookFallback saying so.
func fastHook(ctx context.Context, args []string, g *globals) (code int, ok bool) {
	h, home, cfg, ok := parseFastHook(args)
	if !ok {
		return 0, false
	}
	h.Stdin, h.Stdout, h.Stderr = g.stdin, g.stdout, g.stderr
	code, answered, retry := h.AskFirst(ctx, home, cfg)
	if answered {
		return code, true
	}
	g.stdin = h.Stdin
	g.hookFallback = &hookFallback{start: h.Start, retry: retry}
	return 0, false
}

// parseFastHook reads `hook claude-code|codex` followed only by --flag
// VALUE or --flag=VALUE of --workspace, --trust-tool (a plain tool name),
// --deadline, --passphrase-file, --home and --config, as cobra would
// parse them. Anything else (another flag, --help, an argument, a value
// cobra would refuse or read otherwise) is not ok: the command parses it.
func parseFastHook(args []string) (h *runtime.Hook, home, cfg string, ok bool) {
	if len(args) < 2 || args[0] != "hook" {
		return nil, "", "", false
	}
	h = &runtime.Hook{Format: runtime.HookFormat(args[1]), Trusted: map[string]bool{}, Deadline: runtime.HookDeadline}
	if h.Format != runtime.HookClaudeCode && h.Format != runtime.HookCodex {
		return nil, "", "", false
	}
	for rest := args[2:]; len(rest) > 0; {
		flag, isFlag := strings.CutPrefix(rest[0], "--")
		name, value, inline := strings.Cut(flag, "=")
		rest = rest[1:]
		if !inline {
			if len(rest) == 0 {
				return nil, "", "", false
			}
			value, rest = rest[0], rest[1:]
		}
		switch {
		case !isFlag:
			return nil, "", "", false
		case name == "workspace":
			h.Workspace = value
		case name == "passphrase-file":
			h.PassphraseFile = value
		case name == "home":
			home = value
		case name == "config":
			cfg = value
		case name == "deadline":
			d, err := time.ParseDuration(value)
			if err != nil {
				return nil, "", "", false
			}
			h.Deadline = d
		case name == "trust-tool" && plainToolName(value):
			h.Trusted[value] = true
		default:
			return nil, "", "", false
		}
	}
	if h.Deadline <= 0 {
		h.Deadline = runtime.HookDeadline
	}
	return h, home, cfg, true
}

// plainToolName reports whether a --trust-tool value is one name that
// cobra's comma-separated list reads as itself, and one the command
// accepts (not an MCP tool).
func plainToolName(v string) bool {
	if v == "" || strings.HasPrefix(v, "mcp__") {
		return false
	}
	for _, c := range []byte(v) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
