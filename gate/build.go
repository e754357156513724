package gate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawsec/claw/gate/shell"
	"github.com/clawsec/claw/internal/textesc"
	"github.com/clawsec/claw/internal/toolkind"
)

// Kinds lists the action kinds the gate knows, with the arguments each takes
// (required first). Any other tool is the kind toolkind.Unknown and is denied.
var Kinds = map[toolkind.Kind]struct{ Required, Optional []string }{
	toolkind.Shell:        {Required: []string{"command"}},
	toolkind.FileRead:     {Required: []string{"path"}},
	toolkind.FileWrite:    {Required: []string{"path", "content"}},
	toolkind.EditFile:     {Required: []string{"path", "old", "new"}},
	toolkind.FileList:     {Required: []string{"path"}},
	toolkind.HTTP:         {Required: []string{"url"}, Optional: []string{"method", "body", "headers"}},
	toolkind.Time:         {},
	toolkind.MemorySearch: {Required: []string{"query"}},
	toolkind.AskUser:      {Required: []string{"question"}},
	toolkind.YieldToUser:  {Optional: []string{"reason"}},
	toolkind.MCP:          {Required: []string{"server", "name"}, Optional: []string{"args"}},
	toolkind.Plugin:       {Required: []string{"plugin", "tool"}, Optional: []string{"args"}},
	toolkind.Delegate:     {Required: []string{"task"}, Optional: []string{"autonomy", "tools", "provider", "agent"}},
}

// KindNames returns the known kinds, sorted.
func KindNames() []string {
	out := make([]string, 0, len(Kinds))
	for k := range Kinds {
		out = append(out, string(k))
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
		in.Kind = toolkind.Unknown
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
	case toolkind.Shell:
		cmd, ok := in.str("command")
		if !ok {
			break
		}
		in.Parsed = shell.Analyze(cmd, shell.Options{Cwd: c.Cwd, Home: c.Home})
		in.canonShell(res)
		in.Destinations = destinations(in.Parsed)
	case toolkind.FileRead, toolkind.FileList:
		if p, ok := in.str("path"); ok {
			in.addPath(res, p, false)
		}
	case toolkind.FileWrite, toolkind.EditFile:
		if p, ok := in.str("path"); ok {
			in.addPath(res, p, true)
		}
		in.str("content")
		in.str("old")
		in.str("new")
	case toolkind.HTTP:
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
	case toolkind.MemorySearch:
		in.str("query")
	case toolkind.AskUser:
		in.str("question")
	case toolkind.YieldToUser:
		in.str("reason")
	case toolkind.Delegate:
		in.str("task")
		in.str("autonomy")
		in.str("tools")
		in.str("provider")
		in.str("agent")
	case toolkind.MCP, toolkind.Plugin:
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
	in.AddHosts(p.Name, "plugin", hosts)
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

// AddHosts adds hosts (host:port) that another program reaches for the
// action, a plugin or an external agent named who, to its destinations
// (how says which), judged like a shell command's. What that program sends
// is not known, so each counts as sending data: supervised asks, full
// allows, and a host off the allowlists is denied at any autonomy.
func (in *Input) AddHosts(who, how string, hosts []string) {
	for _, h := range hosts {
		in.Destinations = append(in.Destinations, canonDest(who, shell.Dest{Addr: h, How: how, Sends: true}))
	}
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

// truncate cuts s to n bytes and a mark.
func truncate(s string, n int) string { return textesc.Cut(s, n+len("…"), "…") }

// Summary is a one-line description of an action for receipts and
// approval prompts: the command, the tool and path, the method and URL, or
// the tool and its arguments. It is at most 512 bytes (cut on a rune
// boundary, marked with "…"); secrets are the caller's to redact.
func Summary(a Action) string {
	var s string
	switch a.Tool {
	case toolkind.Shell:
		s, _ = a.Args["command"].(string)
	case toolkind.FileRead, toolkind.FileList, toolkind.FileWrite, toolkind.EditFile:
		p, _ := a.Args["path"].(string)
		s = string(a.Tool) + " " + p
	case toolkind.HTTP:
		u, _ := a.Args["url"].(string)
		m, _ := a.Args["method"].(string)
		if m == "" {
			m = "GET"
		}
		s = strings.ToUpper(m) + " " + u
	default:
		b, _ := json.Marshal(a.Args)
		s = string(a.Tool) + " " + string(b)
	}
	return truncate(s, 512)
}
