package hook

import (
	"strings"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
)

// A Call is one gate action derived from a hook event. Most tool calls
// map to one action; a Codex apply_patch maps to one per file it touches.
type Call struct {
	Action gate.Action
	// Unknown is set when the agent's tool has no claw equivalent. Such a
	// call is never allowed: the hook asks (denies at readonly autonomy).
	Unknown bool
}

// Map turns the agent's tool call into the claw actions the gate judges:
//
//	Bash{command}                     → shell{command}
//	Read{file_path}                   → file_read{path}
//	Write{file_path,content}          → file_write{path,content}
//	Edit{file_path,old_string,…}      → edit_file{path,old,new}
//	MultiEdit{file_path,edits}        → edit_file{path,old,new} (all edits joined)
//	NotebookEdit{notebook_path,…}     → file_write{path,content}
//	Glob{pattern,path}                → file_list{the pattern's fixed directory}
//	Grep{path} / LS{path}             → file_read / file_list {path, or cwd}
//	WebFetch{url}                     → http{url, GET}
//	WebSearch{query}                  → tool{server "web", name "search", args}
//	mcp__server__tool                 → tool{server, name, args}
//	apply_patch{command}              → file_write{path,content} per file
//
// Arguments are passed through with their JSON types: a missing or
// mistyped argument reaches the gate as such, and the gate denies it as
// invalid input. Relative paths are left relative; the gate resolves them
// against the event's cwd. Any other tool is an unknown call.
func Map(ev *Event) []Call {
	in := ev.ToolInput
	one := func(tool toolkind.Kind, args map[string]any) []Call {
		return []Call{{Action: gate.Action{Tool: tool, Args: args}}}
	}
	base := func() any {
		if p, ok := in["path"]; ok && p != nil {
			return p
		}
		if ev.Cwd != "" {
			return ev.Cwd
		}
		return "."
	}
	switch ev.ToolName {
	case "Bash":
		return one(toolkind.Shell, pick(in, "command", "command"))
	case "Read", "NotebookRead":
		key := "file_path"
		if ev.ToolName == "NotebookRead" {
			key = "notebook_path"
		}
		return one(toolkind.FileRead, pick(in, key, "path"))
	case "Write":
		return one(toolkind.FileWrite, pick(in, "file_path", "path", "content", "content"))
	case "Edit":
		return one(toolkind.EditFile, pick(in, "file_path", "path", "old_string", "old", "new_string", "new"))
	case "MultiEdit":
		args := pick(in, "file_path", "path")
		old, nw, ok := joinEdits(in["edits"])
		if ok {
			args["old"], args["new"] = old, nw
		} else {
			args["old"], args["new"] = in["edits"], in["edits"]
		}
		return one(toolkind.EditFile, args)
	case "NotebookEdit":
		args := pick(in, "notebook_path", "path", "new_source", "content")
		if _, ok := args["content"]; !ok {
			args["content"] = "" // a cell deletion still writes the notebook
		}
		return one(toolkind.FileWrite, args)
	case "Glob":
		return one(toolkind.FileList, map[string]any{"path": globDir(base(), in["pattern"])})
	case "Grep":
		return one(toolkind.FileRead, map[string]any{"path": base()})
	case "LS":
		return one(toolkind.FileList, map[string]any{"path": base()})
	case "WebFetch":
		return one(toolkind.HTTP, map[string]any{"url": in["url"], "method": "GET"})
	case "WebSearch":
		return one(toolkind.MCP, map[string]any{"server": "web", "name": "search", "args": in})
	case "apply_patch":
		return patchCalls(in["command"], in)
	}
	if server, name, ok := mcpName(ev.ToolName); ok {
		return one(toolkind.MCP, map[string]any{"server": server, "name": name, "args": in})
	}
	return []Call{{Unknown: true, Action: gate.Action{Tool: "unknown", Args: map[string]any{"name": ev.ToolName}}}}
}

// pick copies in[from] to out[to] for each (from, to) pair present in in.
func pick(in map[string]any, pairs ...string) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if v, ok := in[pairs[i]]; ok {
			out[pairs[i+1]] = v
		}
	}
	return out
}

