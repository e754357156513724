package shell

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Defaults for the zero values of [Options].
const (
	DefaultMaxBytes    = 64 << 10
	DefaultMaxDepth    = 8
	DefaultMaxCommands = 256
)

// Analysis.Error values for exceeded bounds.
const (
	ErrTooLong   = "command too long"
	ErrTooDeep   = "nesting too deep"
	ErrTooMany   = "too many commands"
	ErrNUL       = "command contains a NUL byte"
	errTooLarge  = "expansion too large"
	errParsePref = "parse error: "
)

// Analyze parses src as bash and returns every simple command it would run,
// with wrappers removed, words statically expanded and risk facts marked.
// It never executes anything and never touches the file system. It never
// returns nil; problems are reported in [Analysis.Error], and the same
// input always gives the same output.
func Analyze(src string, opts Options) (res *Analysis) {
	a := newAnalyzer(opts)
	p := parsers.Get().(*syntax.Parser)
	a.parser = p
	defer func() {
		if r := recover(); r != nil {
			// A bug must not let a command through: fail closed. The
			// parser is dropped in case it was left half-way.
			a.out = Analysis{Error: fmt.Sprintf("internal error: %v", r)}
		} else {
			parsers.Put(p)
		}
		res = a.result()
	}()
	switch {
	case len(src) > a.opts.MaxBytes:
		a.fail(ErrTooLong)
		return
	case strings.IndexByte(src, 0) >= 0:
		a.fail(ErrNUL)
		return
	}
	if hasInvisible(src) {
		// Text that displays differently from what runs (zero-width
		// characters, bidirectional overrides) is never taken at face value.
		a.dynamic("invisible or bidirectional control characters")
	}
	st := &state{cwd: a.opts.Cwd, sh: &shellEnv{}}
	a.parseAndWalk(src, st)
	return
}

// parsers holds bash parsers for reuse; a parser is used by one analysis
// at a time.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

type analyzer struct {
	opts   Options
	out    Analysis
	parser *syntax.Parser
	cfg    *expand.Config
	work   int // bytes parsed and expanded so far, bounded by budget
	budget int
	seen   map[string]bool // dynamic reasons already listed
}

func newAnalyzer(opts Options) *analyzer {
	loadTables()
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxCommands <= 0 {
		opts.MaxCommands = DefaultMaxCommands
	}
	if opts.Cwd != "" {
		opts.Cwd = resolve(opts.Cwd, "/")
	}
	if opts.Home != "" {
		opts.Home = resolve(opts.Home, "/")
	}
	a := &analyzer{
		out:    Analysis{Commands: make([]Command, 0, 8)},
		opts:   opts,
		budget: 16 * opts.MaxBytes,
	}
	a.cfg = newExpandConfig(a)
	return a
}

