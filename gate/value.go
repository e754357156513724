package gate

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/clawsec/claw/gate/shell"
)

// inputValue converts the input to an OPA value directly, which is several
// times cheaper than a JSON round trip. TestInputValueMatchesJSON keeps it
// in step with the JSON tags.
func inputValue(in *Input) (ast.Value, error) {
	args, err := ast.InterfaceToValue(in.Action.Args)
	if err != nil {
		return nil, fmt.Errorf("action args: %w", err)
	}
	var parsed *ast.Term = ast.NullTerm()
	if in.Parsed != nil {
		parsed = analysisTerm(in.Parsed)
	}
	var u *ast.Term = ast.NullTerm()
	if in.URL != nil {
		u = obj(
			kv("raw", str(in.URL.Raw)),
			kv("scheme", str(in.URL.Scheme)),
			kv("host", str(in.URL.Host)),
			kv("port", ast.IntNumberTerm(in.URL.Port)),
			kv("userinfo", boolean(in.URL.Userinfo)),
			kv("ip", str(in.URL.IP)),
			kv("class", str(in.URL.Class)),
			kv("error", str(in.URL.Error)),
		)
	}
	var plug *ast.Term = ast.NullTerm()
	if p := in.Plugin; p != nil {
		plug = obj(kv("name", str(p.Name)), kv("tool", str(p.Tool)),
			kv("status", str(p.Status)), kv("detail", str(p.Detail)))
	}
	c := in.Context
	return ast.NewObject(
		kv("version", ast.IntNumberTerm(in.Version)),
		kv("action", obj(kv("tool", str(string(in.Action.Tool))), kv("args", ast.NewTerm(args)))),
		kv("kind", str(string(in.Kind))),
		kv("parsed", parsed),
		kv("paths", strs(in.Paths)),
		kv("writes", strs(in.Writes)),
		kv("destinations", destinationsTerm(in.Destinations)),
		kv("url", u),
		kv("errors", strs(in.Errors)),
		kv("plugin", plug),
		kv("context", obj(
			kv("autonomy", str(c.Autonomy)),
			kv("workspace", str(c.Workspace)),
			kv("cwd", str(c.Cwd)),
			kv("home", str(c.Home)),
			kv("channel", str(c.Channel)),
			kv("estop", boolean(c.Estop)),
			kv("conversation", str(c.Conversation)),
		)),
	), nil
}

func analysisTerm(a *shell.Analysis) *ast.Term {
	cmds := make([]*ast.Term, len(a.Commands))
	for i, c := range a.Commands {
		marks := make([]*ast.Term, len(c.Marks))
		for j, m := range c.Marks {
			marks[j] = obj(kv("kind", str(m.Kind)), kv("detail", str(m.Detail)))
		}
		cmds[i] = obj(
			kv("name", str(c.Name)),
			kv("argv", strs(c.Argv)),
			kv("opts", strs(c.Opts)),
			kv("operands", strs(c.Operands)),
			kv("paths", strs(c.Paths)),
			kv("writes", strs(c.Writes)),
			kv("assigns", strs(c.Assigns)),
			kv("depth", ast.IntNumberTerm(c.Depth)),
			kv("via", strs(c.Via)),
			kv("stdin", str(c.Stdin)),
			kv("dynamic", boolean(c.Dynamic)),
			kv("function", boolean(c.Function)),
			kv("marks", ast.ArrayTerm(marks...)),
			kv("dests", destsTerm(c.Dests)),
		)
	}
	reds := make([]*ast.Term, len(a.Redirects))
	for i, r := range a.Redirects {
		reds[i] = obj(kv("op", str(r.Op)), kv("target", str(r.Target)), kv("write", boolean(r.Write)))
	}
	return obj(
		kv("commands", ast.ArrayTerm(cmds...)),
		kv("redirects", ast.ArrayTerm(reds...)),
		kv("dynamic", boolean(a.Dynamic)),
		kv("dynamic_reasons", strs(a.DynamicReasons)),
		kv("fork_bomb", boolean(a.ForkBomb)),
		kv("network", strs(a.Network)),
		kv("error", str(a.Error)),
	)
}

