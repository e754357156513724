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
			kv("raw", ast.StringTerm(in.URL.Raw)),
			kv("scheme", ast.StringTerm(in.URL.Scheme)),
			kv("host", ast.StringTerm(in.URL.Host)),
			kv("port", ast.IntNumberTerm(in.URL.Port)),
			kv("userinfo", ast.BooleanTerm(in.URL.Userinfo)),
			kv("ip", ast.StringTerm(in.URL.IP)),
			kv("class", ast.StringTerm(in.URL.Class)),
			kv("error", ast.StringTerm(in.URL.Error)),
		)
	}
	var plug *ast.Term = ast.NullTerm()
	if p := in.Plugin; p != nil {
		plug = obj(kv("name", ast.StringTerm(p.Name)), kv("tool", ast.StringTerm(p.Tool)),
			kv("status", ast.StringTerm(p.Status)), kv("detail", ast.StringTerm(p.Detail)))
	}
	c := in.Context
	return ast.NewObject(
		kv("version", ast.IntNumberTerm(in.Version)),
		kv("action", obj(kv("tool", ast.StringTerm(string(in.Action.Tool))), kv("args", ast.NewTerm(args)))),
		kv("kind", ast.StringTerm(string(in.Kind))),
		kv("parsed", parsed),
		kv("paths", strs(in.Paths)),
		kv("writes", strs(in.Writes)),
		kv("destinations", destinationsTerm(in.Destinations)),
		kv("url", u),
		kv("errors", strs(in.Errors)),
		kv("plugin", plug),
		kv("context", obj(
			kv("autonomy", ast.StringTerm(c.Autonomy)),
			kv("workspace", ast.StringTerm(c.Workspace)),
			kv("cwd", ast.StringTerm(c.Cwd)),
			kv("home", ast.StringTerm(c.Home)),
			kv("channel", ast.StringTerm(c.Channel)),
			kv("estop", ast.BooleanTerm(c.Estop)),
			kv("conversation", ast.StringTerm(c.Conversation)),
		)),
	), nil
}

func analysisTerm(a *shell.Analysis) *ast.Term {
	cmds := make([]*ast.Term, len(a.Commands))
	for i, c := range a.Commands {
		marks := make([]*ast.Term, len(c.Marks))
		for j, m := range c.Marks {
			marks[j] = obj(kv("kind", ast.StringTerm(m.Kind)), kv("detail", ast.StringTerm(m.Detail)))
		}
		cmds[i] = obj(
			kv("name", ast.StringTerm(c.Name)),
			kv("argv", strs(c.Argv)),
			kv("opts", strs(c.Opts)),
			kv("operands", strs(c.Operands)),
			kv("paths", strs(c.Paths)),
			kv("writes", strs(c.Writes)),
			kv("assigns", strs(c.Assigns)),
			kv("depth", ast.IntNumberTerm(c.Depth)),
			kv("via", strs(c.Via)),
			kv("stdin", ast.StringTerm(c.Stdin)),
			kv("dynamic", ast.BooleanTerm(c.Dynamic)),
			kv("function", ast.BooleanTerm(c.Function)),
			kv("marks", ast.ArrayTerm(marks...)),
			kv("dests", destsTerm(c.Dests)),
		)
	}
	reds := make([]*ast.Term, len(a.Redirects))
	for i, r := range a.Redirects {
		reds[i] = obj(kv("op", ast.StringTerm(r.Op)), kv("target", ast.StringTerm(r.Target)), kv("write", ast.BooleanTerm(r.Write)))
	}
	return obj(
		kv("commands", ast.ArrayTerm(cmds...)),
		kv("redirects", ast.ArrayTerm(reds...)),
		kv("dynamic", ast.BooleanTerm(a.Dynamic)),
		kv("dynamic_reasons", strs(a.DynamicReasons)),
		kv("fork_bomb", ast.BooleanTerm(a.ForkBomb)),
		kv("network", strs(a.Network)),
		kv("error", ast.StringTerm(a.Error)),
	)
}

func destsTerm(ds []shell.Dest) *ast.Term {
	t := make([]*ast.Term, len(ds))
	for i, d := range ds {
		t[i] = obj(
			kv("addr", ast.StringTerm(d.Addr)),
			kv("port", ast.IntNumberTerm(d.Port)),
			kv("how", ast.StringTerm(d.How)),
			kv("sends", ast.BooleanTerm(d.Sends)),
			kv("dynamic", ast.BooleanTerm(d.Dynamic)),
		)
	}
	return ast.ArrayTerm(t...)
}

func destinationsTerm(ds []Destination) *ast.Term {
	t := make([]*ast.Term, len(ds))
	for i, d := range ds {
		t[i] = obj(
			kv("command", ast.StringTerm(d.Command)),
			kv("raw", ast.StringTerm(d.Raw)),
			kv("scheme", ast.StringTerm(d.Scheme)),
			kv("host", ast.StringTerm(d.Host)),
			kv("port", ast.IntNumberTerm(d.Port)),
			kv("userinfo", ast.BooleanTerm(d.Userinfo)),
			kv("class", ast.StringTerm(d.Class)),
			kv("how", ast.StringTerm(d.How)),
			kv("sends", ast.BooleanTerm(d.Sends)),
			kv("known", ast.BooleanTerm(d.Known)),
			kv("suffix", ast.StringTerm(d.Suffix)),
			kv("error", ast.StringTerm(d.Error)),
		)
	}
	return ast.ArrayTerm(t...)
}

func kv(k string, v *ast.Term) [2]*ast.Term { return [2]*ast.Term{ast.StringTerm(k), v} }

func obj(items ...[2]*ast.Term) *ast.Term { return ast.NewTerm(ast.NewObject(items...)) }

func strs(s []string) *ast.Term {
	t := make([]*ast.Term, len(s))
	for i, v := range s {
		t[i] = ast.StringTerm(v)
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
