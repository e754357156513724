package grant

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/toolkind"
)

// Scope is what a grant covers; see [gate.GrantScope] for what each field
// matches.
type Scope = gate.GrantScope

// MaxScopeBytes bounds a scope in its text form.
const MaxScopeBytes = 4 << 10

// Format writes sc in the scope syntax that [Parse] reads: space-separated
// key=value terms in a fixed order,
//
//	tool=shell cmd=go:test args=any path=/home/u/ws autonomy=supervised
//
// with cmd, path, host and method repeated once per value. A value with a
// space, a quote or a non-printable character is written as a Go string.
func Format(sc Scope) string {
	var terms []string
	add := func(k, v string) {
		if v == "" {
			return
		}
		terms = append(terms, k+"="+quoteValue(v))
	}
	add("tool", string(sc.Tool))
	for _, c := range sc.Commands {
		v := c.Program
		if c.Subcommand != "" {
			v += ":" + c.Subcommand
		}
		add("cmd", v)
	}
	if sc.Tool == toolkind.Shell {
		add("args", argsOf(sc))
	}
	for _, p := range sc.Paths {
		add("path", p)
	}
	for _, h := range sc.Hosts {
		add("host", h)
	}
	for _, m := range sc.Methods {
		add("method", m)
	}
	add("autonomy", sc.Autonomy)
	add("conversation", sc.Conversation)
	return strings.Join(terms, " ")
}

func argsOf(sc Scope) string {
	if sc.Args == "" {
		return "any"
	}
	return sc.Args
}

func quoteValue(v string) string {
	if v != "" && strings.IndexFunc(v, func(r rune) bool {
		return unicode.IsSpace(r) || r == '"' || r == '\\' || !unicode.IsPrint(r)
	}) < 0 {
		return v
	}
	return strconv.Quote(v)
}

// Parse reads a scope written by [Format] (or by a person, in any order).
// It is strict: unknown keys, repeated single-valued keys, relative or
// unclean paths, a cmd without a program and a scope without a tool are
// errors.
func Parse(s string) (Scope, error) {
	var sc Scope
	if len(s) > MaxScopeBytes {
		return sc, fmt.Errorf("scope longer than %d bytes", MaxScopeBytes)
	}
	terms, err := splitTerms(s)
	if err != nil {
		return sc, err
	}
	for _, t := range terms {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return sc, fmt.Errorf("scope: %q is not key=value", t)
		}
		if strings.HasPrefix(v, `"`) {
			if v, err = strconv.Unquote(v); err != nil {
				return sc, fmt.Errorf("scope: %s: bad quoted value", k)
			}
		}
		if v == "" || !printable(v) {
			return sc, fmt.Errorf("scope: %s: empty or unprintable value", k)
		}
		switch k {
		case "tool":
			err = single(&sc.Tool, k, v)
		case "cmd":
			prog, sub, _ := strings.Cut(v, ":")
			if prog == "" || strings.Contains(sub, ":") || strings.Contains(v, ":") && sub == "" {
				return sc, fmt.Errorf("scope: cmd=%s: want PROGRAM or PROGRAM:SUBCOMMAND", v)
			}
			sc.Commands = append(sc.Commands, gate.GrantCommand{Program: prog, Subcommand: sub})
		case "args":
			if v != "any" && v != "none" {
				return sc, fmt.Errorf("scope: args=%s: want any or none", v)
			}
			err = single(&sc.Args, k, v)
		case "path":
			if !filepath.IsAbs(v) || filepath.Clean(v) != v {
				return sc, fmt.Errorf("scope: path=%s: want a clean absolute path", v)
			}
			sc.Paths = append(sc.Paths, v)
		case "host":
			if strings.ContainsAny(v, "/:@*") || strings.ToLower(v) != v {
				return sc, fmt.Errorf("scope: host=%s: want a lower-case host name without port or wildcard", v)
			}
			sc.Hosts = append(sc.Hosts, v)
		case "method":
			if strings.ToUpper(v) != v {
				return sc, fmt.Errorf("scope: method=%s: want an upper-case method", v)
			}
			sc.Methods = append(sc.Methods, v)
		case "autonomy":
			if v != "readonly" && v != "supervised" && v != "full" {
				return sc, fmt.Errorf("scope: autonomy=%s: want readonly, supervised or full", v)
			}
			err = single(&sc.Autonomy, k, v)
		case "conversation":
			err = single(&sc.Conversation, k, v)
		default:
			return sc, fmt.Errorf("scope: unknown key %q (want tool, cmd, args, path, host, method, autonomy, conversation)", k)
		}
		if err != nil {
			return sc, err
		}
	}
	if sc.Tool == "" {
		return sc, errors.New("scope: tool= is required")
	}
	if sc.Tool == toolkind.Shell && len(sc.Commands) == 0 {
		return sc, errors.New("scope: a shell scope needs at least one cmd=")
	}
	if sc.Tool != toolkind.Shell && (len(sc.Commands) > 0 || sc.Args != "") {
		return sc, errors.New("scope: cmd= and args= are for tool=shell")
	}
	if sc.Tool == toolkind.Shell && sc.Args == "" {
		sc.Args = "any"
	}
	return sc, nil
}