// result returns the analysis with every list non-nil, so that the JSON
// has [] rather than null.
func (a *analyzer) result() *Analysis {
	out := a.out
	if out.Error != "" {
		out.Commands = nil
	}
	out.Commands = nonNil(out.Commands)
	for i := range out.Commands {
		c := &out.Commands[i]
		c.Argv = nonNil(c.Argv)
		c.Opts = nonNil(c.Opts)
		c.Operands = nonNil(c.Operands)
		c.Paths = nonNil(c.Paths)
		c.Writes = nonNil(c.Writes)
		c.Assigns = nonNil(c.Assigns)
		c.Via = nonNil(c.Via)
		c.Marks = nonNil(c.Marks)
	}
	out.Redirects = nonNil(out.Redirects)
	out.DynamicReasons = nonNil(out.DynamicReasons)
	out.Network = nonNil(out.Network)
	return &out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// hasInvisible reports zero-width and bidirectional formatting characters.
func hasInvisible(s string) bool {
	for _, r := range s {
		switch {
		case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r == 0x00AD, r == 0x061C:
			return true
		}
	}
	return false
}

func (a *analyzer) fail(msg string) {
	if a.out.Error == "" {
		a.out.Error = msg
	}
}

func (a *analyzer) failed() bool { return a.out.Error != "" }

// charge accounts n bytes of work; false once the budget is spent.
func (a *analyzer) charge(n int) bool {
	a.work += n
	if a.work > a.budget {
		a.fail(errTooLarge)
		return false
	}
	return !a.failed()
}

func (a *analyzer) dynamic(reason string) {
	a.out.Dynamic = true
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	if !a.seen[reason] {
		a.seen[reason] = true
		a.out.DynamicReasons = append(a.out.DynamicReasons, reason)
	}
}

func (a *analyzer) network(target string) {
	if !slices.Contains(a.out.Network, target) {
		a.out.Network = append(a.out.Network, target)
	}
}

// shellEnv is what one shell process knows: the functions defined so far.
type shellEnv struct {
	funcs []string
}

func (e *shellEnv) hasFunc(name string) bool { return slices.Contains(e.funcs, name) }

// state is the context of the statements being walked. Sequential
// statements share one state (cd and export carry over); subshells,
// pipeline elements and conditional branches work on copies.
type state struct {
	src   string // text of the current parse, for source slices
	cwd   string // "" when unknown
	depth int
	via   []string
	priv  []string // privilege wrappers in effect
	sh    *shellEnv

	// stdin of the commands here: "", "pipe", "heredoc", "herestring" or
	// "file"; stdinPath is the file, body the here-document or
	// here-string, feeder the downloader or decoder feeding a pipe.
	stdin     string
	stdinPath string
	body      *hereDoc
	feeder    string
	pipeText  string // literal text piped in by echo, printf or cat

	exports []string // variables exported or dangerous ones assigned
	writes  []string // output redirections of enclosing compounds
	reads   []string // input redirections of enclosing compounds
	net     []string // /dev/tcp targets of enclosing redirections

	funcs []string // enclosing function definitions
	async bool     // in a pipeline or the background inside a function
}

func (st *state) fork() *state {
	ns := *st
	ns.via = slices.Clip(ns.via)
	ns.priv = slices.Clip(ns.priv)
	ns.exports = slices.Clip(ns.exports)
	ns.writes = slices.Clip(ns.writes)
	ns.reads = slices.Clip(ns.reads)
	ns.net = slices.Clip(ns.net)
	ns.funcs = slices.Clip(ns.funcs)
	return &ns
}

// merge folds a conditional branch back: a cd that may or may not have
// happened leaves the cwd unknown; exports are kept.
func (a *analyzer) merge(st, br *state) {
	if br.cwd != st.cwd {
		if st.cwd != "" || br.cwd != "" {
			a.dynamic("cwd unknown after cd")
		}
		st.cwd = ""
	}
	for _, e := range br.exports {
		if !slices.Contains(st.exports, e) {
			st.exports = append(st.exports, e)
		}
	}
	for _, f := range br.sh.funcs {
		if !st.sh.hasFunc(f) {
			st.sh.funcs = append(st.sh.funcs, f)
		}
	}
}

// parseAndWalk parses src and walks it in st.
func (a *analyzer) parseAndWalk(src string, st *state) {
	if !a.charge(len(src)) {
		return
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		a.fail(errParsePref + err.Error())
		return
	}
	st.src = src
	a.stmts(f.Stmts, st)
}

// nested parses src as a shell program run one level deeper. The returned
// state is the nested one, for callers (eval) whose cd carries over.
func (a *analyzer) nested(src string, st *state, via string, newShell bool) *state {
	ns := st.fork()
	ns.depth++
	ns.via = append(ns.via, via)
	ns.funcs = nil
	ns.async = false
	if newShell {
		ns.sh = &shellEnv{funcs: slices.Clone(st.sh.funcs)}
	}
	if ns.depth > a.opts.MaxDepth {
		a.fail(ErrTooDeep)
		return ns
	}
	a.parseAndWalk(src, ns)
	return ns
}

func (a *analyzer) stmts(list []*syntax.Stmt, st *state) {
	for _, s := range list {
		if a.failed() {
			return
		}
		a.stmt(s, st)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, st *state) {
	outer := st
	if len(s.Redirs) > 0 || s.Background || s.Coprocess {
		st = st.fork()
	}
	if s.Background || s.Coprocess {
		st.async = len(st.funcs) > 0
	}
	feed := len(a.out.Commands)
	a.redirs(s.Redirs, st)
	if a.failed() || s.Cmd == nil {
		return
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		a.call(c, st, feed)
	case *syntax.Block:
		a.stmts(c.Stmts, st)
	case *syntax.Subshell:
		a.stmts(c.Stmts, st.fork())
	case *syntax.BinaryCmd:
		a.binary(c, st)
	case *syntax.IfClause:
		a.ifClause(c, st)
	case *syntax.WhileClause:
		a.stmts(c.Cond, st)
		br := st.fork()
		a.stmts(c.Do, br)
		a.merge(st, br)
		if !c.Until && loopsForever(c.Cond) && hasBackground(c.Do) {
			a.out.ForkBomb = true
		}
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				a.substs(w, st)
			}
		case *syntax.CStyleLoop:
			a.substs(l, st)
		}
		br := st.fork()
		a.stmts(c.Do, br)
		a.merge(st, br)
	case *syntax.CaseClause:
		a.substs(c.Word, st)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.substs(p, st)
			}
			br := st.fork()
			a.stmts(it.Stmts, br)
			a.merge(st, br)
		}
	case *syntax.FuncDecl:
		a.funcDecl(c, st)
	case *syntax.ArithmCmd:
		a.substs(c, st)
	case *syntax.TestClause:
		a.substs(c, st)
	case *syntax.LetClause:
		a.substs(c, st)
	case *syntax.DeclClause:
		a.decl(c, st)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt, st)
		}
	case *syntax.CoprocClause:
		ns := st.fork()
		ns.async = len(ns.funcs) > 0
		a.stmt(c.Stmt, ns)
	case *syntax.TestDecl:
		a.substs(c.Description, st)
		a.stmt(c.Body, st.fork())
	default:
		a.substs(c, st)
	}
	if st != outer && !s.Background && !s.Coprocess {
		// cd and export inside a redirected compound still carry over.
		outer.cwd = st.cwd
		outer.exports = st.exports
	}
}

