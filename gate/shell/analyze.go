package shell

import (
	"fmt"
	"maps"
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
	a.parseAndWalk(src, st, true)
	a.finish()
	return
}

// finish settles what needed the whole string: shells reading a standard
// input of unknown source count as fed by its first download, and
// arithmetic on variables is checked against every assignment.
func (a *analyzer) finish() {
	if a.failed() {
		return
	}
	if p := firstProducer(a.out.Commands); p != "" {
		for _, i := range a.unfed {
			addMark(&a.out.Commands[i], MarkDownloadToShell, p)
		}
	}
	a.vars.finish(a)
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

	unfed []int // commands reading a standard input of unknown source
	vars  varFacts
	// trapped: a trap handler was set, or code not followed here runs in
	// this shell (a sourced script, a mapfile -C callback); it may run
	// anywhere after it (a DEBUG trap before every command) and undo what
	// is tracked
	trapped bool
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
		c.Dests = nonNil(c.Dests)
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

// shellEnv is what one shell process knows: the functions defined so far
// and the options that change how cd finds its directory. A subshell
// works on a copy; conditional branches share it, so a function defined
// in a branch that may not run is known afterwards, with the definition it
// may not have replaced kept as its alt (a call analyses both, and lists
// the program of the same name as well).
type shellEnv struct {
	funcs map[string]*funcDef
	// unsure names the functions that may be absent when a later call
	// runs: defined in a branch, passed to a child shell (which may not
	// be bash), or given to an unset that may have removed them.
	unsure map[string]bool
	cdable bool // shopt -s cdable_vars: cd NAME may go to $NAME
	// foreign: a shell that is not bash or a POSIX sh (zsh, ksh,
	// PowerShell, a login shell not known), whose aliases, builtins or
	// own ways of removing functions may come before its functions: no
	// call there surely runs a function.
	foreign bool
	// midLine: a command already ran in this top-level command (one
	// line of the script). An error in expanding a later one ($((1/0)),
	// ${!bad}, an assignment to a readonly variable such as UID)
	// abandons the rest of the line, so a definition after it may not
	// happen.
	midLine bool
}

// funcDef is a function's body with the text it was parsed from.
type funcDef struct {
	body     *syntax.Stmt
	src      string
	exported bool // export -f: child bash processes define it too
	readonly bool // readonly -f: a later definition fails
	// alt is the definition this one replaced where the replacement
	// may not have run (a branch): a call may run either.
	alt *funcDef
}

func (e *shellEnv) hasFunc(name string) bool { return e.funcs[name] != nil }

func (e *shellEnv) define(name string, def *funcDef) {
	if e.funcs == nil {
		e.funcs = map[string]*funcDef{}
	}
	e.funcs[name] = def
}

// doubt marks the function name as one that may be absent.
func (e *shellEnv) doubt(name string) {
	if e.unsure == nil {
		e.unsure = map[string]bool{}
	}
	e.unsure[name] = true
}

// sure reports whether a call of name surely runs the function defined
// under that name, never a builtin or program.
func (e *shellEnv) sure(name string) bool {
	return e.funcs[name] != nil && !e.unsure[name] && !specialBuiltins[name] && !e.foreign
}

// specialBuiltins are found before functions in POSIX mode.
var specialBuiltins = set("break : . continue eval exec exit export readonly return set shift times trap unset source")

// clone is the environment of a subshell: everything is inherited, and
// nothing it defines comes back.
func (e *shellEnv) clone() *shellEnv {
	return &shellEnv{funcs: maps.Clone(e.funcs), unsure: maps.Clone(e.unsure), cdable: e.cdable, foreign: e.foreign, midLine: e.midLine}
}

// child is the environment of a new shell process started by this one:
// only exported functions reach it.
func (e *shellEnv) child() *shellEnv {
	ne := &shellEnv{}
	for n, def := range e.funcs {
		if def.exported {
			// a child that is not bash (sh is dash) does not import it
			ne.define(n, def)
			ne.doubt(n)
		}
	}
	return ne
}

// frame is a function being analysed: async is set when the call that
// entered it was in a pipeline or in the background.
type frame struct {
	name  string
	async bool
}

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

	// alt holds the other directories the shell may be in, when a cd may
	// have failed (see cwds); ok, when not nil, is the set of directories
	// if the last statement succeeded (after `cd DIR`, only DIR).
	alt []string
	ok  []string
	// cond is set in code that may not run (a branch, a function body
	// analysed at its call): an unset -f there removes nothing.
	cond bool

	// stdin of the commands here: "", "pipe", "heredoc", "herestring" or
	// "file"; stdinPath is the file, body the here-document or
	// here-string, feeder the downloader or decoder feeding a pipe
	// (feedUnknown when the pipe's source is not known).
	stdin     string
	stdinPath string
	body      *hereDoc
	feeder    string
	pipeText  string // literal text piped in by echo, printf or cat

	exports []string // variables exported or dangerous ones assigned
	writes  []string // output redirections of enclosing compounds
	reads   []string // input redirections of enclosing compounds
	net     []string // /dev/tcp targets of enclosing redirections

	funcs []frame // functions being analysed, outermost first
	async bool    // in a pipeline or the background since the last frame
}