// joinEdits joins MultiEdit's edits into one old and one new text, so
// that the gate sees everything the edit removes and adds.
func joinEdits(v any) (old, nw string, ok bool) {
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		return "", "", false
	}
	var o, n []string
	for _, e := range list {
		m, isMap := e.(map[string]any)
		if !isMap {
			return "", "", false
		}
		os, ok1 := m["old_string"].(string)
		ns, ok2 := m["new_string"].(string)
		if !ok1 || !ok2 {
			return "", "", false
		}
		o, n = append(o, os), append(n, ns)
	}
	return strings.Join(o, "\n"), strings.Join(n, "\n"), true
}

// globDir is the directory a Glob can reach: base joined with the part of
// the pattern before its first wildcard ("src/**/*.go" lists base/src; an
// absolute or "~" pattern ignores base). A ".." after a wildcard climbs
// back out ("src/*/../../x" reaches base), so each one adds a "/.." to the
// directory; a brace group that may start an absolute path reaches "/".
// ".." is kept, not cleaned: the gate resolves it after symlinks, as the
// kernel would.
func globDir(base, pattern any) any {
	b, ok := base.(string)
	if !ok {
		return base
	}
	p, ok := pattern.(string)
	if !ok {
		return b
	}
	if strings.Contains(p, "{/") || strings.Contains(p, ",/") || strings.Contains(p, "{~") || strings.Contains(p, ",~") {
		return "/"
	}
	segs := strings.Split(p, "/")
	n := 0
	for n < len(segs) && !strings.ContainsAny(segs[n], "*?[]{}\\") {
		n++
	}
	// The last segment without wildcards may be a file name; listing its
	// parent covers it either way.
	if n == len(segs) && n > 0 {
		n--
	}
	dir := strings.Join(segs[:n], "/")
	switch {
	case strings.HasPrefix(p, "/") && strings.Trim(dir, "/") == "":
		dir = "/"
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, "~"):
	case strings.Trim(dir, "/") == "":
		dir = b
	default:
		dir = strings.TrimSuffix(b, "/") + "/" + dir
	}
	if up := strings.Count(strings.Join(segs[n:], "/"), ".."); up > 0 {
		dir = strings.TrimSuffix(dir, "/") + strings.Repeat("/..", up)
	}
	return dir
}

// mcpName splits "mcp__server__tool".
func mcpName(s string) (server, name string, ok bool) {
	rest, found := strings.CutPrefix(s, "mcp__")
	if !found {
		return "", "", false
	}
	server, name, found = strings.Cut(rest, "__")
	if !found || server == "" || name == "" {
		return "", "", false
	}
	return server, name, true
}

// maxPatchFiles bounds the files one apply_patch may touch; a larger
// patch is one invalid action, which the gate denies.
const maxPatchFiles = 64

// patchCalls maps a Codex apply_patch to one file_write per file the patch
// adds, updates, deletes or moves to, with that file's part of the patch
// as the content. A patch that names no file is passed to the gate as a
// write with no path, which it denies.
func patchCalls(cmd any, in map[string]any) []Call {
	s, ok := cmd.(string)
	if !ok {
		if s, ok = in["input"].(string); !ok {
			return []Call{{Action: gate.Action{Tool: toolkind.FileWrite, Args: map[string]any{"path": cmd, "content": ""}}}}
		}
	}
	var (
		order []string
		parts = map[string]*strings.Builder{}
		cur   *strings.Builder
	)
	headers := []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimRight(line, "\r")
		for _, h := range headers {
			p, found := strings.CutPrefix(trimmed, h)
			if !found {
				continue
			}
			if parts[p] == nil {
				parts[p] = &strings.Builder{}
				order = append(order, p)
			}
			cur = parts[p]
		}
		if cur != nil {
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	switch {
	case len(order) == 0:
		return []Call{{Action: gate.Action{Tool: toolkind.FileWrite, Args: map[string]any{"content": s}}}}
	case len(order) > maxPatchFiles:
		return []Call{{Action: gate.Action{Tool: toolkind.FileWrite, Args: map[string]any{"content": s, "files": len(order)}}}}
	}
	calls := make([]Call, 0, len(order))
	for _, p := range order {
		calls = append(calls, Call{Action: gate.Action{Tool: toolkind.FileWrite, Args: map[string]any{"path": p, "content": parts[p].String()}}})
	}
	return calls
}