func (a *analyzer) binary(c *syntax.BinaryCmd, st *state) {
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		a.pipeline(flattenPipe(c), st)
	case syntax.AndStmt:
		a.stmt(c.X, st)
		a.stmt(c.Y, st)
	default: // OrStmt: the right side runs only if the left one failed
		a.stmt(c.X, st)
		br := st.fork()
		a.stmt(c.Y, br)
		a.merge(st, br)
	}
}

func flattenPipe(c *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	var rec func(s *syntax.Stmt)
	rec = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated && !s.Background {
			rec(b.X)
			rec(b.Y)
			return
		}
		out = append(out, s)
	}
	rec(c.X)
	rec(c.Y)
	return out
}

// pipeline walks the elements of a pipeline, each in its own subshell. A
// downloader or decoder in an element feeds every later one.
func (a *analyzer) pipeline(elems []*syntax.Stmt, st *state) {
	feeder, text := "", ""
	for i, e := range elems {
		ns := st.fork()
		ns.async = len(ns.funcs) > 0
		if i > 0 {
			ns.stdin, ns.stdinPath, ns.body, ns.feeder, ns.pipeText = "pipe", "", nil, feeder, text
		}
		start := len(a.out.Commands)
		a.stmt(e, ns)
		if feeder == "" {
			feeder = firstProducer(a.out.Commands[start:])
		}
		text = a.pipeText(e, ns)
	}
}

