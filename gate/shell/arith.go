package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Arithmetic evaluation in bash takes a variable's value as an expression
// and evaluates it in turn, and an array subscript in that expression has
// its command substitutions run: after x='a[$(id)]', each of $((x)),
// ((x)), let x, [[ $x -gt 0 ]], ${arr[x]} and ${s:x} runs id. So do
// unset, read, printf -v, [[ -v ]] and name references given such a
// subscript. Where the analysis cannot show that an evaluated value is a
// plain integer, it is dynamic.
//
// Values are tracked over the whole string, wherever they are assigned
// and in any order: a variable is a plain integer only if every
// assignment to it is a literal integer or an arithmetic result, and it
// is assigned at all (or is one bash sets to a number).

// arithUse is one value evaluated as arithmetic: the variable name, or
// why it is not static. arr is the array whose subscript it is in; an
// associative array's subscript is a string and evaluates nothing.
type arithUse struct {
	name string
	why  string
	arr  string
}

// varFacts is what the analysis knows of variable values.
type varFacts struct {
	ints    map[string]bool // assigned plain integers
	others  map[string]bool // assigned anything else
	intAttr map[string]bool // declare -i: assignments are evaluated
	assoc   map[string]bool // declare -A
	uses    []arithUse
	seen    map[arithUse]bool
	unknown bool // a sourced file may assign anything
}

// specialInts are the parameters bash sets to numbers.
var specialInts = set("RANDOM SRANDOM SECONDS EPOCHSECONDS LINENO BASHPID PPID UID EUID OPTIND # ? $ !")

func addTo(m *map[string]bool, name string) {
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[name] = true
}

func (v *varFacts) assign(name string, isInt bool) {
	if isInt {
		addTo(&v.ints, name)
	} else {
		addTo(&v.others, name)
	}
}

func (v *varFacts) use(u arithUse) {
	if v.seen[u] {
		return
	}
	if v.seen == nil {
		v.seen = map[arithUse]bool{}
	}
	v.seen[u] = true
	v.uses = append(v.uses, u)
}

func (v *varFacts) intSafe(name string) bool {
	return !v.unknown && !v.others[name] && (v.ints[name] || specialInts[name])
}

// finish reports the evaluations that are not static, in the order met.
func (v *varFacts) finish(a *analyzer) {
	for _, u := range v.uses {
		switch {
		case u.arr != "" && v.assoc[u.arr]:
		case u.name == "":
			a.dynamic(u.why)
		case !v.intSafe(u.name):
			a.dynamic("arithmetic on $" + u.name + ", which is not a plain integer")
		}
	}
	names := make([]string, 0, len(v.intAttr))
	for n := range v.intAttr {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if v.others[n] {
			a.dynamic("integer variable " + n + " assigned a value that is not a plain integer")
		}
	}
}

// assigned records an assignment (x=1, a[i]=v, a=(…), declare x=…).
func (a *analyzer) assigned(as *syntax.Assign, st *state) {
	if as.Name == nil || as.Naked {
		return
	}
	ok := true
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			ok = ok && intValue(el.Value)
		}
	} else {
		ok = intValue(as.Value)
	}
	a.vars.assign(as.Name.Value, ok)
}

// loopVar records the variable a for loop assigns.
func (a *analyzer) loopVar(l *syntax.WordIter, st *state) {
	ok := l.InPos.IsValid()
	for _, w := range l.Items {
		if !ok {
			break
		}
		if dynReason(w.Parts) != "" {
			ok = false
			break
		}
		for _, f := range a.word(nil, w, st) {
			ok = ok && isInt(f.val)
		}
	}
	a.vars.assign(l.Name.Value, ok)
	st.setsDangerous(l.Name.Value) // for PATH in …; select IFS in …
}

// setsDangerous records that a dangerous variable (PATH, IFS, …) was set
// by other means than an assignment word: it changes how every later
// command of this shell runs, exported or not.
func (st *state) setsDangerous(name string) {
	if dangerousEnv(name) && !slices.Contains(st.exports, name) {
		st.exports = append(st.exports, name)
	}
}