// splitTerms splits s at spaces outside double quotes.
func splitTerms(s string) ([]string, error) {
	var terms []string
	var cur strings.Builder
	inQuote, esc := false, false
	for _, r := range s {
		switch {
		case esc:
			esc = false
		case inQuote && r == '\\':
			esc = true
		case r == '"':
			inQuote = !inQuote
		case !inQuote && unicode.IsSpace(r):
			if cur.Len() > 0 {
				terms = append(terms, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if inQuote {
		return nil, errors.New("scope: unterminated quote")
	}
	if cur.Len() > 0 {
		terms = append(terms, cur.String())
	}
	return terms, nil
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

// Describe says in words what sc covers, for the person who is asked to
// accept it.
func Describe(sc Scope) string {
	var b strings.Builder
	switch sc.Tool {
	case toolkind.Shell:
		var cmds []string
		for _, c := range sc.Commands {
			cmds = append(cmds, strings.TrimSpace(c.Program+" "+c.Subcommand))
		}
		args := "with any arguments"
		if argsOf(sc) == "none" {
			args = "with no other arguments"
		}
		fmt.Fprintf(&b, "shell commands made only of %s, %s", quoteList(cmds), args)
	default:
		fmt.Fprintf(&b, "%s actions", sc.Tool)
	}
	if len(sc.Methods) > 0 {
		fmt.Fprintf(&b, ", method %s", strings.Join(sc.Methods, " or "))
	}
	if len(sc.Hosts) > 0 {
		fmt.Fprintf(&b, ", to host %s only", strings.Join(sc.Hosts, " or "))
	} else {
		b.WriteString(", reaching no network host")
	}
	if len(sc.Paths) > 0 {
		fmt.Fprintf(&b, ", touching only paths under %s", strings.Join(sc.Paths, " or "))
	} else {
		b.WriteString(", touching no path")
	}
	if sc.Autonomy != "" {
		fmt.Fprintf(&b, ", at %s autonomy", sc.Autonomy)
	}
	if sc.Conversation != "" {
		fmt.Fprintf(&b, ", in conversation %s only", sc.Conversation)
	}
	b.WriteString(", when the policy would ask (never a denial or a passphrase)")
	return b.String()
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = "`" + v + "`"
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// subcommandPrograms are programs whose first argument names what they do
// (a grant for `go test` must not cover `go run`).
var subcommandPrograms = []string{
	"apt", "bun", "cargo", "composer", "deno", "docker", "dotnet", "gem", "git", "go", "gradle",
	"helm", "kubectl", "mvn", "npm", "pip", "pip3", "pipenv", "pnpm", "poetry", "rustup", "uv", "yarn",
}

// Propose derives the narrowest useful scope for an action the gate
// decided on with input in: the tool; for shell, each program run (with
// its subcommand for programs that have them), any arguments; the paths
// under the workspace as the workspace (for shell, always the workspace),
// others each as itself; the
// http host and method; the autonomy. It returns false for an action no
// grant could cover (see [gate.GrantScope]).
func Propose(in *gate.Input) (Scope, bool) {
	sc := Scope{Tool: in.Action.Tool, Autonomy: in.Context.Autonomy}
	if len(in.Errors) > 0 {
		return sc, false
	}
	switch in.Kind {
	case toolkind.Shell:
		p := in.Parsed
		if p == nil || p.Dynamic || p.Error != "" || len(p.Commands) == 0 {
			return sc, false
		}
		for _, c := range p.Commands {
			if c.Dynamic || len(c.Marks) > 0 || c.Name == "" {
				return sc, false
			}
			gc := gate.GrantCommand{Program: c.Name}
			if slices.Contains(subcommandPrograms, c.Name) {
				// without its subcommand right after it (git -C dir
				// status), a grant would cover every subcommand
				if len(c.Argv) < 2 || strings.HasPrefix(c.Argv[1], "-") || c.Argv[1] == "" {
					return sc, false
				}
				gc.Subcommand = c.Argv[1]
			}
			if !slices.Contains(sc.Commands, gc) {
				sc.Commands = append(sc.Commands, gc)
			}
		}
		sc.Args = "any"
	case toolkind.HTTP:
		if in.URL == nil || in.URL.Host == "" || in.URL.Error != "" {
			return sc, false
		}
		sc.Hosts = []string{in.URL.Host}
		m, _ := in.Action.Args["method"].(string)
		if m == "" {
			m = "GET"
		}
		sc.Methods = []string{strings.ToUpper(m)}
	case "unknown":
		return sc, false
	}
	ws := in.Context.Workspace
	wsValid := ws != "" && ws != "/" && filepath.IsAbs(ws)
	if in.Kind == toolkind.Shell && wsValid {
		// a command's paths vary from one run to the next (git add -A,
		// git add a.go): the workspace covers them all
		sc.Paths = []string{ws}
	}
	for _, p := range append(append([]string(nil), in.Paths...), in.Writes...) {
		pre := p // outside the workspace: that path only
		if wsValid && (p == ws || strings.HasPrefix(p, ws+"/")) {
			pre = ws
		}
		if !slices.Contains(sc.Paths, pre) {
			sc.Paths = append(sc.Paths, pre)
		}
	}
	slices.Sort(sc.Paths)
	// a scope the syntax cannot say (an unprintable path, an IPv6 host)
	// is not offered: what is stored must read back as what was shown
	if back, err := Parse(Format(sc)); err != nil || Format(back) != Format(sc) {
		return sc, false
	}
	return sc, true
}

// single sets the single-valued key k of a scope to v, and fails when it
// was given already.
func single[T ~string](dst *T, k, v string) error {
	if *dst != "" {
		return fmt.Errorf("scope: %s given twice", k)
	}
	*dst = T(v)
	return nil
}