// pipeText is the text a pipeline element writes when it is known: echo or
// printf of literal words, cat of a literal here-document.
func (a *analyzer) pipeText(s *syntax.Stmt, st *state) string {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || a.failed() {
		return ""
	}
	switch c.Args[0].Lit() {
	case "echo", "printf", "cat", "/bin/echo", "/usr/bin/printf", "/bin/cat":
	default:
		return ""
	}
	for _, w := range c.Args {
		if dynReason(w.Parts) != "" {
			return ""
		}
	}
	fs := a.fields(c.Args, st)
	if len(fs) == 0 {
		return ""
	}
	vals := make([]string, len(fs))
	for i, f := range fs {
		vals[i] = f.val
	}
	switch progName(vals[0]) {
	case "echo":
		rest := vals[1:]
		for len(rest) > 0 && (rest[0] == "-n" || rest[0] == "-e" || rest[0] == "-E") {
			rest = rest[1:]
		}
		return strings.Join(rest, " ")
	case "printf":
		if len(vals) == 2 && !strings.Contains(vals[1], "%") {
			if t, _, err := expand.Format(a.cfg, vals[1], nil); err == nil {
				return t
			}
		}
	case "cat":
		if len(vals) != 1 {
			return ""
		}
		for _, r := range s.Redirs {
			tmp := &state{src: st.src, cwd: st.cwd}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				tmp.stdin, tmp.body = "heredoc", &hereDoc{word: r.Hdoc, raw: quotedDelim(r.Word), src: st.src}
			case syntax.WordHdoc:
				tmp.stdin, tmp.body = "herestring", &hereDoc{word: r.Word, herestring: true, src: st.src}
			default:
				continue
			}
			if t, ok := a.heredocText(tmp.body); ok {
				return t
			}
		}
	}
	return ""
}

func (a *analyzer) ifClause(c *syntax.IfClause, st *state) {
	a.stmts(c.Cond, st)
	br := st.fork()
	a.stmts(c.Then, br)
	a.merge(st, br)
	if c.Else != nil {
		br := st.fork()
		a.ifClause(c.Else, br)
		a.merge(st, br)
	}
}

func (a *analyzer) funcDecl(c *syntax.FuncDecl, st *state) {
	var names []string
	if c.Name != nil {
		names = append(names, c.Name.Value)
	}
	for _, n := range c.Names {
		names = append(names, n.Value)
	}
	for _, n := range names {
		if !st.sh.hasFunc(n) {
			st.sh.funcs = append(st.sh.funcs, n)
		}
	}
	ns := st.fork()
	ns.funcs = append(ns.funcs, names...)
	ns.async = false
	a.stmt(c.Body, ns)
}

// loopsForever reports a `while true` / `while :` condition.
func loopsForever(cond []*syntax.Stmt) bool {
	if len(cond) != 1 {
		return false
	}
	c, ok := cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 1 {
		return false
	}
	switch c.Args[0].Lit() {
	case "true", ":":
		return true
	}
	return false
}

func hasBackground(list []*syntax.Stmt) bool {
	for _, s := range list {
		if s.Background {
			return true
		}
	}
	return false
}

// substs walks the command and process substitutions anywhere inside n
// (expressions, words, assignments): they run before the command does.
func (a *analyzer) substs(n syntax.Node, st *state) {
	if n == nil || a.failed() {
		return
	}
	if w, ok := n.(*syntax.Word); ok && (w == nil || !mayHoldSubst(w.Parts)) {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if a.failed() {
			return false
		}
		switch n := n.(type) {
		case *syntax.CmdSubst:
			via := "$()"
			if n.Backquotes {
				via = "``"
			}
			a.sub(n.Stmts, st, via)
			return false
		case *syntax.ProcSubst:
			via := "<()"
			if n.Op == syntax.CmdOut {
				via = ">()"
			}
			a.sub(n.Stmts, st, via)
			return false
		}
		return true
	})
}