// intValue reports an assigned value that is a plain integer: a literal
// one, an arithmetic expansion, or empty (0).
func intValue(w *syntax.Word) bool {
	if w == nil {
		return true
	}
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	switch len(parts) {
	case 0:
		return true
	case 1:
	default:
		return false
	}
	switch p := parts[0].(type) {
	case *syntax.Lit:
		return isInt(p.Value)
	case *syntax.SglQuoted:
		return !p.Dollar && isInt(p.Value)
	case *syntax.ArithmExp:
		return true
	}
	return false
}

func isInt(s string) bool { return isDigits(strings.TrimPrefix(s, "-")) }

// arithNode checks the arithmetic contexts among the nodes that substs
// walks: arithmetic expansions and commands, let, C-style for, array
// subscripts, substring offsets, and the operands of [[ -eq … ]] and
// [[ -v ]].
func (a *analyzer) arithNode(n syntax.Node, st *state) {
	switch n := n.(type) {
	case *syntax.ArithmExp:
		a.arith(n.X, "", st)
	case *syntax.ArithmCmd:
		a.arith(n.X, "", st)
	case *syntax.LetClause:
		for _, e := range n.Exprs {
			a.arith(e, "", st)
		}
	case *syntax.CStyleLoop:
		a.arith(n.Init, "", st)
		a.arith(n.Cond, "", st)
		a.arith(n.Post, "", st)
	case *syntax.ParamExp:
		a.paramExp(n, st)
	case *syntax.Assign:
		if n.Name == nil {
			break
		}
		a.arith(n.Index, n.Name.Value, st)
		if n.Array != nil {
			for _, el := range n.Array.Elems {
				a.arith(el.Index, n.Name.Value, st)
			}
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range []syntax.TestExpr{n.X, n.Y} {
				if w, ok := x.(*syntax.Word); ok {
					a.arithWord(w, "", st)
				}
			}
		}
	case *syntax.UnaryTest:
		if w, ok := n.X.(*syntax.Word); ok && (n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar) {
			if dynReason(w.Parts) != "" {
				a.vars.use(arithUse{why: "variable name from expansion in [[ " + n.Op.String() + " ]]"})
				break
			}
			v, _ := a.literal(w, st)
			a.nameText(v, "[[ "+n.Op.String()+" ]]")
		}
	}
}

// paramExp checks a parameter expansion anywhere: its subscript and
// substring offsets are arithmetic, ${!x} takes a variable name from x's
// value (a subscript in it is evaluated), ${x@P} expands x's value as a
// prompt, running its command substitutions.
func (a *analyzer) paramExp(p *syntax.ParamExp, st *state) {
	if p.Param == nil {
		return
	}
	name := p.Param.Value
	if p.Excl && p.Names == 0 && !isAtStar(p.Index) {
		a.vars.use(arithUse{why: "indirect expansion ${!" + name + "}"})
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
		a.vars.use(arithUse{why: "prompt expansion ${" + name + "@P}"})
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) {
		// ${x:=V} outside arithmetic assigns x too
		a.vars.assign(name, intValue(p.Exp.Word))
	}
	if !isAtStar(p.Index) {
		a.arith(p.Index, name, st)
	}
	if p.Slice != nil {
		a.arith(p.Slice.Offset, "", st)
		a.arith(p.Slice.Length, "", st)
	}
}

func isAtStar(e syntax.ArithmExpr) bool {
	w, ok := e.(*syntax.Word)
	if !ok {
		return false
	}
	l := w.Lit()
	return l == "@" || l == "*"
}

// arith checks an arithmetic expression; arr is the array it subscripts.
// Nested parameter expansions are checked by the walk that called it.
func (a *analyzer) arith(e syntax.ArithmExpr, arr string, st *state) {
	switch e := e.(type) {
	case *syntax.BinaryArithm:
		if name := lvalue(e.X); name != "" && isAssignOp(e.Op) {
			a.vars.assign(name, true)
			st.setsDangerous(name)
			if e.Op == syntax.Assgn {
				a.arith(e.Y, arr, st)
				return
			}
		}
		a.arith(e.X, arr, st)
		a.arith(e.Y, arr, st)
	case *syntax.UnaryArithm:
		if name := lvalue(e.X); name != "" && (e.Op == syntax.Inc || e.Op == syntax.Dec) {
			a.vars.assign(name, true)
			st.setsDangerous(name)
		}
		a.arith(e.X, arr, st)
	case *syntax.ParenArithm:
		a.arith(e.X, arr, st)
	case *syntax.Word:
		a.arithWord(e, arr, st)
	}
}