func destsTerm(ds []shell.Dest) *ast.Term {
	t := make([]*ast.Term, len(ds))
	for i, d := range ds {
		t[i] = obj(
			kv("addr", str(d.Addr)),
			kv("port", ast.IntNumberTerm(d.Port)),
			kv("how", str(d.How)),
			kv("sends", boolean(d.Sends)),
			kv("dynamic", boolean(d.Dynamic)),
		)
	}
	return ast.ArrayTerm(t...)
}

func destinationsTerm(ds []Destination) *ast.Term {
	t := make([]*ast.Term, len(ds))
	for i, d := range ds {
		t[i] = obj(
			kv("command", str(d.Command)),
			kv("raw", str(d.Raw)),
			kv("scheme", str(d.Scheme)),
			kv("host", str(d.Host)),
			kv("port", ast.IntNumberTerm(d.Port)),
			kv("userinfo", boolean(d.Userinfo)),
			kv("class", str(d.Class)),
			kv("how", str(d.How)),
			kv("sends", boolean(d.Sends)),
			kv("known", boolean(d.Known)),
			kv("suffix", str(d.Suffix)),
			kv("error", str(d.Error)),
		)
	}
	return ast.ArrayTerm(t...)
}

// keyTerms are the input's object keys, made once and shared by every
// input (OPA does not change an input's terms): making each again took
// about a tenth of a decision's allocations outside OPA.
var keyTerms = func() map[string]*ast.Term {
	m := map[string]*ast.Term{}
	for _, k := range []string{
		"action", "addr", "args", "argv", "assigns", "autonomy", "channel", "class", "command",
		"commands", "context", "conversation", "cwd", "depth", "destinations", "dests", "detail",
		"dynamic", "dynamic_reasons", "error", "errors", "estop", "fork_bomb", "function", "home",
		"host", "how", "ip", "kind", "known", "marks", "name", "network", "op", "operands", "opts",
		"parsed", "paths", "plugin", "port", "raw", "redirects", "scheme", "sends", "status", "stdin",
		"suffix", "target", "tool", "url", "userinfo", "version", "via", "workspace", "write",
		"writes",
	} {
		m[k] = ast.StringTerm(k)
	}
	return m
}()

// kv is one member of an input object; a key not in keyTerms is made
// here.
func kv(k string, v *ast.Term) [2]*ast.Term {
	if t, ok := keyTerms[k]; ok {
		return [2]*ast.Term{t, v}
	}
	return [2]*ast.Term{ast.StringTerm(k), v}
}

// str is a string of the input; the empty string, frequent there, is
// OPA's shared term.
func str(s string) *ast.Term {
	if s == "" {
		return ast.InternedEmptyString
	}
	return ast.StringTerm(s)
}

// boolean is a boolean of the input, one of OPA's two shared terms.
func boolean(b bool) *ast.Term { return ast.InternedTerm(b) }

func obj(items ...[2]*ast.Term) *ast.Term { return ast.NewTerm(ast.NewObject(items...)) }

func strs(s []string) *ast.Term {
	t := make([]*ast.Term, len(s))
	for i, v := range s {
		t[i] = str(v)
	}
	return ast.ArrayTerm(t...)
}

// firedRules lists, in order and once each, the rules with a metadata id
// whose body succeeded during one evaluation.
func firedRules(events []*topdown.Event) []string {
	var out []string
	seen := map[string]bool{}
	for _, ev := range events {
		if ev.Op != topdown.ExitOp {
			continue
		}
		r, ok := ev.Node.(*ast.Rule)
		if !ok {
			continue
		}
		id := ""
		for _, a := range r.Annotations {
			if v, ok := a.Custom["id"].(string); ok {
				id = v
			}
		}
		if id == "" {
			continue
		}
		loc := ""
		if r.Location != nil {
			loc = fmt.Sprintf("%s:%d", r.Location.File, r.Location.Row)
		}
		line := fmt.Sprintf("%s %s (%s)", r.Head.Name, id, loc)
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	return out
}