// mayHoldSubst is false for word parts that certainly hold no command or
// process substitution: plain text and quoted text.
func mayHoldSubst(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if mayHoldSubst(p.Parts) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// sub walks the statements of a substitution: a subshell one level deeper.
func (a *analyzer) sub(list []*syntax.Stmt, st *state, via string) {
	ns := st.fork()
	ns.depth++
	ns.via = append(ns.via, via)
	ns.priv = nil // a substitution runs in the calling shell, unwrapped
	ns.stdin, ns.stdinPath, ns.body, ns.feeder, ns.pipeText = "", "", nil, "", ""
	ns.writes, ns.reads, ns.net = nil, nil, nil
	if ns.depth > a.opts.MaxDepth {
		a.fail(ErrTooDeep)
		return
	}
	a.stmts(list, ns)
}

// redirs records a statement's redirections and applies them to st: output
// targets become writes of every command in the statement, an input
// redirection or here-document becomes their stdin.
func (a *analyzer) redirs(rs []*syntax.Redirect, st *state) {
	for _, r := range rs {
		if a.failed() {
			return
		}
		a.substs(r.Word, st)
		if r.Hdoc != nil {
			a.substs(r.Hdoc, st)
		}
		op := r.Op.String()
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			a.out.Redirects = append(a.out.Redirects, Redirect{Op: op})
			if fd == "" || fd == "0" {
				st.stdin, st.stdinPath, st.feeder, st.pipeText = "heredoc", "", "", ""
				st.body = &hereDoc{word: r.Hdoc, raw: quotedDelim(r.Word), src: st.src}
			}
			continue
		case syntax.WordHdoc:
			a.out.Redirects = append(a.out.Redirects, Redirect{Op: op})
			if fd == "" || fd == "0" {
				st.stdin, st.stdinPath, st.feeder, st.pipeText = "herestring", "", "", ""
				st.body = &hereDoc{word: r.Word, herestring: true, src: st.src}
			}
			continue
		}
		if r.Word == nil {
			continue
		}
		// `< <(cmd)`: a pipe from a process substitution, not a file.
		if len(r.Word.Parts) == 1 {
			if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
				a.out.Redirects = append(a.out.Redirects, Redirect{Op: op, Target: a.source(r.Word, st)})
				if r.Op == syntax.RdrIn && (fd == "" || fd == "0") {
					st.stdin, st.stdinPath, st.body, st.feeder, st.pipeText = "pipe", "", nil, "", ""
				}
				continue
			}
		}
		target, raw, dyn := a.redirTarget(r.Word, st)
		switch r.Op {
		case syntax.DplIn, syntax.DplOut:
			if !dyn && (raw == "-" || isDigits(raw)) {
				a.out.Redirects = append(a.out.Redirects, Redirect{Op: op, Target: "&" + raw})
				continue
			}
			if r.Op == syntax.DplIn {
				a.out.Redirects = append(a.out.Redirects, Redirect{Op: op, Target: "&" + raw})
				continue
			}
			// `>&file` sends stdout and stderr to file.
		}
		if dyn {
			a.dynamic("redirect target from expansion")
		}
		if isNetDev(raw) || isNetDev(target) {
			nd := target
			if isNetDev(raw) {
				nd = filepath.Clean(raw)
			}
			a.network(nd)
			st.net = append(st.net, nd)
		}
		write := r.Op != syntax.RdrIn
		a.out.Redirects = append(a.out.Redirects, Redirect{Op: op, Target: target, Write: write})
		if write {
			st.writes = append(st.writes, target)
		} else {
			st.reads = append(st.reads, target)
		}
		if (r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut) && (fd == "" || fd == "0") {
			st.stdin, st.stdinPath, st.body, st.feeder, st.pipeText = "file", target, nil, "", ""
		}
	}
}

// redirTarget expands a redirection word: the absolute target, the word
// as expanded (before resolving), and whether it was dynamic.
func (a *analyzer) redirTarget(w *syntax.Word, st *state) (target, raw string, dyn bool) {
	fs := a.word(nil, w, st)
	if len(fs) == 0 {
		return "", "", false
	}
	f := fs[0]
	if f.dyn {
		return resolve(f.path, st.cwd), f.val, true
	}
	return resolve(f.val, st.cwd), f.val, false
}