// feedUnknown is the feeder of a standard input whose source is not known
// (inside >(…), a function body, after exec <…): a shell reading it is
// counted as fed by any download in the whole string. It never reaches
// the output.
const feedUnknown = "\x00unknown"

// maxCwds bounds the directories tracked at once; past it the directory is
// unknown.
const maxCwds = 4

const reasonCwd = "cwd unknown after cd"

func (st *state) fork() *state {
	ns := *st
	ns.via = slices.Clip(ns.via)
	ns.priv = slices.Clip(ns.priv)
	ns.exports = slices.Clip(ns.exports)
	ns.writes = slices.Clip(ns.writes)
	ns.reads = slices.Clip(ns.reads)
	ns.net = slices.Clip(ns.net)
	ns.funcs = slices.Clip(ns.funcs)
	ns.alt = slices.Clip(ns.alt)
	ns.ok = slices.Clip(ns.ok)
	return &ns
}

// subshell is a fork that runs in a child process: functions it defines
// and options it sets stay there.
func (st *state) subshell() *state {
	ns := st.fork()
	ns.sh = st.sh.clone()
	return ns
}

// branch is a fork for code that may or may not run.
func (st *state) branch() *state {
	ns := st.fork()
	ns.cond = true
	return ns
}

// cwds lists every directory the shell may be in, cwd first; [""] when
// it is unknown.
func (st *state) cwds() []string {
	if st.cwd == "" {
		return []string{""}
	}
	return append([]string{st.cwd}, st.alt...)
}

// okCwds is cwds if the last statement succeeded.
func (st *state) okCwds() []string {
	if st.ok != nil {
		return st.ok
	}
	return st.cwds()
}