// lvalue is the variable an arithmetic assignment sets: x or a[i].
func lvalue(e syntax.ArithmExpr) string {
	w, ok := e.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if isIdent(p.Value) {
			return p.Value
		}
	case *syntax.ParamExp:
		if p.Short && p.Param != nil && p.Index != nil && isIdent(p.Param.Value) {
			return p.Param.Value
		}
	}
	return ""
}

func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithWord checks one word evaluated as arithmetic.
func (a *analyzer) arithWord(w *syntax.Word, arr string, st *state) {
	for _, p := range w.Parts {
		a.arithPart(p, arr, st)
	}
}

func (a *analyzer) arithPart(p syntax.WordPart, arr string, st *state) {
	switch p := p.(type) {
	case *syntax.Lit:
		a.arithText(p.Value, arr)
	case *syntax.SglQuoted:
		a.arithText(p.Value, arr)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			a.arithPart(q, arr, st)
		}
	case *syntax.ParamExp:
		a.arithParam(p, arr, st)
	case *syntax.ArithmExp:
		// A number.
	case *syntax.CmdSubst, *syntax.ProcSubst:
		a.vars.use(arithUse{why: "command output evaluated as arithmetic", arr: arr})
	default:
		a.vars.use(arithUse{why: "expansion evaluated as arithmetic", arr: arr})
	}
}

// arithParam checks a parameter expansion whose value is evaluated.
func (a *analyzer) arithParam(p *syntax.ParamExp, arr string, st *state) {
	if p.Length {
		return // ${#x}: a number
	}
	if p.Param == nil || p.Excl || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.NestedParam != nil {
		a.vars.use(arithUse{why: "expansion evaluated as arithmetic", arr: arr})
		return
	}
	name := p.Param.Value
	if p.Exp != nil {
		switch p.Exp.Op {
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			a.arithExpWord(p.Exp.Word, arr, st)
			return
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			a.vars.assign(name, intValue(p.Exp.Word))
			a.arithExpWord(p.Exp.Word, arr, st)
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			a.arithExpWord(p.Exp.Word, arr, st)
		default:
			a.vars.use(arithUse{why: "expansion evaluated as arithmetic", arr: arr})
			return
		}
	}
	switch {
	case specialInts[name]:
	case !isIdent(name):
		a.vars.use(arithUse{why: "positional parameter $" + name + " evaluated as arithmetic", arr: arr})
	default:
		a.vars.use(arithUse{name: name, arr: arr})
	}
}

func (a *analyzer) arithExpWord(w *syntax.Word, arr string, st *state) {
	if w != nil {
		a.arithWord(w, arr, st)
	}
}

// arithText checks literal text evaluated as arithmetic: its names are
// variables whose values are evaluated in turn.
func (a *analyzer) arithText(s, arr string) {
	if hasSubscriptSubst(s) {
		a.vars.use(arithUse{why: "command substitution in an array subscript", arr: arr})
	}
	for _, n := range idents(s) {
		a.vars.use(arithUse{name: n, arr: arr})
	}
}

// nameText checks a variable name given as text (unset 'a[i]', [[ -v ]],
// printf -v): its subscript is arithmetic.
func (a *analyzer) nameText(s, what string) {
	if hasSubscriptSubst(s) {
		a.vars.use(arithUse{why: "command substitution in an array subscript given to " + what})
		return
	}
	if base, sub, ok := strings.Cut(s, "["); ok {
		a.arithText(strings.TrimSuffix(sub, "]"), base)
	}
}

// hasSubscriptSubst reports text with a command substitution after a [.
func hasSubscriptSubst(s string) bool {
	i := strings.IndexByte(s, '[')
	return i >= 0 && (strings.Contains(s[i:], "$(") || strings.ContainsRune(s[i:], '`'))
}

