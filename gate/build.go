package gate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/gate/shell"
)

// Kinds lists the action kinds the gate knows, with the arguments each takes
// (required first). Any other tool is the kind "unknown" and is denied.
var Kinds = map[string]struct{ Required, Optional []string }{
	"shell":         {Required: []string{"command"}},
	"file_read":     {Required: []string{"path"}},
	"file_write":    {Required: []string{"path", "content"}},
	"edit_file":     {Required: []string{"path", "old", "new"}},
	"file_list":     {Required: []string{"path"}},
	"http":          {Required: []string{"url"}, Optional: []string{"method", "body", "headers"}},
	"time":          {},
	"memory_search": {Required: []string{"query"}},
	"ask_user":      {Required: []string{"question"}},
	"yield_to_user": {Optional: []string{"reason"}},
	"tool":          {Required: []string{"server", "name"}, Optional: []string{"args"}},
	"plugin":        {Required: []string{"plugin", "tool"}, Optional: []string{"args"}},
	"delegate":      {Required: []string{"task"}, Optional: []string{"autonomy", "tools", "provider", "agent"}},
}

// KindNames returns the known kinds, sorted.
func KindNames() []string {
	out := make([]string, 0, len(Kinds))
	for k := range Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// maxArgBytes bounds a single string argument the gate looks at.
const maxArgBytes = 1 << 20

// BuildInput turns a proposed action into the document the policies
// evaluate. It never fails: problems are recorded in Input.Errors, which
// the policies deny.
func BuildInput(a Action, c Context) *Input {
	in := &Input{Version: InputVersion, Action: a, Context: c, Paths: []string{}, Writes: []string{}, Errors: []string{}, Destinations: []Destination{}}
	if in.Action.Args == nil {
		in.Action.Args = map[string]any{}
	}
	spec, known := Kinds[a.Tool]
	if !known {
		in.Kind = "unknown"
		return in
	}
	in.Kind = a.Tool
	allowed := map[string]bool{}
	for _, k := range spec.Required {
		allowed[k] = true
		if _, ok := a.Args[k]; !ok {
			in.errorf("missing argument %q", k)
		}
	}
	for _, k := range spec.Optional {
		allowed[k] = true
	}
	for k := range a.Args {
		if !allowed[k] {
			in.errorf("unknown argument %q for %s", k, a.Tool)
		}
	}
	res := &PathResolver{Home: c.Home, Cwd: c.Cwd}
	switch in.Kind {
	case "shell":
		cmd, ok := in.str("command")
		if !ok {
			break
		}
		in.Parsed = shell.Analyze(cmd, shell.Options{Cwd: c.Cwd, Home: c.Home})
		in.canonShell(res)
		in.Destinations = destinations(in.Parsed)
	case "file_read", "file_list":
		if p, ok := in.str("path"); ok {
			in.addPath(res, p, false)
		}
	case "file_write", "edit_file":
		if p, ok := in.str("path"); ok {
			in.addPath(res, p, true)
		}
		in.str("content")
		in.str("old")
		in.str("new")
	case "http":
		if u, ok := in.str("url"); ok {
			in.URL = AnalyzeURL(u)
		}
		if m, ok := a.Args["method"]; ok {
			s, isStr := m.(string)
			if !isStr {
				in.errorf("argument \"method\" must be a string")
			} else {
				in.Action.Args = copyArgs(a.Args)
				in.Action.Args["method"] = strings.ToUpper(s)
			}
		}
	case "memory_search":
		in.str("query")
	case "ask_user":
		in.str("question")
	case "yield_to_user":
		in.str("reason")
	case "delegate":
		in.str("task")
		in.str("autonomy")
		in.str("tools")
		in.str("provider")
		in.str("agent")
	case "tool", "plugin":
		in.str("server")
		in.str("name")
		in.str("plugin")
		in.str("tool")
		if v, ok := a.Args["args"]; ok {
			if _, isObj := v.(map[string]any); !isObj && v != nil {
				in.errorf("argument \"args\" must be an object")
			}
		}
	}
	in.Paths = dedupe(in.Paths)
	in.Writes = dedupe(in.Writes)
	return in
}

// SetPlugin records what the broker found of the plugin a "plugin" action
// calls, and adds the reach its manifest declares to the paths the
// policies judge (read is read, write is read and written), canonical like
// every other path, and its hosts (host:port) to the destinations, judged
// like a shell command's (how "plugin"). A plugin's traffic is not known,
// so it counts as sending data: supervised asks, full allows.
func (in *Input) SetPlugin(p PluginInfo, read, write, hosts []string) {
	in.Plugin = &p
	for _, h := range hosts {
		in.Destinations = append(in.Destinations, canonDest(p.Name, shell.Dest{Addr: h, How: "plugin", Sends: true}))
	}
	res := &PathResolver{Home: in.Context.Home, Cwd: in.Context.Cwd}
	for _, r := range read {
		in.addPath(res, r, false)
	}
	for _, w := range write {
		in.addPath(res, w, true)
	}
	in.Paths = dedupe(in.Paths)
	in.Writes = dedupe(in.Writes)
}

func copyArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (in *Input) errorf(format string, args ...any) {
	in.Errors = append(in.Errors, fmt.Sprintf(format, args...))
}

// str returns the string argument k when present and well-formed.
func (in *Input) str(k string) (string, bool) {
	v, present := in.Action.Args[k]
	if !present {
		return "", false
	}
	s, ok := v.(string)
	switch {
	case !ok:
		in.errorf("argument %q must be a string", k)
		return "", false
	case len(s) > maxArgBytes:
		in.errorf("argument %q is longer than %d bytes", k, maxArgBytes)
		return "", false
	case !utf8.ValidString(s):
		in.errorf("argument %q is not valid UTF-8", k)
		return "", false
	}
	return s, true
}

func (in *Input) addPath(res *PathResolver, p string, write bool) {
	cp, err := res.Canonical(p)
	if err != nil {
		in.errorf("path %q: %v", truncate(p, 200), err)
		return
	}
	in.Paths = append(in.Paths, cp)
	if write {
		in.Writes = append(in.Writes, cp)
	}
}

// canonShell replaces the analyser's lexical paths with canonical ones.
func (in *Input) canonShell(res *PathResolver) {
	a := in.Parsed
	canon := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			if isPattern(p) {
				// A glob is judged by its directory (resolved) and
				// the pattern itself, kept as written.
				dir, pat := splitPattern(p)
				cd, err := res.Canonical(dir)
				if err != nil {
					in.errorf("path %q: %v", truncate(p, 200), err)
					continue
				}
				out = append(out, strings.TrimSuffix(cd, "/")+"/"+pat)
				continue
			}
			cp, err := res.Canonical(p)
			if err != nil {
				in.errorf("path %q: %v", truncate(p, 200), err)
				continue
			}
			out = append(out, cp)
		}
		return out
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		c.Paths = canon(c.Paths)
		c.Writes = canon(c.Writes)
		in.Paths = append(in.Paths, c.Paths...)
		in.Paths = append(in.Paths, c.Writes...)
		in.Writes = append(in.Writes, c.Writes...)
	}
	for i := range a.Redirects {
		r := &a.Redirects[i]
		if strings.HasPrefix(r.Target, "/") {
			if t := canon([]string{r.Target}); len(t) == 1 {
				r.Target = t[0]
				if r.Write {
					in.Writes = append(in.Writes, t[0])
				}
				in.Paths = append(in.Paths, t[0])
			}
		}
	}
}

