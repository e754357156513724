package shell

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// invocation is a simple command on its way through the wrappers that run
// it: each wrapper removes itself from args and may change the directory,
// the environment, the privileges and the nesting.
type invocation struct {
	args     []field
	assigns  []string
	cwd      string
	via      []string
	priv     []string
	depth    int
	wrapped  bool // a wrapper other than command/builtin was removed
	wrappers int  // wrappers removed that did not add depth

	// where standard input comes from (see state).
	stdin     string
	stdinPath string
	body      *hereDoc
	feeder    string
	pipeText  string

	// feedFrom..feedTo are the commands run by the substitutions in this
	// command's words: a producer among them feeds an interpreter.
	feedFrom, feedTo int

	// files named by the wrappers' own options (time -o F, flock FILE).
	paths, writes []string

	// placeholder stands for the files find passes to -exec; phPaths are
	// the start points they are found under.
	placeholder string
	phPaths     []string

	// dynWhy makes the command dynamic (a wrapper's string that is not
	// literal); later runs after the command is emitted.
	dynWhy string
	later  []func()
}

// call analyses a simple command; the commands from feed on ran in its
// redirections' and words' substitutions.
func (a *analyzer) call(c *syntax.CallExpr, st *state, feed int) {
	start := feed
	for _, as := range c.Assigns {
		a.substs(as, st)
	}
	for _, w := range c.Args {
		a.substs(w, st)
	}
	if a.failed() {
		return
	}
	end := len(a.out.Commands)
	var assigns []string
	for _, as := range c.Assigns {
		if as.Name != nil {
			assigns = append(assigns, as.Name.Value)
		}
	}
	if len(c.Args) == 0 {
		// Plain assignments: a dangerous variable (PATH, IFS, …) changes
		// how every later command runs even without export.
		for _, n := range assigns {
			if dangerousEnv(n) && !slices.Contains(st.exports, n) {
				st.exports = append(st.exports, n)
			}
		}
		return
	}
	args := a.fields(c.Args, st)
	if a.failed() || len(args) == 0 {
		return
	}
	inv := &invocation{
		args: args, cwd: st.cwd, via: st.via, priv: st.priv, depth: st.depth,
		stdin: st.stdin, stdinPath: st.stdinPath, body: st.body, feeder: st.feeder, pipeText: st.pipeText,
		feedFrom: start, feedTo: end,
	}
	inv.assigns = addNames(slices.Clone(st.exports), assigns...)
	a.run(inv, st)
}

func addNames(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}

// progName is the basename of a program as the kernel would find it.
func progName(s string) string {
	if s == "" {
		return ""
	}
	s = strings.TrimRight(s, "/")
	if s == "" {
		return "/"
	}
	return path.Base(s)
}

// systemBinDirs hold the programs that a basename stands for. A program run
// by a path elsewhere (./x, /tmp/cat) is a script the agent may have
// written: it keeps its basename as Name but is marked runs_script.
var systemBinDirs = set("/bin /sbin /usr/bin /usr/bin/X11 /usr/sbin /usr/local/bin /usr/local/sbin /usr/libexec /opt/homebrew/bin /snap/bin /run/current-system/sw/bin /nix/var/nix/profiles/default/bin")

func isSystemProgram(p string) bool {
	return systemBinDirs[path.Dir(path.Clean(p))]
}

// run removes the wrappers in front of inv and builds the command left.
func (a *analyzer) run(inv *invocation, st *state) {
	for n := 0; ; n++ {
		if a.failed() {
			return
		}
		if inv.depth+inv.wrappers > a.opts.MaxDepth {
			a.fail(ErrTooDeep)
			return
		}
		if len(inv.args) == 0 {
			return
		}
		f0 := inv.args[0]
		if f0.dyn || f0.glob {
			break
		}
		name := progName(f0.val)
		w := wrappers[name]
		if w == nil {
			break
		}
		if strings.Contains(f0.val, "/") && !isSystemProgram(f0.val) {
			// ./sudo, /opt/x/env: a script, or the wrapper itself under
			// another directory. It is listed as the script it may be
			// and unwrapped as the wrapper it may be (a copy: unwrapping
			// changes inv).
			script := *inv
			a.final(&script, st)
		}
		switch w(&unwrap{a: a, inv: inv, st: st, name: name}) {
		case wrapDone:
			return
		case wrapAlone:
			a.final(inv, st)
			return
		}
	}
	a.final(inv, st)
}