// idents lists the variable names in arithmetic text, skipping numbers
// (0x1f, 2#101, 10#09).
func idents(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			for i < len(s) && (isIdentByte(s[i]) || s[i] == '#' || s[i] == '@') {
				i++
			}
		case isIdentByte(c):
			j := i
			for i < len(s) && isIdentByte(s[i]) {
				i++
			}
			out = append(out, s[j:i])
		default:
			i++
		}
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdent(s string) bool {
	return s != "" && !(s[0] >= '0' && s[0] <= '9') && strings.IndexFunc(s, func(r rune) bool { return r > 0x7f || !isIdentByte(byte(r)) }) < 0
}

// declText checks a literal argument of declare and its kin ('a[i]',
// 'x=v', and a name reference's target).
func (a *analyzer) declText(s, variant string, nameref bool) {
	name, val, hasVal := strings.Cut(s, "=")
	if hasSubscriptSubst(name) || (nameref || strings.ContainsRune(name, '[')) && hasSubscriptSubst(val) {
		a.dynamic("command substitution in an array subscript given to " + variant)
		return
	}
	a.nameText(name, variant)
	if nameref && hasVal {
		a.nameText(val, variant)
	}
	if base, _, _ := strings.Cut(name, "["); hasVal && isIdent(base) {
		a.vars.assign(base, isInt(val))
	}
}

// declAttrs records the attributes declare gives: -i (assignments are
// evaluated), -A (subscripts are strings).
func (a *analyzer) declAttrs(names, opts []string) {
	for _, n := range names {
		switch {
		case slices.Contains(opts, "i"):
			addTo(&a.vars.intAttr, n)
		case slices.Contains(opts, "A"):
			addTo(&a.vars.assoc, n)
		}
	}
}

// builtinVars checks the builtins that take variable names or arithmetic
// in their arguments, and records the variables they assign.
func (a *analyzer) builtinVars(b *build) {
	args := b.args
	var names []field
	assigns := true
	switch b.name {
	case "source", ".":
		a.vars.unknown = true
		return
	case "let":
		for _, f := range args[1:] {
			if f.dyn {
				b.dynamic("expression from expansion in let")
				continue
			}
			a.arithText(f.val, "")
			// let PATH=0: any dangerous name in the expression may be
			// assigned (an over-approximation for one that is only read)
			for _, n := range idents(f.val) {
				b.st.setsDangerous(n)
			}
		}
		return
	case "unset":
		names, assigns = operandFields(args), false
	case "read", "mapfile", "readarray", "declare", "typeset", "local", "export", "readonly":
		names = operandFields(args)
	case "getopts":
		if len(args) > 2 {
			names = args[2:3]
		}
	case "printf":
		names = optValues(args, "-v")
	case "wait":
		names = optValues(args, "-p")
	case "test", "[":
		names, assigns = optValues(args, "-v", "-R"), false
	default:
		return
	}
	for _, f := range names {
		if f.dyn {
			b.dynamic("variable name from expansion in " + b.name)
			continue
		}
		if hasSubscriptSubst(f.val) {
			b.dynamic("command substitution in an array subscript given to " + b.name)
			continue
		}
		name, val, hasVal := strings.Cut(f.val, "=")
		a.nameText(name, b.name)
		if base, _, _ := strings.Cut(name, "["); assigns && isIdent(base) {
			a.vars.assign(base, hasVal && isInt(val))
		}
	}
}

// operandFields are the arguments after the name that are not options.
func operandFields(args []field) []field {
	var out []field
	for _, f := range args[1:] {
		if f.dyn || !strings.HasPrefix(f.val, "-") {
			out = append(out, f)
		}
	}
	return out
}

// optValues are the values of the named options (-v NAME or -vNAME).
func optValues(args []field, opts ...string) []field {
	var out []field
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			continue
		}
		for _, o := range opts {
			switch {
			case f.val == o && i+1 < len(args):
				out = append(out, args[i+1])
			case strings.HasPrefix(f.val, o) && len(f.val) > len(o):
				f.val = f.val[len(o):]
				out = append(out, f)
			}
		}
	}
	return out
}