// setCwds makes dirs the directories the shell may be in: unknown if one
// of them is, or if there are more than maxCwds.
func (a *analyzer) setCwds(st *state, dirs []string) {
	var out []string
	for _, d := range dirs {
		if d == "" {
			st.cwd, st.alt = "", nil
			return
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 || len(out) > maxCwds {
		a.dynamic(reasonCwd)
		st.cwd, st.alt = "", nil
		return
	}
	st.cwd, st.alt = out[0], out[1:]
}

// merge folds a conditional branch back: a cd that may or may not have
// happened leaves the cwd unknown; exports are kept.
func (a *analyzer) merge(st, br *state) {
	if !slices.Equal(br.cwds(), st.cwds()) {
		if st.cwd != "" || br.cwd != "" {
			a.dynamic(reasonCwd)
		}
		st.cwd, st.alt = "", nil
	}
	st.ok = nil
	mergeEnv(st, br)
}

// join folds back code that may or may not have run when both outcomes
// are tracked: the shell may be in any directory of either.
func (a *analyzer) join(st, br *state) {
	a.setCwds(st, append(br.cwds(), st.cwds()...))
	st.ok = nil
	mergeEnv(st, br)
}

func mergeEnv(st, br *state) {
	for _, e := range br.exports {
		if !slices.Contains(st.exports, e) {
			st.exports = append(st.exports, e)
		}
	}
	if br.sh != st.sh {
		for n, def := range br.sh.funcs {
			if !st.sh.hasFunc(n) {
				st.sh.define(n, def)
				st.sh.doubt(n)
			}
		}
		for n := range br.sh.unsure {
			st.sh.doubt(n)
		}
		st.sh.cdable = st.sh.cdable || br.sh.cdable
	}
}

// parseAndWalk parses src and walks it in st. top is set for the script
// of a shell (not an eval): each of its lines is a top-level command that
// an expansion error abandons as a whole (see shellEnv.midLine).
func (a *analyzer) parseAndWalk(src string, st *state, top bool) {
	if !a.charge(len(src)) {
		return
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		a.fail(errParsePref + err.Error())
		return
	}
	st.src = src
	for i, s := range f.Stmts {
		if a.failed() {
			return
		}
		if top && i > 0 && newLineBetween(src, f.Stmts[i-1].End(), s.Pos()) {
			st.sh.midLine = false
		}
		a.stmt(s, st)
	}
}

// newLineBetween reports a newline, not one escaped by a backslash,
// between two statements.
func newLineBetween(src string, from, to syntax.Pos) bool {
	i, j := int(from.Offset()), int(to.Offset())
	if i < 0 || j > len(src) || i > j {
		return false
	}
	return strings.Contains(strings.ReplaceAll(src[i:j], "\\\n", ""), "\n")
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
		ns.sh = st.sh.child()
		// only a bash or POSIX sh started as a shell (bash -c, sh -c)
		// surely runs its functions; su -c, ssh, script -c … start a
		// shell not known
		name, _, _ := strings.Cut(via, " ")
		ns.sh.foreign = !posixShell(name)
	}
	if ns.depth > a.opts.MaxDepth {
		a.fail(ErrTooDeep)
		return ns
	}
	a.parseAndWalk(src, ns, newShell)
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
	outer.ok = nil
	if len(s.Redirs) > 0 || s.Background || s.Coprocess {
		st = st.fork()
	}
	if _, def := s.Cmd.(*syntax.FuncDecl); !def && mayFailRedirs(s.Redirs) {
		// a redirection that fails (a missing file, a bad descriptor)
		// skips the command: what it defines may not be defined
		st.cond = true
	}
	if s.Background || s.Coprocess {
		st.sh = st.sh.clone()
		st.async = true
	}
	feed := len(a.out.Commands)
	a.redirs(s.Redirs, st)
	if a.failed() || s.Cmd == nil {
		return
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			a.assigned(as, st)
		}
		// Where a cd may have failed, the command runs in one of several
		// directories: it is analysed in each. Only the analysis in the
		// state itself carries its cd and exports over.
		var pre *state
		if len(st.alt) > 0 {
			pre = st.fork()
		}
		start := len(a.out.Commands)
		a.call(c, st, feed)
		if st != outer && isBareExec(a.out.Commands[start:]) {
			a.execRedirs(outer, st)
		}
		for i := 0; pre != nil && i < len(pre.alt); i++ {
			ns := pre.fork()
			ns.cwd, ns.alt = pre.alt[i], nil
			a.call(c, ns, feed)
		}
	case *syntax.Block:
		a.stmts(c.Stmts, st)
	case *syntax.Subshell:
		a.stmts(c.Stmts, st.subshell())
	case *syntax.BinaryCmd:
		a.binary(c, st)
	case *syntax.IfClause:
		a.ifClause(c, st)
	case *syntax.WhileClause:
		start := len(a.out.Commands)
		a.stmts(c.Cond, st)
		br := st.branch()
		a.stmts(c.Do, br)
		a.merge(st, br)
		a.again(start, st)
		if !c.Until && loopsForever(c.Cond) && hasBackground(c.Do) {
			a.out.ForkBomb = true
		}
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, w := range l.Items {
				a.substs(w, st)
			}
			a.loopVar(l, st)
		case *syntax.CStyleLoop:
			a.substs(l, st)
		}
		start := len(a.out.Commands)
		br := st.branch()
		a.stmts(c.Do, br)
		a.merge(st, br)
		a.again(start, st)
	case *syntax.CaseClause:
		a.substs(c.Word, st)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.substs(p, st)
			}
			br := st.branch()
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
		ns := st.subshell()
		ns.async = true
		a.stmt(c.Stmt, ns)
	case *syntax.TestDecl:
		a.substs(c.Description, st)
		a.stmt(c.Body, st.fork())
	default:
		a.substs(c, st)
	}
	if !s.Background && !s.Coprocess {
		// an expansion that may fail abandons the rest of the line
		switch c := s.Cmd.(type) {
		case *syntax.CallExpr:
			st.sh.midLine = st.sh.midLine || !literalCall(c, s.Redirs)
		case *syntax.FuncDecl:
			// its redirections are expanded at each call
		case *syntax.Block, *syntax.Subshell, *syntax.BinaryCmd, *syntax.IfClause, *syntax.WhileClause, *syntax.TimeClause:
			// the commands inside are counted as they are walked
			st.sh.midLine = st.sh.midLine || !literalRedirs(s.Redirs)
		default:
			// case and for words, declare, (( )), [[ ]], let
			st.sh.midLine = true
		}
	}
	if st != outer && !s.Background && !s.Coprocess {
		// cd and export inside a redirected compound still carry over.
		outer.cwd, outer.alt, outer.ok = st.cwd, st.alt, st.ok
		outer.exports = st.exports
	}
	if s.Negated || s.Background || s.Coprocess {
		outer.ok = nil
	}
}