func isPattern(p string) bool { return strings.ContainsAny(p, "*?[") }

// splitPattern splits at the last separator before the first glob
// character: "/ws/a/*.go" → "/ws/a", "*.go".
func splitPattern(p string) (dir, pat string) {
	i := strings.IndexAny(p, "*?[")
	j := strings.LastIndexByte(p[:i], '/')
	if j < 0 {
		return ".", p
	}
	if j == 0 {
		return "/", p[1:]
	}
	return p[:j], p[j+1:]
}

func dedupe(s []string) []string {
	if len(s) < 2 {
		return s
	}
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Summary is a one-line description of an action for receipts and
// approval prompts: the command, the tool and path, the method and URL, or
// the tool and its arguments. It is at most 512 bytes (cut on a rune
// boundary, marked with "…"); secrets are the caller's to redact.
func Summary(a Action) string {
	var s string
	switch a.Tool {
	case "shell":
		s, _ = a.Args["command"].(string)
	case "file_read", "file_list", "file_write", "edit_file":
		p, _ := a.Args["path"].(string)
		s = a.Tool + " " + p
	case "http":
		u, _ := a.Args["url"].(string)
		m, _ := a.Args["method"].(string)
		if m == "" {
			m = "GET"
		}
		s = strings.ToUpper(m) + " " + u
	default:
		b, _ := json.Marshal(a.Args)
		s = a.Tool + " " + string(b)
	}
	if len(s) > 512 {
		cut := 512
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