func isNetDev(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// quotedDelim reports a here-document delimiter with quotes or escapes:
// the body is then taken literally.
func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsRune(p.Value, '\\') {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// hereDoc is a here-document or here-string, with the text of the parse it
// belongs to.
type hereDoc struct {
	word       *syntax.Word
	raw        bool // here-document with a quoted delimiter: no expansions
	herestring bool
	src        string
}

// heredocText returns the text a here-document or here-string feeds, and
// whether it is literal (no expansions).
func (a *analyzer) heredocText(h *hereDoc) (string, bool) {
	if h == nil || h.word == nil {
		return "", false
	}
	w := h.word
	if h.herestring {
		return a.literal(w, &state{src: h.src})
	}
	if h.raw {
		var sb strings.Builder
		for _, p := range w.Parts {
			if l, ok := p.(*syntax.Lit); ok {
				sb.WriteString(l.Value)
			}
		}
		return sb.String(), true
	}
	if dynReason(w.Parts) != "" {
		return "", false
	}
	s, err := expand.Document(a.cfg, w)
	if err != nil {
		return "", false
	}
	return s, true
}

// decl handles declare/export/local/readonly/typeset: a builtin command
// whose exported names reach every later command.
func (a *analyzer) decl(c *syntax.DeclClause, st *state) {
	for _, as := range c.Args {
		a.substs(as, st)
	}
	if a.failed() {
		return
	}
	variant := c.Variant.Value
	cmd := Command{Name: variant, Argv: []string{variant}, Depth: st.depth, Via: st.via, Stdin: st.stdin}
	exported := variant == "export"
	var names []string
	for _, as := range c.Args {
		text := a.source(as, st)
		cmd.Argv = append(cmd.Argv, text)
		if as.Naked && as.Name == nil && as.Value != nil {
			if v := as.Value.Lit(); len(v) > 1 && (v[0] == '-' || v[0] == '+') {
				for _, r := range v[1:] {
					cmd.Opts = append(cmd.Opts, string(r))
				}
				if v[0] == '-' && strings.ContainsRune(v, 'x') {
					exported = true
				}
				continue
			}
		}
		if as.Name == nil {
			if as.Value != nil && dynReason(as.Value.Parts) != "" {
				cmd.Dynamic = true
				a.dynamic("variable name from expansion in " + variant)
			}
			cmd.Operands = append(cmd.Operands, text)
			continue
		}
		cmd.Operands = append(cmd.Operands, text)
		names = append(names, as.Name.Value)
	}
	for _, n := range names {
		if exported || dangerousEnv(n) {
			cmd.Assigns = append(cmd.Assigns, n)
			if !slices.Contains(st.exports, n) {
				st.exports = append(st.exports, n)
			}
		}
	}
	if len(c.Args) == 0 || slices.Contains(cmd.Opts, "p") {
		addMark(&cmd, MarkReadsEnv, variant)
	}
	b := &build{a: a, st: st, cmd: cmd, name: variant}
	b.inv = &invocation{feedFrom: -1, feedTo: -1}
	b.commonMarks()
	a.emit(b)
}

// emit appends a finished command, then runs its nested analyses.
func (a *analyzer) emit(b *build) {
	if a.failed() {
		return
	}
	if len(a.out.Commands) >= a.opts.MaxCommands {
		a.fail(ErrTooMany)
		return
	}
	b.cmd.Via = slices.Clip(b.cmd.Via)
	a.out.Commands = append(a.out.Commands, b.cmd)
	for _, f := range b.later {
		if a.failed() {
			return
		}
		f()
	}
}

func addMark(c *Command, kind, detail string) {
	for _, m := range c.Marks {
		if m.Kind == kind && m.Detail == detail {
			return
		}
	}
	c.Marks = append(c.Marks, Mark{Kind: kind, Detail: detail})
}

func hasMark(c *Command, kind string) bool {
	for _, m := range c.Marks {
		if m.Kind == kind {
			return true
		}
	}
	return false
}