// again is called after a loop whose commands from start on may run
// again: a call marked Function there is walked once, but a later
// iteration runs after the rest of the body, which may have removed the
// function (unset -f after the call) or set a trap. A call of a function
// that is not surely defined once the body has run is not marked.
func (a *analyzer) again(start int, st *state) {
	for i := start; i < len(a.out.Commands); i++ {
		if c := &a.out.Commands[i]; c.Function && (a.trapped || !st.sh.sure(c.Name)) {
			c.Function = false
		}
	}
}

// literalCall reports a simple command whose expansion cannot fail: a
// command (not a bare assignment, which fails on a readonly variable)
// whose words, assignments and redirections are plain or quoted text
// without globs (failglob) or here-documents with expansions. Any other
// may abandon the rest of its line.
func literalCall(c *syntax.CallExpr, rs []*syntax.Redirect) bool {
	if len(c.Args) == 0 {
		return false
	}
	for _, as := range c.Assigns {
		if as.Append || as.Array != nil || as.Index != nil || as.Value != nil && !literalWord(as.Value.Parts, false) {
			return false
		}
	}
	for _, w := range c.Args {
		if !literalWord(w.Parts, false) {
			return false
		}
	}
	return literalRedirs(rs)
}

func literalRedirs(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		if r.Word != nil && !literalWord(r.Word.Parts, false) {
			return false
		}
		if r.Hdoc != nil && !quotedDelim(r.Word) && !literalWord(r.Hdoc.Parts, true) {
			return false
		}
	}
	return true
}

func literalWord(parts []syntax.WordPart, quoted bool) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if !quoted && strings.ContainsAny(p.Value, "*?[") {
				return false
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if !literalWord(p.Parts, true) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// mayFailRedirs reports redirections that may fail: any but a
// here-document or here-string.
func mayFailRedirs(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		default:
			return true
		}
	}
	return false
}

// isBareExec reports a statement that ran `exec` without a command: its
// redirections then apply to the rest of the shell.
func isBareExec(cmds []Command) bool {
	if len(cmds) == 0 {
		return false
	}
	c := cmds[len(cmds)-1]
	return c.Name == "exec" && len(c.Argv) == 1
}