// final builds the command that inv runs and emits it.
func (a *analyzer) final(inv *invocation, st *state) {
	f0 := inv.args[0]
	cmd := Command{
		Depth:   inv.depth,
		Via:     inv.via,
		Stdin:   inv.stdin,
		Assigns: inv.assigns,
	}
	for _, f := range inv.args {
		if !f.synthetic {
			cmd.Argv = append(cmd.Argv, f.val)
		}
	}
	b := &build{a: a, st: st, inv: inv, cmd: cmd, args: inv.args, cwd: inv.cwd}
	if inv.dynWhy != "" {
		b.dynamic(inv.dynWhy)
	}
	b.later = append(b.later, inv.later...)
	if f0.dyn || f0.glob {
		why := f0.why
		if !f0.dyn {
			why = "glob in command name"
		}
		b.cmd.Dynamic = true
		a.dynamic(why)
		b.p = parseOpts(inv.args, 1, nil)
		b.takeParsed()
		for _, i := range b.p.operands {
			if f := inv.args[i]; !f.dyn {
				b.path(f) // an unknown program: every operand may be a file
			}
		}
		b.commonMarks()
		a.emit(b)
		return
	}
	name := progName(f0.val)
	if !isPrintableASCII(name) {
		// ｓｕｄｏ, rм: not the program it looks like, and not one to trust.
		b.dynamic("non-ASCII or blank characters in command name")
	}
	var def *funcDef
	if len(inv.via) == len(st.via) && !strings.Contains(f0.val, "/") {
		// No wrapper at all (command and builtin skip functions): a call
		// of a function defined earlier runs its body here. The program
		// of the same name is listed as well.
		def = st.sh.funcs[name]
	}
	if runsInShell(inv, st) && (def == nil || !st.sh.sure(name)) {
		// unset -f, shopt: the builtin, unless a function of its name
		// surely runs instead; only what surely is the builtin removes
		a.shellBuiltin(name, inv.args, st, def == nil)
	}
	if def != nil {
		// the name is also listed as a program, marked when the
		// function surely runs instead of it and its body was
		// analysed here
		sure := st.sh.sure(name) && !a.trapped
		b.cmd.Function = a.callFunc(name, def, st) && sure
		if name == "cd" || name == "pushd" || name == "popd" {
			// the function may run instead: the directory is unknown
			b.dynamic("a function shadows " + name)
		}
	}
	b.name = name
	b.cmd.Name = name
	b.classify()
	b.commonMarks()
	a.emit(b)
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// build assembles one Command.
type build struct {
	a     *analyzer
	st    *state
	inv   *invocation
	cmd   Command
	name  string
	args  []field
	cwd   string // directory the command's relative paths resolve against
	p     parsed
	later []func()
}

func (b *build) parse(sp *optSpec) {
	b.p = parseOpts(b.args, 1, sp)
	b.takeParsed()
}

func (b *build) takeParsed() {
	b.cmd.Opts = append(b.cmd.Opts, b.p.opts...)
	for _, i := range b.p.operands {
		if !b.args[i].synthetic {
			b.cmd.Operands = append(b.cmd.Operands, b.args[i].val)
		}
	}
}

func (b *build) operand(k int) (field, bool) {
	if k < len(b.p.operands) {
		return b.args[b.p.operands[k]], true
	}
	return field{}, false
}

func (b *build) mark(kind, detail string) { addMark(&b.cmd, kind, detail) }

func (b *build) dynamic(reason string) {
	b.cmd.Dynamic = true
	b.a.dynamic(reason)
}

// path records a file the command touches.
func (b *build) path(f field) { b.addPath(f, false) }

// write records a file the command creates, modifies or removes.
func (b *build) write(f field) { b.addPath(f, true) }

func (b *build) addPath(f field, write bool) {
	if f.synthetic {
		b.dynamic("xargs appends arguments from stdin to " + b.name)
		return
	}
	if f.ph && b.inv.placeholder != "" {
		for _, sp := range b.inv.phPaths {
			v := strings.ReplaceAll(f.val, b.inv.placeholder, sp)
			b.addResolved(resolve(v, b.cwd), write)
		}
		return
	}
	v := f.val
	if f.dyn {
		v = f.path
	}
	if v == "" || v == "-" || isURL(v) || f.proc {
		return
	}
	if f.dyn {
		b.dynamic("path from expansion in " + b.nameOr())
	}
	b.addResolved(resolve(v, b.cwd), write)
	if isNetDev(v) {
		b.a.network(path.Clean(v))
		b.mark(MarkNetworkDevice, path.Clean(v))
	}
}

func (b *build) addResolved(p string, write bool) {
	if p == "" {
		return
	}
	if !slices.Contains(b.cmd.Paths, p) {
		b.cmd.Paths = append(b.cmd.Paths, p)
	}
	if write && !slices.Contains(b.cmd.Writes, p) {
		b.cmd.Writes = append(b.cmd.Writes, p)
	}
	if isNetDev(p) {
		b.a.network(p)
		b.mark(MarkNetworkDevice, p)
	}
}

// paths records every operand from the k-th on as a path.
func (b *build) operandPaths(k int, write bool) {
	for ; k < len(b.p.operands); k++ {
		b.addPath(b.args[b.p.operands[k]], write)
	}
}

// optPaths records the values of the named options as paths.
func (b *build) optPaths(write bool, names ...string) {
	for _, v := range b.p.all(names...) {
		b.addPath(v, write)
	}
}

// child is the state a nested analysis of this command starts from.
func (b *build) child() *state {
	ns := b.st.fork()
	ns.cwd = b.cwd
	ns.depth = b.inv.depth
	ns.via = b.inv.via
	ns.priv = b.inv.priv
	ns.exports = slices.Clone(b.cmd.Assigns)
	ns.stdin, ns.stdinPath, ns.body, ns.feeder = b.inv.stdin, b.inv.stdinPath, b.inv.body, b.inv.feeder
	ns.pipeText = b.inv.pipeText
	ns.funcs, ns.async = nil, false
	return ns
}

// shellString analyses f as a shell program run by this command (sh -c,
// su -c, ssh host CMD, tar --to-command …). A dynamic string makes the
// command dynamic; the text between its double quotes, if any, is still
// looked at, leniently.
func (b *build) shellString(f field, via string, newShell bool) {
	if f.dyn {
		b.dynamic(via + " of a non-literal")
		if f.inner == "" {
			return
		}
		b.later = append(b.later, func() {
			b.a.lenient(f.inner, b.child(), via)
		})
		return
	}
	src := f.val
	b.later = append(b.later, func() {
		b.a.nested(src, b.child(), via, newShell)
	})
}

// lenientString is shellString for strings that are only probably shell
// code (an alias value, a pager setting): a parse error is not an error.
func (b *build) lenientString(f field, via string) {
	src, ok := b.codeOf(f, via)
	if !ok {
		return
	}
	b.later = append(b.later, func() {
		b.a.lenient(src, b.child(), via)
	})
}

// codeOf is the code a string argument holds: a non-literal one makes the
// command dynamic, and only its literal text, if any, is analysed.
func (b *build) codeOf(f field, via string) (string, bool) {
	if f.dyn {
		b.dynamic(via + " of a non-literal")
		if f.inner == "" {
			return "", false
		}
		f.val = f.inner
	}
	return f.val, true
}

// handlerString is lenientString for code that this shell runs later, at
// a time not known (a trap handler, a mapfile -C callback): it may call
// the functions defined so far, whose bodies are analysed there, but none
// of its calls is surely a function.
func (b *build) handlerString(f field, via string) {
	src, ok := b.codeOf(f, via)
	if !ok {
		return
	}
	sh := b.st.sh.clone()
	sh.foreign = true
	b.later = append(b.later, func() {
		b.a.lenientIn(src, b.child(), via, sh)
	})
}

// lenient parses src one level deeper; if it does not parse, it is
// reported as dynamic instead of failing the whole analysis.
func (a *analyzer) lenient(src string, st *state, via string) {
	// the shell running it is not known (sh, $SHELL, pwsh): no call
	// there is surely a function
	a.lenientIn(src, st, via, &shellEnv{foreign: true})
}

// lenientIn is lenient with the functions of sh.
func (a *analyzer) lenientIn(src string, st *state, via string, sh *shellEnv) {
	if !a.charge(len(src) + parseCost) {
		return
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		a.dynamic(via + " that does not parse")
		return
	}
	ns := st.fork()
	ns.depth++
	ns.via = append(ns.via, via)
	ns.sh = sh
	if ns.depth > a.opts.MaxDepth {
		a.fail(ErrTooDeep)
		return
	}
	ns.src = src
	a.stmts(f.Stmts, ns)
}

// nestedArgv runs args as a command started by this one (find -exec,
// xargs), one level deeper.
func (b *build) nestedArgv(args []field, via string, setup func(*invocation)) {
	if len(args) == 0 {
		return
	}
	args = slices.Clone(args)
	b.later = append(b.later, func() {
		inv := &invocation{
			args: args, cwd: b.cwd, via: append(slices.Clip(b.inv.via), via), priv: b.inv.priv,
			depth: b.inv.depth + 1, assigns: slices.Clone(b.cmd.Assigns), feedFrom: -1, feedTo: -1,
		}
		if setup != nil {
			setup(inv)
		}
		st := b.child()
		st.stdin, st.stdinPath, st.body, st.feeder, st.pipeText = inv.stdin, "", nil, "", ""
		b.a.run(inv, st)
	})
}

// readsStdin marks an interpreter that takes its program from standard
// input; flagged is set when an option (bash -s, python3 -) says so.
func (b *build) readsStdin(flagged bool, shell bool) {
	switch b.inv.stdin {
	case "pipe", "heredoc", "herestring":
		b.mark(MarkStdinShell, b.inv.stdin)
	case "file":
		b.mark(MarkRunsScript, b.inv.stdinPath)
		return
	default:
		if flagged {
			b.mark(MarkStdinShell, "stdin")
		}
		return
	}
	if !shell {
		return
	}
	if b.inv.stdin == "pipe" {
		if text := b.inv.pipeText; text != "" {
			b.later = append(b.later, func() {
				ns := b.child()
				ns.stdin, ns.feeder, ns.pipeText = "", "", ""
				b.a.nested(text, ns, b.name+" |", true)
			})
		}
		return
	}
	// A here-document or here-string fed to a shell: its text is the
	// program.
	text, ok := b.a.heredocText(b.inv.body)
	if !ok {
		what := "here-doc"
		if b.inv.stdin == "herestring" {
			what = "here-string"
		}
		b.dynamic(what + " to shell with expansion")
		return
	}
	via := b.name + " <<"
	if b.inv.stdin == "herestring" {
		via = b.name + " <<<"
	}
	b.later = append(b.later, func() {
		ns := b.child()
		ns.stdin, ns.body, ns.feeder, ns.pipeText = "", nil, "", ""
		b.a.nested(text, ns, via, true)
	})
}

// script marks a program run from a file by an interpreter.
func (b *build) script(f field) {
	if f.proc {
		b.dynamic("script from process substitution in " + b.name)
		b.mark(MarkRunsScript, f.val)
		return
	}
	v := f.val
	if f.dyn {
		v = f.path
		b.dynamic("script path from expansion in " + b.name)
	}
	b.mark(MarkRunsScript, resolve(v, b.cwd))
	if !f.dyn {
		b.path(f)
	} else {
		b.addResolved(resolve(v, b.cwd), false)
	}
}

func (b *build) nameOr() string {
	if b.name == "" {
		return "a dynamic command"
	}
	return b.name
}

// commonMarks adds the facts that do not depend on the program's options.
func (b *build) commonMarks() {
	b.setsVars()
	c := &b.cmd
	if isInterpreter(b.name) {
		b.mark(MarkInterpreter, b.name)
	}
	if len(b.args) > 0 && !b.args[0].dyn && !b.args[0].glob {
		if p := b.args[0].val; strings.Contains(p, "/") && !isSystemProgram(p) {
			// the program file is read: its place is judged like any path
			b.mark(MarkRunsScript, resolve(p, b.inv.cwd))
			b.addResolved(resolve(p, b.inv.cwd), false)
		}
	}
	for _, n := range c.Assigns {
		if dangerousEnv(n) {
			b.mark(MarkDangerousEnv, n)
		}
	}
	for _, p := range b.inv.priv {
		b.mark(MarkPrivilege, p)
	}
	for _, p := range b.inv.paths {
		b.addResolved(p, false)
	}
	for _, p := range b.inv.writes {
		b.addResolved(p, true)
	}
	for _, p := range b.st.reads {
		b.addResolved(p, false)
	}
	for _, p := range b.st.writes {
		b.addResolved(p, true)
	}
	for _, n := range b.st.net {
		b.mark(MarkNetworkDevice, n)
	}
	if isInterpreter(b.name) || b.name == "eval" || b.name == "source" || b.name == "." {
		if b.inv.stdin == "pipe" && b.inv.feeder != "" {
			b.mark(MarkDownloadToShell, b.inv.feeder)
		}
		if b.inv.feedFrom >= 0 && b.inv.feedTo <= len(b.a.out.Commands) {
			if p := firstProducer(b.a.out.Commands[b.inv.feedFrom:b.inv.feedTo]); p != "" {
				b.mark(MarkDownloadToShell, p)
			}
		}
	}
	if isDestructive(b.name) && !c.Dynamic {
		for _, i := range b.p.operands {
			if f := b.args[i]; f.dyn && !f.ph {
				b.dynamic("operand from expansion in " + b.name)
				break
			}
		}
		for _, v := range b.p.vals {
			if v.val.dyn && !v.val.ph {
				b.dynamic("operand from expansion in " + b.name)
				break
			}
		}
	}
}

// unversioned strips a version suffix: python3.12 → python, perl5.36 → perl.
func unversioned(name string) string {
	i := len(name)
	for i > 0 && (name[i-1] >= '0' && name[i-1] <= '9' || name[i-1] == '.') {
		i--
	}
	if i == len(name) || name[i] == '.' {
		return name
	}
	return name[:i]
}

var versionedInterpreters = set("python pypy perl ruby php lua tclsh wish node")

var shellNames = set("bash sh dash zsh ksh mksh lksh pdksh oksh loksh ash hush yash posh fish csh tcsh rbash sash")

// posixShell reports bash or a POSIX sh (dash, ash, busybox hush), in
// which a function comes before every builtin but the special ones.
func posixShell(name string) bool {
	n := strings.TrimSuffix(strings.TrimSuffix(name, "-static"), ".static")
	n = strings.TrimSuffix(strings.TrimRight(n, "0123456789."), "-")
	switch n {
	case "bash", "rbash", "sh", "dash", "ash", "hush":
		return true
	}
	return false
}

// isShell reports a shell, also under the name of a version or a static
// build: ksh93, zsh5, bash-static, zsh-5.9.
func isShell(name string) bool {
	if shellNames[name] {
		return true
	}
	n := strings.TrimSuffix(strings.TrimSuffix(name, "-static"), ".static")
	n = strings.TrimSuffix(strings.TrimRight(n, "0123456789."), "-")
	return n != name && shellNames[n]
}

func isPython(name string) bool {
	u := unversioned(name)
	return u == "python" || u == "pypy"
}

var otherInterpreters = set("nodejs deno bun luajit awk gawk mawk nawk busybox-awk Rscript osascript pwsh powershell jshell irb expect julia gdb dc m4 sqlite3")

func isInterpreter(name string) bool {
	return isShell(name) || versionedInterpreters[unversioned(name)] || otherInterpreters[name]
}

func isDestructive(name string) bool {
	return destructive[name] || strings.HasPrefix(name, "mkfs")
}

// dangerousEnv reports variables that change which program runs or what
// it loads: a command with such an assignment is not the command it looks
// like.
func dangerousEnv(name string) bool {
	u := strings.ToUpper(name)
	if dangerousEnvNames[u] {
		return true
	}
	for _, p := range dangerousEnvPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

var dangerousEnvNames = set("PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV PROMPT_COMMAND PS4 IFS SHELLOPTS BASHOPTS GLOBIGNORE CDPATH " +
	"GIT_SSH GIT_SSH_COMMAND GIT_EXEC_PATH GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS GIT_PROXY_COMMAND GIT_EXTERNAL_DIFF GIT_EDITOR GIT_SEQUENCE_EDITOR " +
	"GIT_PAGER GIT_DIR GIT_WORK_TREE GIT_TEMPLATE_DIR PAGER MANPAGER SYSTEMD_PAGER LESSOPEN LESSCLOSE EDITOR VISUAL BROWSER " +
	"PYTHONPATH PYTHONSTARTUP PYTHONHOME PYTHONINSPECT PYTHONBREAKPOINT NODE_OPTIONS NODE_PATH PERL5OPT PERL5LIB PERLLIB PERL5DB RUBYOPT RUBYLIB " +
	"JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH GCONV_PATH GLIBC_TUNABLES HOSTALIASES LOCPATH NLSPATH " +
	"SHELL MAKEFLAGS MFLAGS GOFLAGS GOENV RUSTC_WRAPPER RUSTC CC CXX HOME XDG_CONFIG_HOME ZDOTDIR WGETRC CURL_HOME " +
	"TAR_OPTIONS RSYNC_RSH RSYNC_CONNECT_PROG ZIPOPT ZIP SUDO_EDITOR FCEDIT MANOPT LESS LESSKEY LESSKEYIN LESSEDIT " +
	"SYSTEMD_EDITOR KUBE_EDITOR KUBECTL_EXTERNAL_DIFF GH_PAGER GH_EDITOR GH_BROWSER DIFF_PAGER BAT_PAGER PS0 PS1 PS2 FPATH MAKEFILES " +
	"VIMINIT EXINIT MYVIMRC GVIMINIT PYTHONWARNINGS PYTHONUSERBASE PYTHONEXECUTABLE NODE_REPL_EXTERNAL_MODULE OPENSSL_CONF " +
	"OPENSSL_ENGINES OPENSSL_MODULES R_PROFILE R_PROFILE_USER R_ENVIRON R_ENVIRON_USER PHPRC PHP_INI_SCAN_DIR DOTNET_STARTUP_HOOKS " +
	"EMACSLOADPATH TERMINAL BASH_LOADABLES_PATH BASH_CMDS BASH_ALIASES EXECIGNORE POSIXLY_CORRECT " +
	// where network clients and package managers connect: a proxy or a
	// registry given in the environment is a destination the gate cannot
	// read from the command line
	"HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY FTP_PROXY SOCKS_PROXY SOCKS5_PROXY RSYNC_PROXY GOPROXY GONOPROXY GOSUMDB GONOSUMDB GONOSUMCHECK " +
	"GOINSECURE GOPRIVATE GOVCS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_PROXY PIP_TRUSTED_HOST UV_INDEX_URL UV_EXTRA_INDEX_URL " +
	"UV_DEFAULT_INDEX UV_INDEX YARN_REGISTRY YARN_NPM_REGISTRY_SERVER YARN_HTTPS_PROXY YARN_HTTP_PROXY CARGO_HTTP_PROXY BUNDLE_MIRROR__ALL GEM_HOST")

// varSetters are the builtins that assign the variables named in their
// arguments, with the arity of their options.
var varSetters = map[string]*optSpec{
	"read":    spec("a: d: i: n: N: p: t: u: e r s E"),
	"mapfile": spec("d: n: O: s: u: C: c: t"), "readarray": spec("d: n: O: s: u: C: c: t"),
	"printf":  spec("v:"),
	"wait":    spec("p: n f"),
	"getopts": nil,
	"declare": spec("a A f F g i I l n p r t u x"), "typeset": spec("a A f F g i I l n p r t u x"),
	"local": spec("a A f F g i I l n p r t u x"), "export": spec("f n p"), "readonly": spec("a A f p"),
}

// setsVars marks the dangerous variables a builtin assigns without an
// assignment word (read PATH, read -a PATH, printf -v IFS, mapfile
// LD_PRELOAD, getopts o PATH, builtin export PATH), and keeps them set
// for the commands after it in this shell. mapfile -C runs its callback
// as shell code.
func (b *build) setsVars() {
	sp, ok := varSetters[b.name]
	if !ok || len(b.args) == 0 {
		return
	}
	p := parseOpts(b.args, 1, sp)
	var names []field
	switch b.name {
	case "read":
		names = append(p.all("a"), fieldsAt(b.args, p.operands)...)
	case "mapfile", "readarray":
		names = fieldsAt(b.args, p.operands)[:min(1, len(p.operands))]
		for _, v := range p.all("C") {
			// the callback runs in this shell, again for each line
			b.a.trapped = true
			b.mark(MarkExecFlag, b.name+" -C")
			b.handlerString(v, b.name+" -C")
		}
	case "printf":
		names = p.all("v")
	case "wait":
		names = p.all("p")
	case "getopts":
		names = b.args[min(2, len(b.args)):min(3, len(b.args))]
	default:
		names = fieldsAt(b.args, p.operands)
	}
	for _, f := range names {
		if f.dyn {
			b.dynamic("variable name from expansion in " + b.name)
			continue
		}
		name, _, _ := strings.Cut(f.val, "=")
		name, _, _ = strings.Cut(name, "[")
		if !dangerousEnv(name) {
			continue
		}
		b.cmd.Assigns = addNames(b.cmd.Assigns, name)
		if !b.inv.wrapped {
			b.st.exports = addNames(b.st.exports, name)
		}
	}
}

func fieldsAt(args []field, idx []int) []field {
	out := make([]field, 0, len(idx))
	for _, i := range idx {
		out = append(out, args[i])
	}
	return out
}

var dangerousEnvPrefixes = []string{"LD_", "DYLD_", "GIT_CONFIG", "BASH_FUNC_", "NPM_CONFIG_", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "CARGO_TARGET_", "CARGO_BUILD_RUSTC", "CARGO_REGISTRIES_", "CARGO_SOURCE_"}

// firstProducer names the first downloader or decoder among cmds.
func firstProducer(cmds []Command) string {
	for i := range cmds {
		if p := producer(&cmds[i]); p != "" {
			return p
		}
	}
	return ""
}

var downloaders = set("curl wget fetch aria2c nc ncat netcat socat ftp tftp http https xh lwp-request GET lynx")
var decoders = set("gunzip zcat bzcat xzcat zstdcat lzcat lz4cat unxz bunzip2 unzstd uncompress uudecode rev tr")
var compressors = set("gzip bzip2 xz zstd lz4 lzma brotli")

// producer names a command whose output may be a program in disguise: a
// download or a decoded blob.
func producer(c *Command) string {
	has := func(names ...string) bool {
		for _, o := range c.Opts {
			if slices.Contains(names, o) {
				return true
			}
		}
		return false
	}
	switch {
	case downloaders[c.Name], decoders[c.Name]:
		return c.Name
	case c.Name == "base64" || c.Name == "base32" || c.Name == "basenc":
		if has("d", "decode", "D") {
			return c.Name + " -d"
		}
	case c.Name == "xxd":
		if has("r", "revert") {
			return "xxd -r"
		}
	case c.Name == "openssl":
		if has("d", "base64", "a") {
			return "openssl"
		}
	case compressors[c.Name]:
		if has("d", "decompress", "uncompress") {
			return c.Name + " -d"
		}
	case c.Name == "printf" || c.Name == "echo" && has("e"):
		for _, o := range c.Operands {
			if strings.Contains(o, `\x`) || strings.Contains(o, `\0`) || strings.Contains(o, `\u`) {
				return c.Name
			}
		}
	}
	return ""
}