// execRedirs carries the redirections of a bare exec over to the rest of
// the shell: its writes and reads, and its standard input. An input the
// analysis cannot follow (a process substitution) counts as unknown.
func (a *analyzer) execRedirs(outer, st *state) {
	outer.writes, outer.reads, outer.net = st.writes, st.reads, st.net
	if st.stdin != outer.stdin || st.stdinPath != outer.stdinPath || st.body != outer.body || st.feeder != outer.feeder {
		outer.stdin, outer.stdinPath, outer.body, outer.feeder, outer.pipeText = st.stdin, st.stdinPath, st.body, st.feeder, st.pipeText
		if outer.stdin == "pipe" && outer.feeder == "" && outer.pipeText == "" {
			outer.feeder = feedUnknown
		}
	}
}

func (a *analyzer) binary(c *syntax.BinaryCmd, st *state) {
	switch c.Op {
	case syntax.Pipe, syntax.PipeAll:
		a.pipeline(flattenPipe(c), st)
	case syntax.AndStmt:
		// The right side runs only if the left one succeeded, in the
		// directories that success leaves; afterwards the shell may be
		// in any directory of either outcome.
		a.stmt(c.X, st)
		failed := st.cwds()
		if st.ok != nil {
			a.setCwds(st, st.ok)
		}
		br := st.branch()
		a.stmt(c.Y, br)
		ok := br.okCwds()
		a.setCwds(st, append(br.cwds(), failed...))
		st.ok = ok
		mergeEnv(st, br)
	default: // OrStmt: the right side runs only if the left one failed
		a.stmt(c.X, st)
		ok := st.okCwds()
		br := st.branch()
		a.stmt(c.Y, br)
		ok = append(slices.Clone(ok), br.okCwds()...)
		a.join(st, br)
		st.ok = ok
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
		ns := st.subshell()
		last := i == len(elems)-1
		if last {
			// With shopt -s lastpipe (job control is off in bash -c)
			// the last element runs in this shell: what it defines,
			// unsets or changes may stay, as in a branch.
			ns = st.branch()
		}
		ns.async = true
		if i > 0 {
			ns.stdin, ns.stdinPath, ns.body, ns.feeder, ns.pipeText = "pipe", "", nil, feeder, text
		}
		start := len(a.out.Commands)
		a.stmt(e, ns)
		if feeder == "" {
			feeder = firstProducer(a.out.Commands[start:])
		}
		text = a.pipeText(e, ns)
		if last {
			a.join(st, ns)
		}
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
	br := st.branch()
	a.stmts(c.Then, br)
	a.merge(st, br)
	if c.Else != nil {
		br := st.branch()
		a.ifClause(c.Else, br)
		a.merge(st, br)
	}
}

// funcDecl defines a function and analyses its body where it is defined,
// as code that may run later with any standard input (a function called
// from a place the analysis does not follow still has its commands
// listed). Each call analyses the body again where it runs (callFunc).
func (a *analyzer) funcDecl(c *syntax.FuncDecl, st *state) {
	var names []string
	if c.Name != nil {
		names = append(names, c.Name.Value)
	}
	for _, n := range c.Names {
		names = append(names, n.Value)
	}
	for _, n := range names {
		if strings.ContainsAny(n, "\\'\"$`") {
			// bash refuses the name (not a valid identifier)
			continue
		}
		def := &funcDef{body: c.Body, src: st.src}
		if old := st.sh.funcs[n]; st.cond || st.sh.midLine || old != nil && old.readonly {
			// defined in a branch that may not run, after a command
			// of the same line whose expansion may abandon it, or
			// over a readonly function (the definition fails): the
			// definition before it may still be the one a call
			// runs, or none
			def.alt = old
			def.readonly = old != nil && old.readonly
			if def.alt == nil {
				st.sh.doubt(n)
			}
		} else {
			delete(st.sh.unsure, n)
		}
		st.sh.define(n, def)
	}
	ns := st.fork()
	ns.sh = st.sh.clone() // what the body defines exists only once it runs
	// bash calls command_not_found_handle itself, for any command not
	// found later: no call in it is surely a function
	ns.sh.foreign = ns.sh.foreign || slices.Contains(names, "command_not_found_handle")
	ns.cond = true
	for _, n := range names {
		ns.funcs = append(ns.funcs, frame{name: n})
	}
	ns.async = false
	ns.stdin, ns.stdinPath, ns.body, ns.feeder, ns.pipeText = "pipe", "", nil, feedUnknown, ""
	a.stmt(c.Body, ns)
}

// callFunc analyses a call of the function name, defined as def, in the
// caller's shell: with its directories, standard input and environment.
// The caller lists the program of the same name as well, since the
// function may be absent in a path the analysis does not follow (a
// subshell that defined it, a branch, unset -f, command NAME); the
// directories and exports of both outcomes are kept. A function already
// being analysed is not entered again: a cycle of calls with one in a
// pipeline or the background is a fork bomb. It reports whether the body
// was analysed at this call: a call within a cycle is not, and is not
// marked Function (the body would run again in another directory or
// after an unset).
func (a *analyzer) callFunc(name string, def *funcDef, st *state) bool {
	for i := len(st.funcs) - 1; i >= 0; i-- {
		if st.funcs[i].name != name {
			continue
		}
		async := st.async
		for _, f := range st.funcs[i+1:] {
			async = async || f.async
		}
		if async {
			a.out.ForkBomb = true
		}
		return false
	}
	d, n := def, 0
	for ; d != nil && n < maxAltDefs; d, n = d.alt, n+1 {
		if !a.charge(int(d.body.End().Offset()) - int(d.body.Pos().Offset()) + parseCost) {
			return false
		}
		ns := st.branch()
		ns.src = d.src
		ns.funcs = append(ns.funcs, frame{name: name, async: st.async})
		ns.async = false
		a.stmt(d.body, ns)
		a.join(st, ns)
	}
	if d != nil {
		a.dynamic("too many possible definitions of a function")
	}
	return true
}

// parseCost is what each nested analysis (a string parsed as code, a
// function body entered) is charged on top of its size, so that many
// empty or tiny ones still reach the budget.
const parseCost = 64

// maxAltDefs bounds the definitions of one name a call analyses; past it
// the analysis is dynamic.
const maxAltDefs = 4

// runsInShell reports a command run by the current shell itself, at most
// through command or builtin: a builtin there changes the shell.
func runsInShell(inv *invocation, st *state) bool {
	if len(inv.via) < len(st.via) {
		return false
	}
	for _, v := range inv.via[len(st.via):] {
		if v != "command" && v != "builtin" {
			return false
		}
	}
	return true
}

// shellBuiltin applies the builtins that change how later commands are
// found: unset -f removes functions (only where it surely runs), shopt -s
// cdable_vars lets cd take a variable's value.
func (a *analyzer) shellBuiltin(name string, args []field, st *state, surely bool) {
	switch name {
	case "unset":
		// unset -f removes functions; plain unset removes a function
		// when no variable has the name; unset -v only variables
		funcs, vars := false, false
		var names []string
		for _, f := range args[1:] {
			switch {
			case f.dyn:
				for n := range st.sh.funcs {
					st.sh.doubt(n)
				}
				return
			case strings.HasPrefix(f.val, "-") && len(names) == 0:
				funcs = funcs || strings.Contains(f.val, "f")
				vars = vars || strings.Contains(f.val, "v")
			default:
				names = append(names, f.val)
			}
		}
		if vars && !funcs {
			return
		}
		for _, n := range names {
			if funcs && surely && !st.cond {
				delete(st.sh.funcs, n)
			} else {
				st.sh.doubt(n)
			}
		}
	case "shopt":
		set := false
		for _, f := range args[1:] {
			switch {
			case f.dyn:
				st.sh.cdable = true
			case f.val == "-s":
				set = true
			case set && f.val == "cdable_vars":
				st.sh.cdable = true
			}
		}
	}
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
		a.arithNode(n, st)
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
// $(…), `…` and <(…) read the standard input of the command they are in;
// what >(…) reads is written by that command, from a source not followed.
func (a *analyzer) sub(list []*syntax.Stmt, st *state, via string) {
	ns := st.subshell()
	ns.depth++
	ns.via = append(ns.via, via)
	ns.priv = nil // a substitution runs in the calling shell, unwrapped
	if via == ">()" {
		ns.stdin, ns.stdinPath, ns.body, ns.feeder, ns.pipeText = "pipe", "", nil, feedUnknown, ""
	}
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
		start := len(a.out.Commands)
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
					st.stdin, st.stdinPath, st.body, st.pipeText = "pipe", "", nil, ""
					st.feeder = firstProducer(a.out.Commands[start:])
				}
				continue
			}
		}
		target, raw, dyn := a.redirTarget(r.Word, st)
		switch r.Op {
		case syntax.DplIn, syntax.DplOut:
			if !dyn && (raw == "-" || isDigits(raw)) {
				a.out.Redirects = append(a.out.Redirects, Redirect{Op: op, Target: "&" + raw})
				if r.Op == syntax.DplIn && (fd == "" || fd == "0") && isDigits(raw) && raw != "0" {
					// `<&3`: whatever was opened on that descriptor.
					st.stdin, st.stdinPath, st.body, st.feeder, st.pipeText = "pipe", "", nil, feedUnknown, ""
				}
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
		targets := []string{target}
		if !dyn && !filepath.IsAbs(raw) {
			for _, dir := range st.alt {
				targets = append(targets, resolve(raw, dir))
			}
		}
		if write {
			st.writes = append(st.writes, targets...)
		} else {
			st.reads = append(st.reads, targets...)
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
			} else if as.Value != nil {
				v, _ := a.literal(as.Value, st)
				a.declText(v, variant, slices.Contains(cmd.Opts, "n"))
			}
			cmd.Operands = append(cmd.Operands, text)
			continue
		}
		cmd.Operands = append(cmd.Operands, text)
		names = append(names, as.Name.Value)
		a.assigned(as, st)
		if (slices.Contains(cmd.Opts, "a") || slices.Contains(cmd.Opts, "A")) && as.Value != nil {
			// declare -a x='(…)' parses the string as a compound
			// assignment, running its substitutions.
			if v, ok := a.literal(as.Value, st); !ok || strings.Contains(v, "$(") || strings.ContainsRune(v, '`') {
				a.dynamic("array value from a string in " + variant)
			}
		}
		if slices.Contains(cmd.Opts, "n") && as.Value != nil {
			// A name reference: the value is a variable name, and a
			// subscript in it is evaluated at each use.
			if v, ok := a.literal(as.Value, st); !ok {
				a.dynamic("name reference to an expansion in " + variant)
			} else {
				a.declText(as.Name.Value+"="+v, variant, true)
				// declare -n r=PATH: every later r=… sets PATH, and
				// any value may reach the target through r
				base, _, _ := strings.Cut(v, "[")
				st.setsDangerous(base)
				a.vars.assign(base, false)
			}
		}
	}
	a.declAttrs(names, cmd.Opts)
	if slices.Contains(cmd.Opts, "f") && (variant == "readonly" || slices.Contains(cmd.Opts, "r")) {
		// readonly -f, declare -rf: a later definition of the name fails
		for _, n := range names {
			if def := st.sh.funcs[n]; def != nil {
				def.readonly = true
			}
		}
	}
	for _, n := range names {
		if def := st.sh.funcs[n]; def != nil && exported && slices.Contains(cmd.Opts, "f") {
			def.exported = true // export -f: child shells define it
		}
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
	if b.inv != nil && b.inv.feeder == feedUnknown {
		// Fed from a source not followed: settled in finish, once every
		// download of the string is known.
		b.cmd.Marks = slices.DeleteFunc(b.cmd.Marks, func(m Mark) bool { return m.Detail == feedUnknown })
		if hasMark(&b.cmd, MarkStdinShell) {
			a.unfed = append(a.unfed, len(a.out.Commands))
		}
	}
	if b.args != nil {
		a.builtinVars(b)
	}
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
