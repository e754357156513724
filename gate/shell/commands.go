package shell

import (
	"path/filepath"
	"slices"
	"strings"
)

var handlers map[string]func(*build)

var (
	bunSpec    = spec("+ e: p: r: --eval= --print= --preload= --cwd= --config= --env-file=")
	trapSpec   = spec("l p P")
	aliasSpec  = spec("p")
	cdSpec     = spec("L P e @")
	hashSpec   = spec("p: d t l r")
	enableSpec = spec("f: a d n p s")
	fcSpec     = spec("e: l n r s")
	npmRunners = set("run run-script rum urn start test t tst exec x restart stop explore")
)

func initHandlers() {
	handlers = map[string]func(*build){
		"eval": (*build).eval, "source": (*build).source, ".": (*build).source,
		"trap": (*build).trap, "alias": (*build).alias,
		"cd": (*build).cd, "pushd": (*build).cd, "popd": (*build).cd,
		"test": (*build).test, "[": (*build).test,
		"find": (*build).find, "xargs": (*build).xargs, "parallel": (*build).parallel, "watch": (*build).watch,
		"ssh": (*build).ssh, "scp": (*build).scp, "sftp": (*build).sftp, "rsync": (*build).rsync,
		"git": (*build).git, "tar": (*build).tar, "zip": (*build).zip, "unzip": (*build).unzip,
		"sort": (*build).sort, "sed": (*build).sed, "tee": (*build).tee,
		"grep": (*build).grep, "egrep": (*build).grep, "fgrep": (*build).grep, "zgrep": (*build).grep, "rg": (*build).grep,
		"chmod": (*build).chmod, "chown": (*build).chmod, "chgrp": (*build).chmod,
		"dd": (*build).dd, "kill": (*build).kill,
		"cp": (*build).copyLike, "mv": (*build).copyLike, "ln": (*build).copyLike, "install": (*build).copyLike,
		"curl": (*build).curl, "wget": (*build).wget, "openssl": (*build).openssl,
		"make": (*build).make, "gmake": (*build).make,
		"npm": (*build).pkgRunner, "npx": (*build).pkgRunner, "yarn": (*build).pkgRunner, "pnpm": (*build).pkgRunner,
		"pnpx": (*build).pkgRunner, "bunx": (*build).pkgRunner, "bun": (*build).bun, "deno": (*build).deno,
		"go": (*build).goTool, "cargo": (*build).cargo, "docker": (*build).docker, "podman": (*build).docker,
		"kubectl": (*build).kubectl, "less": (*build).pager, "more": (*build).pager, "man": (*build).man,
		"vim": (*build).vim, "vi": (*build).vim, "nvim": (*build).vim, "view": (*build).vim, "ex": (*build).vim,
		"vimdiff": (*build).vim, "gvim": (*build).vim, "emacs": (*build).emacs,
		"at": (*build).at, "batch": (*build).at, "crontab": (*build).crontab,
		"hash": (*build).hashCmd, "enable": (*build).enableCmd,
		"printenv": (*build).readsEnv, "env": (*build).readsEnv, "set": (*build).setCmd, "jq": (*build).jq,
		"shopt": (*build).shopt, "fc": (*build).fc,
		"awk": (*build).awk, "gawk": (*build).awk, "mawk": (*build).awk, "nawk": (*build).awk,
		"perl": (*build).perl, "ruby": (*build).ruby, "node": (*build).node, "nodejs": (*build).node,
		"php": (*build).php, "lua": (*build).lua, "luajit": (*build).lua, "Rscript": (*build).rscript,
		"osascript": (*build).osascript, "pwsh": (*build).pwsh, "powershell": (*build).pwsh,
		"tclsh": (*build).tclsh, "wish": (*build).tclsh,
		"gdb": (*build).gdb, "julia": (*build).julia, "expect": (*build).expect,
		"nc": (*build).netcat, "ncat": (*build).netcat, "netcat": (*build).netcat, "socat": (*build).socat,
	}
}

func (b *build) classify() {
	defer b.netDests()
	n := b.name
	switch {
	case isShell(n):
		b.shell()
		return
	case isPython(n):
		b.interp(specs["python"], []string{"c"}, nil, "m")
		return
	}
	if h, ok := handlers[n]; ok {
		h(b)
		return
	}
	if u := unversioned(n); u != n {
		if h, ok := handlers[u]; ok {
			h(b)
			return
		}
	}
	b.generic()
}

// modifying commands change or remove the files they are given.
var modifying = set("rm rmdir unlink shred truncate touch mkdir mkfifo mknod chattr setfacl mkswap wipefs")

// readOpts and writeOpts are option values that name files.
var readOpts = map[string][]string{
	"grep": {"f", "file", "exclude-from"}, "touch": {"r", "reference"}, "truncate": {"r", "reference"},
	"diff": {"from-file", "to-file", "exclude-from"}, "du": {"exclude-from", "files0-from"}, "wc": {"files0-from"},
	"file": {"f", "files-from", "m", "magic-file"}, "patch": {"i", "input", "d"}, "shred": {"random-source"},
	"gcc": {"I", "L"}, "cc": {"I", "L"}, "clang": {"I", "L"}, "g++": {"I", "L"}, "c++": {"I", "L"},
}

var writeOpts = map[string][]string{
	"patch": {"o", "output", "r", "reject-file"}, "gcc": {"o"}, "cc": {"o"}, "clang": {"o"}, "g++": {"o"}, "c++": {"o"},
	"ld": {"o"}, "pandoc": {"o", "output"}, "ssh-keygen": {"f"}, "mktemp": {"p", "tmpdir"},
}

func initToolSpecs() {
	for _, n := range []string{"gcc", "cc", "clang", "g++", "c++", "clang++", "ld"} {
		specs[n] = spec("o: I: L: l: D: U: x:")
	}
	specs["pandoc"] = spec("o: f: t: --output= --from= --to= --template= --metadata= --variable=")
	specs["ssh-keygen"] = spec("f: t: b: C: N: P: E: a: O: n: I: V: Z: s: h: u: z: l: F: R: K: Y:")
}

// generic handles a command without special knowledge: options by the
// arity table, every operand a path unless the tool is known not to take
// files.
func (b *build) generic() {
	b.parse(specs[b.name])
	b.optPaths(false, readOpts[b.name]...)
	b.optPaths(true, writeOpts[b.name]...)
	if noPathTools[b.name] {
		return
	}
	k := 0
	if subcommandTools[b.name] {
		k = 1
	}
	b.operandPaths(k, modifying[b.name] || isDestructive(b.name) && strings.HasPrefix(b.name, "mk"))
}

// --- shells and interpreters ---

func (b *build) shell() {
	args := b.args
	hasC, hasS, dash := false, false, false
	i := 1
loop:
	for ; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			break
		}
		v := f.val
		switch {
		case v == "-":
			dash = true
			i++
			break loop
		case v == "--":
			i++
			break loop
		case len(v) < 2 || v[0] != '-' && v[0] != '+':
			break loop
		case strings.HasPrefix(v, "--"):
			name := v[2:]
			b.cmd.Opts = append(b.cmd.Opts, name)
			if (name == "rcfile" || name == "init-file") && i+1 < len(args) {
				i++
				b.script(args[i])
			}
			continue
		}
		takes := 0
		for _, r := range v[1:] {
			b.cmd.Opts = append(b.cmd.Opts, string(r))
			switch r {
			case 'c':
				hasC = true
			case 's':
				hasS = true
			case 'o', 'O':
				takes++
			}
		}
		i += min(takes, len(args)-1-i)
	}
	rest := args[i:]
	for k, f := range rest {
		b.cmd.Operands = append(b.cmd.Operands, f.val)
		b.p.operands = append(b.p.operands, i+k)
	}
	switch {
	case hasC:
		if len(rest) > 0 {
			b.shellString(rest[0], b.name+" -c", true)
		}
	case hasS || len(rest) == 0:
		b.readsStdin(hasS || dash, true)
	case !rest[0].dyn && (rest[0].val == "/dev/stdin" || rest[0].val == "/proc/self/fd/0"):
		b.readsStdin(true, true)
	default:
		b.script(rest[0])
	}
}

// interp handles an interpreter: inline code options, options naming the
// script file, options (like python -m) after which no script is read, and
// otherwise a script operand or standard input.
func (b *build) interp(sp *optSpec, inline, fileOpts []string, noScript ...string) {
	b.parse(sp)
	for _, o := range inline {
		if _, ok := b.p.val(o); ok {
			b.mark(MarkInlineCode, b.name+" "+dashed(o))
			return
		}
	}
	for _, o := range fileOpts {
		if v, ok := b.p.val(o); ok {
			b.script(v)
			return
		}
	}
	if b.p.has(noScript...) {
		return
	}
	f, ok := b.operand(0)
	switch {
	case !ok:
		b.readsStdin(false, false)
	case !f.dyn && (f.val == "-" || f.val == "/dev/stdin"):
		b.readsStdin(true, false)
	default:
		b.script(f)
	}
}

func dashed(o string) string {
	if len(o) == 1 {
		return "-" + o
	}
	return "--" + o
}

func (b *build) perl() { b.interp(specs["perl"], []string{"e", "E"}, nil) }
func (b *build) ruby() { b.interp(specs["ruby"], []string{"e"}, nil) }
func (b *build) node() {
	b.interp(specs["node"], []string{"e", "p", "eval", "print"}, nil, "check", "c", "v", "version", "h", "help")
}
func (b *build) php() {
	b.interp(specs["php"], []string{"r", "B", "R", "E"}, []string{"f"}, "S", "l", "v", "i", "m")
}
func (b *build) lua()       { b.interp(specs["lua"], []string{"e"}, nil, "v") }
func (b *build) rscript()   { b.interp(specs["Rscript"], []string{"e"}, []string{"file"}) }
func (b *build) osascript() { b.interp(specs["osascript"], []string{"e"}, nil) }
func (b *build) tclsh()     { b.interp(specs["tclsh"], nil, nil) }

func (b *build) pwsh() {
	for i := 1; i < len(b.args); i++ {
		f := b.args[i]
		if f.dyn {
			continue
		}
		v := strings.ToLower(f.val)
		if !strings.HasPrefix(v, "-") {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			continue
		}
		key := strings.TrimLeft(v, "-/")
		b.cmd.Opts = append(b.cmd.Opts, key)
		// A parameter may be any prefix of its name: -comm is -Command.
		switch {
		case key == "":
		case strings.HasPrefix("command", key) || strings.HasPrefix("commandwithargs", key) || key == "cwa":
			b.mark(MarkInlineCode, b.name+" "+f.val)
			b.lenientString(joinFields(b.args[i+1:]), b.name+" -c")
			return
		case strings.HasPrefix("encodedcommand", key) || key == "ec":
			b.mark(MarkInlineCode, b.name+" "+f.val)
			if i+1 < len(b.args) && !b.args[i+1].dyn {
				if src, ok := decodePwsh(b.args[i+1].val); ok {
					b.lenientString(field{val: src}, b.name+" -EncodedCommand")
					return
				}
			}
			b.dynamic(b.name + " -EncodedCommand that does not decode")
			return
		case strings.HasPrefix("file", key):
			if i+1 < len(b.args) {
				b.script(b.args[i+1])
			}
			return
		}
	}
	if len(b.cmd.Operands) > 0 {
		b.script(b.args[len(b.args)-len(b.cmd.Operands)])
	}
}

func (b *build) bun() {
	b.parse(bunSpec)
	for _, o := range []string{"e", "p", "eval", "print"} {
		if _, ok := b.p.val(o); ok {
			b.mark(MarkInlineCode, "bun "+dashed(o))
			return
		}
	}
	f, ok := b.operand(0)
	if !ok {
		return
	}
	switch f.val {
	case "run", "x", "exec", "test", "create":
		b.mark(MarkExecFlag, "bun "+f.val)
		if g, ok := b.operand(1); ok && f.val == "run" && looksLikeFile(g.val) {
			b.script(g)
		}
	case "-":
		b.readsStdin(true, false)
	default:
		if looksLikeFile(f.val) || f.dyn {
			b.script(f)
		}
	}
}

func (b *build) deno() {
	b.parse(specs["deno"])
	f, ok := b.operand(0)
	if !ok {
		return
	}
	switch f.val {
	case "eval":
		b.mark(MarkInlineCode, "deno eval")
	case "task":
		b.mark(MarkExecFlag, "deno task")
	case "run", "serve":
		sub := parseOpts(b.args, b.p.operands[0]+1, nil)
		b.cmd.Opts = append(b.cmd.Opts, sub.opts...)
		if len(sub.operands) > 0 {
			g := b.args[sub.operands[0]]
			if !g.dyn && g.val == "-" {
				b.readsStdin(true, false)
			} else {
				b.script(g)
			}
		}
	default:
		if looksLikeFile(f.val) || f.dyn {
			b.script(f)
		}
	}
}

func looksLikeFile(s string) bool {
	return strings.ContainsAny(s, "./") && !isURL(s)
}

// --- shell builtins that run strings ---

func (b *build) eval() {
	rest := b.args[1:]
	for _, f := range rest {
		b.cmd.Operands = append(b.cmd.Operands, f.val)
	}
	if len(rest) == 0 {
		return
	}
	for _, f := range rest {
		if f.dyn {
			b.dynamic("eval of a non-literal")
			switch {
			case len(rest) == 1 && f.inner != "":
				inner := f.inner
				b.later = append(b.later, func() { b.a.lenient(inner, b.child(), "eval") })
			case len(rest) > 1:
				b.nestedArgv(rest, "eval", nil)
			}
			return
		}
	}
	src := joinFields(rest).val
	b.later = append(b.later, func() {
		ns := b.child()
		ns.sh = b.st.sh
		out := b.a.nested(src, ns, "eval", false)
		if !b.inv.wrapped {
			// eval runs in the current shell: its cd and exports stay.
			b.st.cwd, b.st.alt = out.cwd, out.alt
			b.st.exports = addNames(b.st.exports, out.exports...)
		}
	})
}

func (b *build) source() {
	// the script runs in this shell and may remove functions or set
	// traps: no later call is surely a function
	b.a.trapped = true
	b.parse(nil)
	f, ok := b.operand(0)
	if !ok {
		return
	}
	if !f.dyn && (f.val == "/dev/stdin" || f.val == "/proc/self/fd/0" || f.val == "-") {
		b.readsStdin(true, true)
		return
	}
	b.script(f)
}

func (b *build) trap() {
	b.parse(trapSpec)
	if len(b.p.operands) < 2 {
		return
	}
	f := b.args[b.p.operands[0]]
	if !f.dyn && (f.val == "-" || f.val == "") {
		return
	}
	b.a.trapped = true
	b.handlerString(f, "trap")
}

func (b *build) alias() {
	b.parse(aliasSpec)
	for _, i := range b.p.operands {
		f := b.args[i]
		if f.dyn {
			b.dynamic("alias of a non-literal")
			continue
		}
		if _, val, ok := strings.Cut(f.val, "="); ok {
			// with expand_aliases or in POSIX mode (sh, set -o posix,
			// POSIXLY_CORRECT) a later line expands it: `alias x=command`
			// makes `x rm -rf /` run rm, which no command here names
			b.dynamic("alias definition: later commands may expand it")
			if val != "" {
				b.lenientString(field{val: val}, "alias")
			}
		}
	}
}

// --- directory tracking ---

// cd changes the directory of the rest of the list. Whether the target
// exists is not known, so unless it is an ancestor of the directory (which
// exists) the cd may fail and leave the shell where it was: both stay
// possible (state.alt), and `cd DIR && …` or `cd DIR || exit` keep only
// DIR for what runs after success. A target taken from CDPATH or, with
// cdable_vars, from a variable is unknown.
func (b *build) cd() {
	b.parse(cdSpec)
	known, target := true, ""
	f, ok := b.operand(0)
	switch {
	case b.name == "popd":
		known = false
	case !ok:
		if b.name == "pushd" || b.a.opts.Home == "" {
			known = false
		} else {
			target = b.a.opts.Home
		}
	case f.dyn || f.val == "-" || b.name == "pushd" && (strings.HasPrefix(f.val, "+") || strings.HasPrefix(f.val, "-")):
		known = false
	default:
		target = f.val
	}
	if known && ok && searched(target) && (b.st.sh.cdable || slices.Contains(b.cmd.Assigns, "CDPATH")) {
		b.dynamic("cd target looked up through CDPATH or cdable_vars")
		known = false
	}
	dirs := []string{b.cwd}
	if !b.inv.wrapped {
		dirs = b.st.cwds()
	}
	var to []string
	sure := true
	for _, d := range dirs {
		if !known || d == "" && !filepath.IsAbs(target) {
			to = append(to, "")
			continue
		}
		t := resolve(target, d)
		b.addResolved(t, false)
		to = append(to, t)
		sure = sure && isAncestor(t, d)
	}
	if b.inv.wrapped {
		return
	}
	if slices.Contains(to, "") {
		b.dynamic(reasonCwd)
	}
	b.a.setCwds(b.st, to)
	done := b.st.cwds()
	if !sure {
		b.a.setCwds(b.st, append(to, dirs...))
	}
	b.st.ok = done
}

// searched reports a cd target that bash may look up in CDPATH or, with
// cdable_vars, as a variable: a relative name not starting with . or ..
func searched(dir string) bool {
	return dir != "" && !filepath.IsAbs(dir) && dir != "." && dir != ".." &&
		!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../")
}

// isAncestor reports a directory that is dir or, lexically, one of its
// parents: it exists if dir does (cd follows the logical path).
func isAncestor(t, dir string) bool {
	if dir == "" {
		return t == "/"
	}
	t, dir = filepath.Clean(t), filepath.Clean(dir)
	return t == "/" || t == dir || strings.HasPrefix(dir, t+"/")
}

// --- test and [ ---

var (
	testFileOps   = set("-a -b -c -d -e -f -g -h -k -p -r -s -u -w -x -G -L -N -O -S")
	testStringOps = set("-z -n -v -R -o -t")
	testBinFileOp = set("-nt -ot -ef")
	testBinary    = set("-a -o = == != < > =~ -eq -ne -lt -le -gt -ge -nt -ot -ef")
)

// test handles test and [: the operands of file tests are paths.
func (b *build) test() {
	args := b.args
	n := len(args)
	if b.name == "[" && n > 1 && !args[n-1].dyn && args[n-1].val == "]" {
		n--
	}
	expect, pathNext, last := true, false, -1
	operand := func(i int, path bool) {
		b.cmd.Operands = append(b.cmd.Operands, args[i].val)
		b.p.operands = append(b.p.operands, i)
		if path || pathNext {
			b.path(args[i])
		}
		expect, pathNext, last = false, false, i
	}
	for i := 1; i < n; i++ {
		f := args[i]
		v := f.val
		if !f.dyn {
			switch {
			case expect && (v == "!" || v == "("):
				continue
			case !expect && v == ")":
				continue
			case !expect && testBinary[v]:
				if strings.HasPrefix(v, "-") {
					b.cmd.Opts = append(b.cmd.Opts, v[1:])
				}
				if testBinFileOp[v] {
					if last >= 0 {
						b.path(args[last])
					}
					pathNext = true
				}
				expect = true
				continue
			case expect && i+1 < n && testFileOps[v]:
				b.cmd.Opts = append(b.cmd.Opts, v[1:])
				i++
				operand(i, true)
				continue
			case expect && i+1 < n && testStringOps[v]:
				b.cmd.Opts = append(b.cmd.Opts, v[1:])
				i++
				operand(i, false)
				continue
			}
		}
		operand(i, false)
	}
}

// --- find, xargs, parallel, watch ---

var findValued = set("name iname path ipath wholename iwholename regex iregex lname ilname newer anewer cnewer perm type xtype user group uid gid size mtime atime ctime mmin amin cmin used links inum samefile maxdepth mindepth fstype context printf regextype files0-from D")

func (b *build) find() {
	args := b.args
	i := 1
	for i < len(args) && !args[i].dyn {
		v := args[i].val
		if v == "-H" || v == "-L" || v == "-P" {
			b.cmd.Opts = append(b.cmd.Opts, v[1:])
			i++
			continue
		}
		if v == "-D" {
			b.cmd.Opts = append(b.cmd.Opts, "D")
			i += 2
			continue
		}
		if strings.HasPrefix(v, "-O") {
			b.cmd.Opts = append(b.cmd.Opts, "O")
			i++
			continue
		}
		if v == "--" {
			// The start points follow.
			i++
		}
		break
	}
	var starts []string
	for ; i < len(args); i++ {
		f := args[i]
		if !f.dyn && (len(f.val) > 1 && f.val[0] == '-' || f.val == "(" || f.val == "!" || f.val == ")" || f.val == ",") {
			break
		}
		b.cmd.Operands = append(b.cmd.Operands, f.val)
		b.p.operands = append(b.p.operands, i)
		b.path(f)
		v := f.val
		if f.dyn {
			v = f.path
		}
		starts = append(starts, resolve(v, b.cwd))
	}
	if len(starts) == 0 {
		starts = []string{resolve(".", b.cwd)}
		b.addResolved(starts[0], false)
	}
	deletes := false
	for i < len(args) {
		f := args[i]
		if f.dyn || len(f.val) < 2 || f.val[0] != '-' {
			i++
			continue
		}
		name := f.val[1:]
		b.cmd.Opts = append(b.cmd.Opts, name)
		switch {
		case name == "exec" || name == "execdir" || name == "ok" || name == "okdir":
			j := i + 1
			for j < len(args) && (args[j].dyn || args[j].val != ";" && args[j].val != "+") {
				j++
			}
			b.mark(MarkExecFlag, "find -"+name)
			sub := slices.Clone(args[i+1 : min(j, len(args))])
			for k := range sub {
				if !sub[k].dyn && strings.Contains(sub[k].val, "{}") {
					sub[k].dyn, sub[k].ph, sub[k].why, sub[k].path = true, true, "find file name as command name", sub[k].val
					// In a shell string, {} is a file under the start point.
					sub[k].inner = strings.ReplaceAll(sub[k].val, "{}", starts[0])
				}
			}
			startsCopy := slices.Clone(starts)
			b.nestedArgv(sub, "find -"+name, func(inv *invocation) {
				inv.placeholder, inv.phPaths = "{}", startsCopy
			})
			i = j + 1
		case name == "fprint" || name == "fprint0" || name == "fls":
			if i+1 < len(args) {
				b.write(args[i+1])
			}
			i += 2
		case name == "fprintf":
			if i+1 < len(args) {
				b.write(args[i+1])
			}
			i += 3
		case name == "delete":
			deletes = true
			i++
		case name == "files0-from":
			// The start points are read from a file or stdin.
			b.dynamic("find start points read from a file")
			if i+1 < len(args) {
				b.path(args[i+1])
			}
			i += 2
		case findValued[name] || strings.HasPrefix(name, "newer") && len(name) == 7:
			i += 2
		default:
			i++
		}
	}
	if deletes {
		for _, s := range starts {
			b.addResolved(s, true)
		}
	}
}

var xargsSpec = spec("+ I: i:: n: P: d: L: l:: s: E: e:: a: 0 r t p x o --replace? --max-args= --max-procs= --delimiter= --max-lines? --max-chars= --eof? --arg-file= --null --no-run-if-empty --verbose --interactive --exit --open-tty --show-limits --process-slot-var=")

func (b *build) xargs() {
	b.parse(xargsSpec)
	b.mark(MarkExecFlag, "xargs")
	b.optPaths(false, "a", "arg-file")
	repl := ""
	if v, ok := b.p.val("I"); ok {
		repl = v.val
	} else if b.p.has("i", "replace") {
		repl = "{}"
		if v, ok := b.p.val("i", "replace"); ok && v.val != "" {
			repl = v.val
		}
	}
	if b.p.end >= len(b.args) {
		return // xargs alone runs echo
	}
	sub := stdinArgs(b.args[b.p.end:], repl, "xargs input as command name")
	b.nestedArgv(sub, "xargs", nil)
}

// stdinArgs marks the words that receive input from stdin (those holding
// the replacement string, or an appended stand-in) as dynamic.
func stdinArgs(args []field, repl, why string) []field {
	sub := slices.Clone(args)
	if repl != "" {
		for i := range sub {
			if !sub[i].dyn && strings.Contains(sub[i].val, repl) {
				sub[i].dyn, sub[i].why, sub[i].path = true, why, sub[i].val
				// In a shell string, the input is an unknown word.
				sub[i].inner = strings.ReplaceAll(sub[i].val, repl, `"$INPUT"`)
			}
		}
		return sub
	}
	return append(sub, field{val: "{}", dyn: true, synthetic: true, why: why, path: "{}"})
}

var parallelSpec = spec("+ j: S: a: d: E: I: N: n: L: l: C: --jobs= --sshlogin= --arg-file= --delimiter= --eof? --replace? --max-args= --max-lines? --colsep= --workdir= --tmpdir= --results= --joblog= --delay= --timeout= --retries= --basefile= --return= --env= --halt= --memfree= --load= --tag --keep-order --pipe --dry-run --progress --bar --eta --will-cite --no-notice")

func (b *build) parallel() {
	b.parse(parallelSpec)
	b.mark(MarkExecFlag, "parallel")
	b.optPaths(false, "a", "arg-file")
	ops := b.args[b.p.end:]
	sep := -1
	for i, f := range ops {
		if !f.dyn && strings.HasPrefix(f.val, ":::") {
			sep = i
			break
		}
	}
	tmpl, inputs := ops, []field(nil)
	fromFiles := false
	if sep >= 0 {
		tmpl = ops[:sep]
		for _, f := range ops[sep:] {
			if !f.dyn && strings.HasPrefix(f.val, ":::") {
				fromFiles = fromFiles || strings.HasPrefix(f.val, "::::")
				continue
			}
			inputs = append(inputs, f)
		}
	}
	if len(tmpl) == 0 {
		if sep < 0 || fromFiles {
			b.readsStdin(true, false)
			b.dynamic("parallel runs commands it reads")
			return
		}
		for _, in := range inputs {
			b.shellString(in, "parallel", true)
		}
		return
	}
	repl := "{}"
	if v, ok := b.p.val("I", "replace"); ok && v.val != "" {
		repl = v.val
	}
	hasRepl := false
	for _, f := range tmpl {
		hasRepl = hasRepl || strings.Contains(f.val, repl)
	}
	known := sep >= 0 && !fromFiles && len(inputs) <= 64
	for _, in := range inputs {
		known = known && !in.dyn
	}
	if !known {
		r := ""
		if hasRepl {
			r = repl
		}
		b.nestedArgv(stdinArgs(tmpl, r, "parallel input as command name"), "parallel", nil)
		return
	}
	for _, in := range inputs {
		sub := slices.Clone(tmpl)
		if hasRepl {
			for i := range sub {
				if !sub[i].dyn {
					sub[i].val = strings.ReplaceAll(sub[i].val, repl, in.val)
				}
			}
		} else {
			sub = append(sub, in)
		}
		if len(sub) == 1 || len(tmpl) == 1 && strings.ContainsAny(tmpl[0].val, " ;|&") {
			b.shellString(joinFields(sub), "parallel", true)
		} else {
			b.nestedArgv(sub, "parallel", nil)
		}
	}
}

var watchSpec = spec("+ n: d:: g x t b e c p q: w r --interval= --differences? --chgexit --exec --no-title --beep --errexit --color --precise --equexit= --no-wrap --no-rerun")

func (b *build) watch() {
	b.parse(watchSpec)
	rest := b.args[b.p.end:]
	if len(rest) == 0 {
		return
	}
	if b.p.has("x", "exec") {
		b.nestedArgv(rest, "watch", nil)
		return
	}
	b.joinedShell(rest, "watch")
}

// joinedShell analyses words that a program joins with spaces and hands to
// sh -c (watch, ssh). With a dynamic word the join is unknown: the words
// are analysed as a command instead, and the command is dynamic.
func (b *build) joinedShell(fs []field, via string) {
	for _, f := range fs {
		if f.dyn {
			b.dynamic(via + " of a non-literal")
			b.nestedArgv(fs, via, nil)
			return
		}
	}
	b.shellString(joinFields(fs), via, true)
}

// --- remote shells and copies ---

func (b *build) sshOptions() {
	for _, v := range b.p.all("o") {
		key, val := splitSSHOption(v.val)
		switch strings.ToLower(key) {
		case "proxycommand", "localcommand", "knownhostscommand", "remotecommand":
			b.mark(MarkExecFlag, "ssh -o "+key)
			if v.dyn {
				b.dynamic("ssh -o " + key + " of a non-literal")
				continue
			}
			if strings.ToLower(key) != "remotecommand" && val != "" && val != "none" {
				b.lenientString(field{val: val}, "ssh -o "+key)
			}
		}
	}
}

func splitSSHOption(s string) (string, string) {
	i := strings.IndexAny(s, "= \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], "= \t")
}

func (b *build) ssh() {
	b.parse(specs["ssh"])
	b.optPaths(false, "i", "F")
	b.optPaths(true, "E")
	b.sshOptions()
	if b.p.end+1 >= len(b.args) {
		return
	}
	rest := b.args[b.p.end+1:]
	b.mark(MarkExecFlag, "ssh command")
	for _, f := range rest {
		if f.dyn {
			b.dynamic("ssh of a non-literal")
			b.nestedArgv(rest, "ssh", func(inv *invocation) { inv.cwd = "" })
			return
		}
	}
	src := joinFields(rest).val
	b.later = append(b.later, func() {
		ns := b.child()
		ns.cwd = "" // the remote directory is unknown
		b.a.lenient(src, ns, "ssh")
	})
}

// localPaths records the operands that name local files; the last one is
// written when last is set (scp, rsync destinations).
func (b *build) localPaths(last bool) {
	ops := b.p.operands
	for k, i := range ops {
		f := b.args[i]
		if !f.dyn && (isRemoteSpec(f.val) || isURL(f.val)) {
			continue
		}
		b.addPath(f, last && k == len(ops)-1 && len(ops) > 1)
	}
}

func (b *build) scp() {
	b.parse(specs["scp"])
	b.optPaths(false, "i", "F")
	b.sshOptions()
	if v, ok := b.p.val("S"); ok {
		b.mark(MarkExecFlag, "scp -S")
		b.lenientString(v, "scp -S")
	}
	b.localPaths(true)
}

func (b *build) sftp() {
	b.parse(specs["sftp"])
	b.optPaths(false, "i", "F", "b")
	b.sshOptions()
	for _, o := range []string{"S", "D"} {
		if v, ok := b.p.val(o); ok {
			b.mark(MarkExecFlag, "sftp -"+o)
			b.lenientString(v, "sftp -"+o)
		}
	}
}

func (b *build) rsync() {
	b.parse(specs["rsync"])
	if v, ok := b.p.val("e", "rsh"); ok {
		b.mark(MarkExecFlag, "rsync -e")
		b.lenientString(v, "rsync -e")
	}
	if _, ok := b.p.val("rsync-path"); ok {
		b.mark(MarkExecFlag, "rsync --rsync-path")
	}
	b.optPaths(false, "exclude-from", "include-from", "files-from", "password-file")
	b.optPaths(true, "log-file", "write-batch", "only-write-batch")
	b.localPaths(true)
}

// --- git ---

var gitGlobal = spec("+ C: c: --git-dir= --work-tree= --namespace= --exec-path? --config-env= --super-prefix= --list-cmds= p P " +
	"--paginate --no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --version --help")

var gitSub = map[string]*optSpec{
	"commit":        spec("m: F: C: c: t: S:: --message= --file= --reuse-message= --reedit-message= --template= --author= --date= --fixup= --squash= --cleanup= --trailer= --pathspec-from-file= --gpg-sign?"),
	"checkout":      spec("b: B: --orphan= --conflict= --pathspec-from-file="),
	"switch":        spec("c: C: --create= --force-create= --orphan= --conflict="),
	"clone":         spec("b: o: c: j: u: --branch= --origin= --config= --depth= --reference= --reference-if-able= --template= --upload-pack= --separate-git-dir= --shallow-since= --shallow-exclude= --jobs= --filter= --server-option= --bundle-uri= --ref-format= --revision="),
	"fetch":         spec("j: o: --upload-pack= --depth= --deepen= --shallow-since= --shallow-exclude= --refmap= --server-option= --jobs= --negotiation-tip= --filter= --recurse-submodules?"),
	"pull":          spec("j: o: s: X: --upload-pack= --depth= --deepen= --shallow-since= --shallow-exclude= --server-option= --jobs= --strategy= --strategy-option= --recurse-submodules?"),
	"push":          spec("o: --receive-pack= --exec= --repo= --push-option= --signed? --force-with-lease? --recurse-submodules="),
	"ls-remote":     spec("--upload-pack= --sort= o: --server-option="),
	"archive":       spec("o: --output= --format= --prefix= --remote= --exec= --add-file= --add-virtual-file="),
	"rebase":        spec("x: s: X: S:: --exec= --onto= --strategy= --strategy-option= --gpg-sign?"),
	"stash":         spec("m: --message= --pathspec-from-file="),
	"tag":           spec("m: F: u: --message= --file= --local-user= --cleanup= --sort= --format= --contains= --points-at="),
	"config":        spec("f: --file= --blob= --type= --default= --comment= --value="),
	"grep":          spec("e: f: m: A: B: C: O:: --max-depth= --max-count= --open-files-in-pager?"),
	"log":           spec("n: L: --max-count= --skip= --since= --until= --after= --before= --author= --committer= --grep= --format? --pretty? --date= --decorate?"),
	"show":          spec("--format? --pretty? --date="),
	"diff":          spec("U: --unified= --diff-filter= --stat? --color? --word-diff? --output="),
	"reset":         spec("--pathspec-from-file="),
	"restore":       spec("s: --source= --pathspec-from-file="),
	"add":           spec("--chmod= --pathspec-from-file="),
	"rm":            spec("--pathspec-from-file="),
	"apply":         spec("p: C: --directory= --exclude= --include= --build-fake-ancestor= --whitespace="),
	"am":            spec("p: C: S:: --directory= --exclude= --include= --whitespace= --patch-format="),
	"difftool":      spec("x: t: --extcmd= --tool="),
	"mergetool":     spec("t: --tool="),
	"submodule":     spec("+ q --quiet --cached"),
	"bisect":        spec("+"),
	"worktree":      spec("b: B: --reason="),
	"branch":        spec("u: t: --set-upstream-to= --track? --format= --sort= --contains= --merged? --no-merged? --points-at="),
	"remote":        spec("t: m: --mirror?"),
	"filter-branch": spec("d: --env-filter= --tree-filter= --index-filter= --parent-filter= --msg-filter= --commit-filter= --tag-name-filter= --subdirectory-filter= --prune-empty --original= --state-branch= --setup="),
}

// gitCommandKeys hold a command (or program) git runs; gitExecKeys only
// make git run something else (hooks, config files, transports).
var gitCommandKeys = set("core.sshcommand core.pager core.editor core.fsmonitor core.askpass core.gitproxy credential.helper sequence.editor diff.external gpg.program uploadpack.packobjectshook interactive.difffilter core.alternaterefscommand")
var gitExecKeys = set("core.hookspath protocol.allow protocol.ext.allow include.path init.templatedir web.browser")
var reGitKey = lazyRegexp(`^(credential\..+\.helper|pager\..+|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+\.(clean|smudge|process)|gpg\..+\.program|browser\..+\.cmd|man\..+\.cmd|difftool\..+\.cmd|mergetool\..+\.cmd|remote\..+\.(uploadpack|receivepack|proxy)|includeif\..+\.path|protocol\..+\.allow|url\..+\.insteadof)$`)

// gitConfig checks one configuration assignment for programs git would run.
func (b *build) gitConfig(key string, val field, hasVal bool, how string) {
	k := strings.ToLower(key)
	switch {
	case strings.HasPrefix(k, "alias."):
		if hasVal && (val.dyn || strings.HasPrefix(val.val, "!")) {
			b.mark(MarkExecFlag, how+" "+key)
			if val.dyn {
				b.dynamic(how + " " + key + " of a non-literal")
				return
			}
			b.lenientString(field{val: strings.TrimPrefix(val.val, "!")}, "git alias")
		}
	case gitCommandKeys[k] || reGitKey().MatchString(k) && !strings.HasPrefix(k, "url.") && !strings.HasSuffix(k, ".allow") && !strings.HasSuffix(k, ".path"):
		b.mark(MarkExecFlag, how+" "+key)
		if !hasVal {
			return
		}
		if val.dyn {
			b.dynamic(how + " " + key + " of a non-literal")
			return
		}
		v := val.val
		if k == "credential.helper" || strings.HasSuffix(k, ".helper") {
			if !strings.HasPrefix(v, "!") && !strings.Contains(v, "/") {
				return // a helper name: git credential-NAME
			}
		}
		b.lenientString(field{val: strings.TrimPrefix(v, "!")}, "git "+key)
	case gitExecKeys[k] || reGitKey().MatchString(k):
		b.mark(MarkExecFlag, how+" "+key)
	}
}

func (b *build) git() {
	g := parseOpts(b.args, 1, gitGlobal)
	b.cmd.Opts = append(b.cmd.Opts, g.opts...)
	for _, v := range g.all("C") {
		if v.dyn {
			b.dynamic("path from expansion in git")
			b.cwd = ""
			continue
		}
		if b.cwd != "" || filepath.IsAbs(v.val) {
			b.cwd = resolve(v.val, b.cwd)
			b.addResolved(b.cwd, false)
		}
	}
	for _, v := range g.all("c") {
		key, val, ok := strings.Cut(v.val, "=")
		if v.dyn {
			b.mark(MarkExecFlag, "git -c")
			b.dynamic("git -c of a non-literal")
			continue
		}
		b.gitConfig(key, field{val: val}, ok, "git -c")
	}
	for _, v := range g.all("config-env") {
		key, _, _ := strings.Cut(v.val, "=")
		b.gitConfig(key, field{dyn: true}, false, "git --config-env")
	}
	if g.has("exec-path") {
		if _, ok := g.val("exec-path"); ok {
			b.mark(MarkExecFlag, "git --exec-path")
		}
	}
	b.optPathsOf(g, false, "git-dir", "work-tree")
	if len(g.operands) == 0 {
		return
	}
	subF := b.args[g.operands[0]]
	sub := subF.val
	b.cmd.Operands = append(b.cmd.Operands, sub)
	if subF.dyn {
		b.dynamic("git subcommand from expansion")
		return
	}
	p := parseOpts(b.args, g.operands[0]+1, gitSub[sub])
	b.p = p
	b.takeParsed()
	ops := p.operands
	isPathSub := sub == "add" || sub == "rm" || sub == "mv"
	for k, i := range ops {
		f := b.args[i]
		after := p.afterDashDash >= 0 && k >= p.afterDashDash
		if f.dyn {
			if after || isPathSub {
				b.path(f)
			}
			continue
		}
		if strings.HasPrefix(f.val, "ext::") {
			b.mark(MarkExecFlag, "git ext::")
			b.lenientString(field{val: strings.TrimPrefix(f.val, "ext::")}, "git ext::")
			continue
		}
		if isURL(f.val) || (!after && isRemoteSpec(f.val)) {
			continue
		}
		if after || isPathSub || strings.Contains(f.val, "/") || strings.HasPrefix(f.val, ".") {
			b.path(f)
		}
	}
	b.optPathsOf(p, false, "F", "file", "pathspec-from-file")
	b.optPathsOf(p, true, "output")
	if sub == "archive" {
		b.optPathsOf(p, true, "o")
	}
	if sub == "config" && len(ops) > 0 {
		key := b.args[ops[0]]
		val, has := field{}, false
		if len(ops) > 1 {
			val, has = b.args[ops[1]], true
		}
		if !key.dyn {
			b.gitConfig(key.val, val, has, "git config")
		}
	}
	for _, o := range []string{"upload-pack", "receive-pack", "exec"} {
		if v, ok := p.val(o); ok {
			b.mark(MarkExecFlag, "git --"+o)
			b.lenientString(v, "git --"+o)
		}
	}
	if sub == "clone" {
		if v, ok := p.val("u"); ok {
			b.mark(MarkExecFlag, "git clone -u")
			b.lenientString(v, "git clone -u")
		}
		if n := len(ops); n >= 2 {
			b.write(b.args[ops[n-1]])
		}
	}
	switch sub {
	case "rebase":
		for _, v := range p.all("x", "exec") {
			b.mark(MarkExecFlag, "git rebase --exec")
			b.shellString(v, "git rebase --exec", true)
		}
	case "difftool":
		for _, v := range p.all("x", "extcmd") {
			b.mark(MarkExecFlag, "git difftool --extcmd")
			b.lenientString(v, "git difftool --extcmd")
		}
	case "filter-branch":
		for _, v := range p.vals {
			if strings.HasSuffix(v.name, "-filter") && v.name != "subdirectory-filter" {
				b.mark(MarkExecFlag, "git filter-branch --"+v.name)
				b.shellString(v.val, "git filter-branch --"+v.name, true)
			}
		}
	case "bisect":
		if len(ops) > 0 && b.args[ops[0]].val == "run" {
			b.mark(MarkExecFlag, "git bisect run")
			b.nestedArgv(b.args[ops[0]+1:], "git bisect run", nil)
		}
	case "submodule":
		if len(ops) > 0 && b.args[ops[0]].val == "foreach" {
			rest := b.args[ops[0]+1:]
			for len(rest) > 0 && !rest[0].dyn && strings.HasPrefix(rest[0].val, "-") {
				rest = rest[1:]
			}
			b.mark(MarkExecFlag, "git submodule foreach")
			if len(rest) > 0 {
				b.joinedShell(rest, "git submodule foreach")
			}
		}
	}
}

func (b *build) optPathsOf(p parsed, write bool, names ...string) {
	for _, v := range p.all(names...) {
		b.addPath(v, write)
	}
}

// --- archives ---

func (b *build) tar() {
	args := b.args
	sp := specs["tar"].load()
	// Old-style keys: `tar xzf a.tar` is `tar -x -z -f a.tar`.
	if len(args) > 1 && !args[1].dyn && args[1].val != "" && args[1].val[0] != '-' && isLetters(args[1].val) {
		expanded := []field{args[0]}
		next := 2
		for _, c := range args[1].val {
			expanded = append(expanded, field{val: "-" + string(c)})
			if c < 128 && sp.short[c] == argRequired && next < len(args) {
				expanded = append(expanded, args[next])
				next++
			}
		}
		args = append(expanded, args[next:]...)
		b.args = args
	}
	b.parse(sp)
	p := &b.p
	create := p.has("c", "create", "r", "append", "u", "update", "A", "catenate", "concatenate")
	extract := p.has("x", "extract", "get")
	if v, ok := p.val("f", "file"); ok {
		b.addPath(v, create)
	}
	dest := field{val: "."}
	if v, ok := p.val("C", "directory"); ok {
		dest = v
	}
	b.optPaths(false, "T", "files-from", "X", "exclude-from")
	b.optPaths(true, "g", "listed-incremental", "index-file", "volno-file")
	base := b.cwd
	if !dest.dyn {
		base = resolve(dest.val, b.cwd)
	}
	if extract {
		b.addPath(dest, true)
		for _, i := range p.operands {
			f := args[i]
			v := f.val
			if f.dyn {
				v = f.path
				b.dynamic("path from expansion in tar")
			}
			b.addResolved(resolve(v, base), true)
		}
	} else {
		for _, i := range p.operands {
			f := args[i]
			v := f.val
			if f.dyn {
				v = f.path
				b.dynamic("path from expansion in tar")
			}
			if v != "" && v != "-" {
				b.addResolved(resolve(v, base), false)
			}
		}
	}
	for _, o := range []string{"to-command", "I", "use-compress-program", "rsh-command", "rmt-command", "F", "info-script", "new-volume-script"} {
		for _, v := range p.all(o) {
			b.mark(MarkExecFlag, "tar "+dashed(o))
			b.lenientString(v, "tar "+dashed(o))
		}
	}
	for _, v := range p.all("checkpoint-action") {
		if cmd, ok := strings.CutPrefix(v.val, "exec="); ok || v.dyn {
			b.mark(MarkExecFlag, "tar --checkpoint-action")
			b.lenientString(field{val: cmd, dyn: v.dyn, inner: v.inner}, "tar --checkpoint-action")
		}
	}
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func (b *build) zip() {
	args := slices.Clone(b.args)
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			continue
		}
		if f.val == "-TT" || f.val == "--unzip-command" {
			b.mark(MarkExecFlag, "zip "+f.val)
			if i+1 < len(args) {
				b.lenientString(args[i+1], "zip "+f.val)
				args = slices.Delete(args, i+1, i+2)
			}
			continue
		}
		if v, ok := strings.CutPrefix(f.val, "--unzip-command="); ok {
			b.mark(MarkExecFlag, "zip --unzip-command")
			b.lenientString(field{val: v}, "zip --unzip-command")
		}
	}
	b.args = args
	b.parse(specs["zip"])
	if f, ok := b.operand(0); ok {
		b.write(f)
	}
	b.operandPaths(1, false)
	b.optPaths(true, "O", "output-file")
}

func (b *build) unzip() {
	b.parse(specs["unzip"])
	if f, ok := b.operand(0); ok {
		b.path(f)
	}
	if v, ok := b.p.val("d"); ok {
		b.write(v)
	} else if !b.p.has("l", "t", "v", "p", "Z") {
		b.addResolved(resolve(".", b.cwd), true)
	}
}

// --- text tools ---

func (b *build) sort() {
	b.parse(specs["sort"])
	b.optPaths(true, "o", "output")
	b.optPaths(false, "T", "temporary-directory", "files0-from", "random-source")
	if v, ok := b.p.val("compress-program"); ok {
		b.mark(MarkExecFlag, "sort --compress-program")
		b.lenientString(v, "sort --compress-program")
	}
	b.operandPaths(0, false)
}

func (b *build) tee() {
	b.parse(specs["tee"])
	b.operandPaths(0, true)
}

func (b *build) grep() {
	sp := specs[b.name]
	if sp == nil {
		sp = specs["grep"]
	}
	b.parse(sp)
	b.optPaths(false, "f", "file", "exclude-from", "ignore-file")
	k := 1
	if b.p.has("e", "regexp", "f", "file") || b.name == "rg" && b.p.has("files", "type-list") {
		k = 0
	}
	if v, ok := b.p.val("pre"); ok && b.name == "rg" {
		b.mark(MarkExecFlag, "rg --pre")
		b.lenientString(v, "rg --pre")
	}
	b.operandPaths(k, false)
	if len(b.p.operands) <= k && (b.name == "rg" || b.p.has("r", "R", "recursive", "dereference-recursive")) {
		b.addResolved(resolve(".", b.cwd), false)
	}
}

func (b *build) sed() {
	b.parse(specs["sed"])
	scripts := b.p.all("e", "expression")
	files := b.p.all("f", "file")
	for _, f := range files {
		b.path(f)
	}
	k := 0
	if len(scripts) == 0 && len(files) == 0 {
		if f, ok := b.operand(0); ok {
			scripts = append(scripts, f)
			k = 1
		}
	}
	inPlace := b.p.has("i", "in-place")
	b.operandPaths(k, inPlace)
	for _, s := range scripts {
		if s.dyn {
			b.dynamic("sed script from expansion")
			continue
		}
		b.sedScript(s.val)
	}
}

func (b *build) awk() {
	b.parse(specs["awk"])
	progs := b.p.all("e", "source")
	for _, f := range b.p.all("f", "file", "E", "exec") {
		b.script(f)
	}
	b.optPaths(false, "i", "include", "l", "load")
	k := 0
	if len(progs) == 0 && len(b.p.all("f", "file", "E", "exec")) == 0 {
		if f, ok := b.operand(0); ok {
			progs = append(progs, f)
			k = 1
		}
	}
	for ; k < len(b.p.operands); k++ {
		f := b.args[b.p.operands[k]]
		if name, _, ok := strings.Cut(f.val, "="); ok && !f.dyn && validName(name) {
			continue // a variable assignment, not a file
		}
		b.path(f)
	}
	for _, p := range progs {
		if p.dyn {
			b.dynamic("awk program from expansion")
			continue
		}
		b.awkProgram(p.val)
	}
}

func (b *build) jq() {
	args := b.args
	filterSeen := b.p.has("f")
	rawArgs := false
	for i := 1; i < len(args); i++ {
		f := args[i]
		v := f.val
		if !f.dyn && !rawArgs && strings.HasPrefix(v, "-") && len(v) > 1 {
			switch v {
			case "--arg", "--argjson":
				b.cmd.Opts = append(b.cmd.Opts, v[2:])
				i += 2
				continue
			case "--slurpfile", "--rawfile":
				b.cmd.Opts = append(b.cmd.Opts, v[2:])
				if i+2 < len(args) {
					b.path(args[i+2])
				}
				i += 2
				continue
			case "-f", "--from-file":
				b.cmd.Opts = append(b.cmd.Opts, strings.TrimLeft(v, "-"))
				if i+1 < len(args) {
					b.script(args[i+1])
				}
				filterSeen = true
				i++
				continue
			case "--args", "--jsonargs":
				rawArgs = true
			case "--":
				rawArgs = true
				continue
			}
			if strings.HasPrefix(v, "--") {
				b.cmd.Opts = append(b.cmd.Opts, v[2:])
			} else {
				for _, r := range v[1:] {
					b.cmd.Opts = append(b.cmd.Opts, string(r))
				}
			}
			continue
		}
		b.cmd.Operands = append(b.cmd.Operands, v)
		b.p.operands = append(b.p.operands, i)
		if !filterSeen {
			filterSeen = true
			if f.dyn || reJqEnv().MatchString(v) {
				b.mark(MarkReadsEnv, "jq")
			}
			continue
		}
		if !rawArgs {
			b.path(f)
		}
	}
}

var reJqEnv = lazyRegexp(`\$ENV|\benv\b|\$__loc__|input_filename|\$__prog_args`)

// --- permissions, devices, processes ---

func (b *build) chmod() {
	args := b.args
	var mode *field
	if b.name == "chmod" {
		for i := 1; i < len(args); i++ {
			if f := args[i]; !f.dyn && isDashMode(f.val) {
				m := f
				mode = &m
				args = slices.Delete(slices.Clone(args), i, i+1)
				break
			}
		}
	}
	b.args = args
	b.parse(specs[b.name])
	k := 1
	if mode != nil {
		b.cmd.Operands = append([]string{mode.val}, b.cmd.Operands...)
		k = 0
	}
	if _, ok := b.p.val("reference"); ok {
		b.optPaths(false, "reference")
		k = 0
	}
	b.operandPaths(k, true)
}

// isDashMode reports a chmod mode that looks like an option: -x, -rwx.
func isDashMode(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !strings.ContainsRune("rwxXst", rune(s[i])) {
			return false
		}
	}
	return true
}

func (b *build) dd() {
	b.parse(nil)
	for _, i := range b.p.operands {
		f := b.args[i]
		k, v, ok := strings.Cut(f.val, "=")
		if !ok {
			continue
		}
		pf := field{val: v, dyn: f.dyn}
		if f.dyn {
			_, pf.path, _ = strings.Cut(f.path, "=")
		}
		switch k {
		case "if":
			b.path(pf)
		case "of":
			b.write(pf)
		}
	}
}

func (b *build) kill() {
	args := b.args
	i, signal := 1, false
	for i < len(args) && !args[i].dyn {
		v := args[i].val
		if v == "--" {
			i++
			break
		}
		if len(v) < 2 || v[0] != '-' || signal && isDigits(v[1:]) {
			break
		}
		switch {
		case v == "-s" || v == "-n" || v == "--signal" || v == "--queue":
			b.cmd.Opts = append(b.cmd.Opts, strings.TrimLeft(v, "-"))
			i += 2
			signal = true
			continue
		case strings.HasPrefix(v, "--"):
			name, _, _ := strings.Cut(v[2:], "=")
			b.cmd.Opts = append(b.cmd.Opts, name)
			signal = signal || name == "signal"
		default:
			b.cmd.Opts = append(b.cmd.Opts, v[1:])
			signal = true
		}
		i++
	}
	for ; i < len(args); i++ {
		b.cmd.Operands = append(b.cmd.Operands, args[i].val)
		b.p.operands = append(b.p.operands, i)
	}
}

func (b *build) copyLike() {
	b.parse(specs[b.name])
	mv := b.name == "mv"
	if b.name == "install" && b.p.has("d", "directory") {
		b.operandPaths(0, true)
		return
	}
	n := len(b.p.operands)
	if t, ok := b.p.val("t", "target-directory"); ok {
		b.operandPaths(0, mv)
		b.write(t)
		return
	}
	for k, i := range b.p.operands {
		b.addPath(b.args[i], mv || k == n-1 && n > 1)
	}
	if n == 1 && b.name == "ln" {
		f := b.args[b.p.operands[0]]
		if !f.dyn {
			b.addResolved(resolve(filepath.Base(f.val), b.cwd), true)
		}
	}
}

// --- network clients ---

// fileURLs records file:// operands of a downloader: local reads.
func (b *build) fileURLs() {
	for _, i := range b.p.operands {
		f := b.args[i]
		if rest, ok := cutPrefixFold(f.val, "file://"); ok && !f.dyn {
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				b.path(field{val: rest[j:]})
			}
		}
	}
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func (b *build) curl() {
	b.parse(specs["curl"])
	b.fileURLs()
	b.optPaths(true, "o", "output", "c", "cookie-jar", "D", "dump-header", "trace", "trace-ascii", "stderr", "etag-save", "output-dir")
	b.optPaths(false, "K", "config", "T", "upload-file", "netrc-file", "cacert", "capath", "cert", "key", "E", "etag-compare", "unix-socket")
	for _, v := range b.p.vals {
		if v.val.dyn {
			continue
		}
		switch v.name {
		case "d", "data", "data-binary", "data-ascii", "json":
			if file, ok := strings.CutPrefix(v.val.val, "@"); ok {
				b.path(field{val: file})
			}
		case "data-urlencode":
			if i := strings.IndexByte(v.val.val, '@'); i >= 0 {
				b.path(field{val: v.val.val[i+1:]})
			}
		}
	}
	for _, v := range b.p.all("F", "form") {
		if _, val, ok := strings.Cut(v.val, "="); ok && !v.dyn && (strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<")) {
			file, _, _ := strings.Cut(val[1:], ";")
			b.path(field{val: file})
		}
	}
	for _, v := range b.p.all("b", "cookie") {
		if !v.dyn && !strings.Contains(v.val, "=") {
			b.path(v)
		}
	}
	if b.p.has("O", "remote-name", "remote-name-all") {
		for _, i := range b.p.operands {
			if name := urlBase(b.args[i].val); name != "" && !b.args[i].dyn {
				b.addResolved(resolve(name, b.cwd), true)
			}
		}
	}
}

// urlBase is the file name a downloader saves a URL as.
func urlBase(u string) string {
	u, _, _ = strings.Cut(u, "#")
	u, _, _ = strings.Cut(u, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	i := strings.IndexByte(u, '/')
	if i < 0 {
		return ""
	}
	base := u[strings.LastIndexByte(u, '/')+1:]
	if base == "." || base == ".." {
		return ""
	}
	return base
}

func (b *build) wget() {
	b.parse(specs["wget"])
	b.fileURLs()
	out, hasOut := b.p.val("O", "output-document")
	if hasOut {
		b.write(out)
	}
	b.optPaths(true, "o", "output-file", "a", "append-output", "save-cookies", "warc-file", "rejected-log")
	b.optPaths(false, "i", "input-file", "post-file", "body-file", "load-cookies", "config", "ca-certificate", "certificate", "private-key", "ca-directory")
	if v, ok := b.p.val("use-askpass"); ok {
		b.mark(MarkExecFlag, "wget --use-askpass")
		b.lenientString(v, "wget --use-askpass")
	}
	if hasOut {
		return
	}
	dir := field{val: "."}
	if v, ok := b.p.val("P", "directory-prefix"); ok {
		dir = v
		b.write(dir)
	}
	if dir.dyn {
		return
	}
	base := resolve(dir.val, b.cwd)
	for _, i := range b.p.operands {
		f := b.args[i]
		if f.dyn {
			continue
		}
		name := urlBase(f.val)
		if name == "" {
			name = "index.html"
		}
		b.addResolved(resolve(name, base), true)
	}
}

var (
	juliaSpec  = spec("+ e: E: L: J: C: t: p: O: g: --eval= --print= --load= --sysimage= --project? --threads= --procs= --machine-file= --startup-file= --history-file= --depwarn= --inline= --check-bounds= --math-mode= --code-coverage? --track-allocation?")
	expectSpec = spec("+ c: f: b: d i n N D:")
)

func (b *build) julia() { b.interp(juliaSpec, []string{"e", "E", "eval", "print"}, nil) }

func (b *build) expect() { b.interp(expectSpec, []string{"c"}, []string{"f", "b"}) }

// gdb: -ex and -x run debugger commands (! and shell run programs), and
// --args makes the rest the program to run.
func (b *build) gdb() {
	args := b.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "-") {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			b.path(f)
			continue
		}
		name, val, hasEq := strings.Cut(strings.TrimLeft(f.val, "-"), "=")
		name = gdbOption(name)
		b.cmd.Opts = append(b.cmd.Opts, name)
		switch name {
		case "args":
			b.mark(MarkExecFlag, "gdb --args")
			b.nestedArgv(args[i+1:], "gdb --args", nil)
			return
		case "ex", "eval-command", "iex", "init-eval-command", "eiex", "early-init-eval-command":
			v := field{val: val}
			if !hasEq && i+1 < len(args) {
				i++
				v = args[i]
			}
			b.mark(MarkExecFlag, "gdb -ex")
			if v.dyn {
				b.dynamic("gdb -ex of a non-literal")
				continue
			}
			b.gdbCommand(v.val)
		case "x", "command", "ix", "init-command", "eix", "early-init-command":
			if !hasEq && i+1 < len(args) {
				i++
				b.mark(MarkExecFlag, "gdb -x")
				b.script(args[i])
			}
		case "p", "pid", "cd", "d", "directory", "s", "symbols", "e", "exec", "se", "c", "core", "b", "baud", "l", "tty", "t", "D", "data-directory", "i", "interpreter":
			if !hasEq && i+1 < len(args) {
				i++
			}
		}
	}
	if !slices.Contains(b.cmd.Opts, "batch") && !slices.Contains(b.cmd.Opts, "batch-silent") {
		// gdb reads commands from a pipe
		b.programOnStdin(false, func(text string) {
			for _, line := range strings.Split(text, "\n") {
				b.gdbCommand(line)
			}
		})
	}
}

// gdbLong are gdb's options. gdb reads them with getopt_long_only: one
// dash or two, and any unique prefix (-eval-comm is -eval-command).
var gdbLong = strings.Fields("tui dbx readnow readnever r q quiet silent nh nx n batch-silent batch version fullname f nw nowindows w windows " +
	"statistics configuration help h write return-child-result args se symbols s e exec c core pid p x command eval-command ex " +
	"init-command init-eval-command ix iex early-init-command eix early-init-eval-command eiex directory d data-directory D cd " +
	"tty t i interpreter b baud l")

// gdbOption resolves an option name as getopt_long_only does.
func gdbOption(name string) string {
	return longOption(name, gdbLong, "eval-command", "init-eval-command", "early-init-eval-command", "command", "init-command", "early-init-command", "args")
}

// longOption resolves a long option given as a unique prefix of one of
// names. An ambiguous prefix, which the program rejects, is taken as the
// first of runs (the options that run code) among its matches, if any.
func longOption(name string, names []string, runs ...string) string {
	var match []string
	for _, n := range names {
		if n == name {
			return n
		}
		if strings.HasPrefix(n, name) {
			match = append(match, n)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	for _, r := range runs {
		if slices.Contains(match, r) {
			return r
		}
	}
	return name
}

// gdbCommand looks at a gdb command for the shell commands it runs:
// shell (or an abbreviation, or !) and pipe (|); python and guile run
// code of their own.
func (b *build) gdbCommand(c string) {
	c = strings.TrimSpace(c)
	word, rest, _ := strings.Cut(c, " ")
	switch {
	case strings.HasPrefix(c, "!"):
		b.lenientString(field{val: c[1:]}, "gdb -ex !")
	case len(word) >= 3 && strings.HasPrefix("shell", word):
		b.lenientString(field{val: rest}, "gdb -ex shell")
	case strings.HasPrefix(c, "|") || word == "pipe":
		s := strings.TrimPrefix(strings.TrimPrefix(c, "pipe"), "|")
		if strings.HasPrefix(strings.TrimSpace(s), "-d") {
			b.dynamic("gdb pipe with a delimiter")
			return
		}
		if _, sh, ok := strings.Cut(s, "|"); ok {
			b.lenientString(field{val: sh}, "gdb -ex pipe")
		}
	case word == "python" || word == "py" || word == "pi" || word == "python-interactive" || word == "guile" || word == "gu":
		b.mark(MarkInlineCode, "gdb "+word)
	}
}

var netcatSpec = spec("e: c: p: s: w: i: q: x: X: P: I: O: T: V: M: m: --exec= --sh-exec= --lua-exec= --proxy= --proxy-type= --source= --wait= --output=")

// netcat: -e/-c run a program with the connection as its standard input
// and output.
func (b *build) netcat() {
	b.parse(netcatSpec)
	for _, o := range []string{"e", "c", "exec", "sh-exec", "lua-exec"} {
		for _, v := range b.p.all(o) {
			b.mark(MarkExecFlag, b.name+" "+dashed(o))
			b.lenientString(v, b.name+" "+dashed(o))
		}
	}
	b.optPaths(true, "o", "output")
}

// socat ADDRESS ADDRESS: EXEC: and SYSTEM: addresses run programs.
func (b *build) socat() {
	b.parse(nil)
	for _, i := range b.p.operands {
		f := b.args[i]
		kind, rest, _ := strings.Cut(f.val, ":")
		switch strings.ToUpper(kind) {
		case "EXEC", "SYSTEM":
			b.mark(MarkExecFlag, "socat "+strings.ToUpper(kind))
			cmd, _, _ := strings.Cut(rest, ",")
			b.lenientString(field{val: strings.Trim(cmd, `'"`), dyn: f.dyn}, "socat "+strings.ToUpper(kind))
		case "OPEN", "CREATE", "GOPEN", "FILE", "PIPE", "UNIX-CONNECT", "UNIX-CLIENT", "UNIX-SENDTO", "UNIX", "UNIX-LISTEN", "UNIX-RECV", "UNIX-RECVFROM":
			p, _, _ := strings.Cut(rest, ",")
			k := strings.ToUpper(kind)
			b.addPath(field{val: p, dyn: f.dyn, path: p}, k == "CREATE" || k == "UNIX-LISTEN" || k == "GOPEN" || k == "FILE")
		}
	}
}

var opensslValued = set("in out key inkey cert certfile CAfile CApath signkey keyout config pass passin passout k K iv S md cipher name subj days newkey engine kdf kdfopt pbkdf2 iter salt rand writerand extfile extensions reqexts section set_serial sigopt pkeyopt digest macopt mac")
var opensslWrites = set("out keyout writerand")
var opensslReads = set("in key inkey cert certfile CAfile signkey config extfile rand")

func (b *build) openssl() {
	args := b.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || len(f.val) < 2 || f.val[0] != '-' {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			continue
		}
		name := f.val[1:]
		b.cmd.Opts = append(b.cmd.Opts, name)
		if opensslValued[name] && i+1 < len(args) {
			i++
			switch {
			case opensslWrites[name]:
				b.write(args[i])
			case opensslReads[name]:
				b.path(args[i])
			}
		}
	}
}

// --- build tools and package runners ---

func (b *build) make() {
	b.parse(specs["make"])
	b.mark(MarkRunsProject, "make")
	for _, v := range b.p.all("C", "directory") {
		if !v.dyn && (b.cwd != "" || filepath.IsAbs(v.val)) {
			b.cwd = resolve(v.val, b.cwd)
			b.addResolved(b.cwd, false)
		}
	}
	b.optPaths(false, "f", "file", "makefile", "I", "include-dir")
	for _, i := range b.p.operands {
		f := b.args[i]
		if name, _, ok := strings.Cut(f.val, "="); ok && !f.dyn && validName(name) && dangerousEnv(name) {
			b.mark(MarkDangerousEnv, name)
		}
	}
}

var yarnBuiltins = set("add install remove upgrade up info init list ls why config cache global login logout publish version outdated audit bin create import licenses link unlink owner pack policies tag team workspace workspaces autoclean check generate-lock-entry help set plugin npm constraints dedupe explain patch rebuild search stage unplug")
var pnpmBuiltins = set("add install i remove rm uninstall update up upgrade list ls outdated why audit link unlink import rebuild prune publish pack store env init config setup server fetch patch patch-commit deploy licenses root bin help")

func (b *build) pkgRunner() {
	b.parse(specs[b.name])
	b.optPaths(false, "C", "prefix", "cwd", "dir")
	sub := ""
	if f, ok := b.operand(0); ok {
		sub = f.val
	}
	exec := false
	switch b.name {
	case "npx", "pnpx", "bunx":
		exec = true
		sub = ""
	case "npm":
		exec = npmRunners[sub]
	case "yarn":
		exec = sub != "" && !yarnBuiltins[sub] && !strings.HasPrefix(sub, "-")
	case "pnpm":
		exec = sub != "" && !pnpmBuiltins[sub] && !strings.HasPrefix(sub, "-")
	}
	if exec {
		detail := b.name
		if sub != "" {
			detail += " " + sub
		}
		b.mark(MarkRunsProject, detail)
	}
}

var goValued = set("o C p tags ldflags gcflags asmflags toolexec exec run bench count timeout cover coverpkg coverprofile cpuprofile memprofile mod modfile overlay pkgdir buildmode compiler gccgoflags installsuffix covermode benchtime blockprofile mutexprofile trace outputdir parallel shuffle skip fuzz fuzztime fuzzminimizetime list vet pgo")

func (b *build) goTool() {
	args := b.args
	i := 1
	sub := ""
	for ; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "-") || f.val == "-" {
			if sub == "" {
				sub = f.val
				b.cmd.Operands = append(b.cmd.Operands, f.val)
				continue
			}
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			if f.dyn || strings.HasPrefix(f.val, ".") || strings.HasPrefix(f.val, "/") || strings.HasSuffix(f.val, ".go") {
				b.path(f)
			}
			if sub == "run" && !strings.HasPrefix(f.val, "-") {
				// the rest are the program's own arguments
				for j := i + 1; j < len(args); j++ {
					b.cmd.Operands = append(b.cmd.Operands, args[j].val)
				}
				break
			}
			continue
		}
		if f.val == "--" {
			continue
		}
		name, val, hasEq := strings.Cut(strings.TrimLeft(f.val, "-"), "=")
		b.cmd.Opts = append(b.cmd.Opts, name)
		v := field{val: val}
		if !hasEq && goValued[name] && i+1 < len(args) {
			i++
			v = args[i]
		}
		switch name {
		case "o":
			b.write(v)
		case "C":
			if !v.dyn && (b.cwd != "" || filepath.IsAbs(v.val)) {
				b.cwd = resolve(v.val, b.cwd)
				b.addResolved(b.cwd, false)
			}
		case "toolexec", "exec":
			b.mark(MarkExecFlag, "go -"+name)
			b.lenientString(v, "go -"+name)
		case "modfile", "overlay", "coverprofile", "cpuprofile", "memprofile":
			b.addPath(v, name != "modfile" && name != "overlay")
		}
	}
	if sub == "run" || sub == "generate" {
		b.mark(MarkRunsProject, "go "+sub)
	}
}

func (b *build) cargo() {
	b.parse(specs["cargo"])
	b.optPaths(false, "manifest-path")
	if f, ok := b.operand(0); ok && (f.val == "run" || f.val == "r") {
		b.mark(MarkRunsProject, "cargo run")
	}
	for _, v := range b.p.all("C") {
		if !v.dyn && (b.cwd != "" || filepath.IsAbs(v.val)) {
			b.cwd = resolve(v.val, b.cwd)
			b.addResolved(b.cwd, false)
		}
	}
}

func (b *build) docker() {
	b.parse(specs[b.name])
	for _, v := range b.p.all("H", "host") {
		if p, ok := cutPrefixFold(v.val, "unix://"); ok && !v.dyn {
			b.path(field{val: p})
		}
	}
	b.optPaths(false, "config")
	ops := b.p.operands
	if len(ops) == 0 {
		return
	}
	k := 0
	sub := b.args[ops[0]].val
	if (sub == "container" || sub == "compose") && len(ops) > 1 {
		for k = 1; k < len(ops) && strings.HasPrefix(b.args[ops[k]].val, "-"); k++ {
		}
		if k < len(ops) {
			sub = b.args[ops[0]].val + " " + b.args[ops[k]].val
		}
	}
	short := sub[strings.LastIndexByte(sub, ' ')+1:]
	if short != "run" && short != "exec" && short != "create" {
		return
	}
	b.mark(MarkExecFlag, b.name+" "+sub)
	args := b.args[ops[0]+1:]
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "-") {
			if short != "exec" {
				break // the image: the rest runs inside the container
			}
			continue
		}
		name, val, hasEq := strings.Cut(strings.TrimLeft(f.val, "-"), "=")
		switch name {
		case "v", "volume", "mount":
			if !hasEq && i+1 < len(args) {
				i++
				val = args[i].val
			}
			src := val
			if name == "mount" {
				src = ""
				for _, kv := range strings.Split(val, ",") {
					if k, v, ok := strings.Cut(kv, "="); ok && (k == "source" || k == "src") {
						src = v
					}
				}
			} else {
				src, _, _ = strings.Cut(val, ":")
			}
			if strings.HasPrefix(src, "/") || strings.HasPrefix(src, ".") || strings.HasPrefix(src, "~") {
				if strings.HasPrefix(src, "~") && b.a.opts.Home != "" {
					src = b.a.opts.Home + src[1:]
				}
				b.addResolved(resolve(src, b.cwd), false)
			}
		case "privileged":
			b.mark(MarkPrivilege, b.name+" --privileged")
		}
	}
}

func (b *build) kubectl() {
	b.parse(specs["kubectl"])
	b.optPaths(false, "f", "filename", "kubeconfig")
	if f, ok := b.operand(0); ok {
		switch f.val {
		case "exec", "run", "debug", "attach":
			b.mark(MarkExecFlag, "kubectl "+f.val)
		}
	}
}

// --- pagers and editors ---

func (b *build) pager() {
	var plus []field
	rest := []field{b.args[0]}
	for _, f := range b.args[1:] {
		if !f.dyn && strings.HasPrefix(f.val, "+") {
			plus = append(plus, f)
			continue
		}
		rest = append(rest, f)
	}
	for _, f := range plus {
		b.cmd.Opts = append(b.cmd.Opts, f.val)
		if i := strings.IndexByte(f.val, '!'); i >= 0 {
			b.mark(MarkExecFlag, b.name+" +!")
			b.lenientString(field{val: f.val[i+1:]}, b.name+" +!")
		}
	}
	b.args = rest
	b.parse(specs[b.name])
	b.optPaths(true, "o", "O", "log-file", "LOG-FILE")
	b.optPaths(false, "k", "lesskey-file")
	b.operandPaths(0, false)
}

func (b *build) man() {
	b.parse(specs["man"])
	for _, o := range []string{"P", "pager", "H", "html"} {
		if v, ok := b.p.val(o); ok && (v.val != "" || v.dyn) {
			b.mark(MarkExecFlag, "man "+dashed(o))
			b.lenientString(v, "man "+dashed(o))
		}
	}
	b.optPaths(false, "C", "config-file", "M", "manpath")
	for _, i := range b.p.operands {
		f := b.args[i]
		if b.p.has("l", "local-file") || strings.Contains(f.val, "/") {
			b.path(f)
		}
	}
}

func (b *build) vim() {
	var cmds []field
	rest := []field{b.args[0]}
	for _, f := range b.args[1:] {
		if !f.dyn && strings.HasPrefix(f.val, "+") && len(f.val) > 1 {
			cmds = append(cmds, field{val: f.val[1:]})
			b.cmd.Opts = append(b.cmd.Opts, "+")
			continue
		}
		rest = append(rest, f)
	}
	b.args = rest
	b.parse(specs["vim"])
	cmds = append(cmds, b.p.all("c", "cmd")...)
	for _, c := range cmds {
		b.mark(MarkExecFlag, b.name+" -c")
		if c.dyn {
			b.dynamic(b.name + " -c of a non-literal")
			continue
		}
		if sh, ok := vimShell(c.val); ok {
			b.lenientString(field{val: sh}, b.name+" -c !")
		}
	}
	for _, v := range b.p.all("S") {
		b.mark(MarkExecFlag, b.name+" -S")
		b.script(v)
	}
	for _, v := range b.p.all("u", "U") {
		b.mark(MarkExecFlag, b.name+" -u")
		b.path(v)
	}
	if b.name == "ex" || b.p.has("e", "E") {
		// Ex mode reads its commands from standard input.
		b.programOnStdin(false, func(text string) {
			for _, line := range strings.Split(text, "\n") {
				if sh, ok := vimShell(line); ok {
					b.lenientString(field{val: sh}, b.name+" !")
				}
			}
		})
	} else if i := slices.IndexFunc(b.args, func(f field) bool { return !f.dyn && f.val == "-s" }); i > 0 && i+1 < len(b.args) {
		// -s FILE types the keys in FILE, : commands included.
		b.mark(MarkExecFlag, b.name+" -s")
		b.script(b.args[i+1])
	}
	b.operandPaths(0, true)
}

// vimShell finds the shell command an Ex command line runs: :!cmd,
// :{range}!filter, :r !cmd, :w !cmd, :silent !cmd, :terminal cmd, also
// after other commands joined with |.
func vimShell(line string) (string, bool) {
	for n := 0; n < 100; n++ {
		c := strings.TrimLeft(line, ": \t")
		c = strings.TrimLeft(c, "0123456789%.$,;'<>+-")
		if strings.HasPrefix(c, "!") {
			return c[1:], true
		}
		word := c
		if i := strings.IndexFunc(c, func(r rune) bool { return !(r >= 'a' && r <= 'z') }); i >= 0 {
			word = c[:i]
		}
		after := c[len(word):]
		rest := strings.TrimLeft(after, " \t")
		switch {
		case word == "r" || len(word) >= 2 && strings.HasPrefix("read", word):
			if strings.HasPrefix(rest, "!") {
				return rest[1:], true
			}
		case word == "w" || len(word) >= 2 && strings.HasPrefix("write", word):
			// :w !cmd pipes to cmd; :w! is a forced write.
			if len(rest) < len(after) && strings.HasPrefix(rest, "!") {
				return rest[1:], true
			}
		case len(word) >= 3 && strings.HasPrefix("silent", word):
			return vimShell(strings.TrimPrefix(after, "!"))
		case len(word) >= 3 && strings.HasPrefix("terminal", word):
			return rest, rest != ""
		}
		_, next, ok := strings.Cut(c, "|")
		if !ok {
			return "", false
		}
		line = next
	}
	// more commands than are followed: what is left, its bangs blanked,
	// is taken as shell text, so nothing hidden past them goes unseen
	return strings.ReplaceAll(line, "!", " "), true
}

// emacsLong are emacs's long options: a unique prefix of one stands for
// it (--ev is --eval). The one-dash spellings are not abbreviated.
var emacsLong = strings.Fields("funcall load insert kill dump-file seccomp directory eval execute no-splash find-file visit file no-desktop " +
	"debug-init user iconic icon-type quick no-blinking-cursor basic-display temacs init-directory script batch chdir daemon bg-daemon " +
	"fg-daemon no-init-file no-site-file no-site-lisp no-x-resources module-assertions display name title color")

// emacsOption resolves an option name: -eval as written, --ev as the
// long option it abbreviates.
func emacsOption(arg string) string {
	if !strings.HasPrefix(arg, "--") {
		return strings.TrimPrefix(arg, "-")
	}
	return longOption(arg[2:], emacsLong, "eval", "execute", "funcall", "load", "script")
}

func (b *build) emacs() {
	args := b.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "-") {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			b.write(f)
			continue
		}
		opt, _, hasEq := strings.Cut(f.val, "=")
		name := emacsOption(opt)
		b.cmd.Opts = append(b.cmd.Opts, name)
		switch name {
		case "eval", "execute", "f", "funcall", "e":
			b.mark(MarkInlineCode, "emacs "+dashed(name))
			if !hasEq {
				i++
			}
		case "l", "load", "script", "x", "scriptload":
			if !hasEq && i+1 < len(args) {
				i++
				b.script(args[i])
			}
		}
	}
}

// --- schedulers, builtins that change lookups, environment readers ---

func (b *build) at() {
	b.parse(specs[b.name])
	b.mark(MarkExecFlag, b.name)
	if v, ok := b.p.val("f", "file"); ok {
		b.script(v)
		return
	}
	if b.p.has("l", "r", "d", "c") {
		return
	}
	b.readsStdin(false, true)
}

func (b *build) crontab() {
	b.parse(specs["crontab"])
	if b.p.has("l", "r", "e") {
		return
	}
	b.mark(MarkExecFlag, "crontab")
	if f, ok := b.operand(0); ok && !(f.val == "-" && !f.dyn) {
		b.path(f)
		return
	}
	b.readsStdin(true, false)
}

func (b *build) hashCmd() {
	b.parse(hashSpec)
	if v, ok := b.p.val("p"); ok {
		b.mark(MarkExecFlag, "hash -p")
		b.path(v)
	}
}

func (b *build) enableCmd() {
	b.parse(enableSpec)
	if v, ok := b.p.val("f"); ok {
		b.mark(MarkExecFlag, "enable -f")
		b.path(v)
	}
}

func (b *build) readsEnv() {
	b.parse(specs[b.name])
	b.mark(MarkReadsEnv, b.name)
}

func (b *build) setCmd() {
	b.parse(nil)
	if len(b.args) == 1 {
		b.mark(MarkReadsEnv, "set")
	}
	for i := 1; i < len(b.args); i++ {
		f := b.args[i]
		if f.dyn {
			b.dynamic("set of a non-literal option")
			return
		}
		v := f.val
		if v == "-" || v == "--" || len(v) < 2 || v[0] != '-' && v[0] != '+' {
			return
		}
		for _, r := range v[1:] {
			switch {
			case r == 'H' && v[0] == '-':
				b.dynamic(reasonHistExpand)
			case r == 'o' && i+1 < len(b.args):
				i++
				if o := b.args[i]; o.dyn || o.val == "histexpand" && v[0] == '-' {
					b.dynamic(reasonHistExpand)
				}
			}
		}
	}
}

// reasonHistExpand: with history expansion on (set -H) and history kept
// (set -o history), a later line's !! or !-2:1 is replaced by earlier
// text, so what runs is not what is written: `echo rm -rf /` then
// `!!:1-$` runs rm.
const reasonHistExpand = "history expansion: later lines may run other commands"

// shopt -s -o histexpand is set -H.
func (b *build) shopt() {
	b.generic()
	on, o, hist, opts := false, false, false, true
	for _, f := range b.args[1:] {
		switch {
		case f.dyn:
			on, o, hist = true, true, true
		case opts && strings.HasPrefix(f.val, "-") && f.val != "--":
			on = on || strings.ContainsRune(f.val, 's')
			o = o || strings.ContainsRune(f.val, 'o')
		default:
			opts = false
			hist = hist || f.val == "histexpand"
		}
	}
	if on && o && hist {
		b.dynamic(reasonHistExpand)
	}
}

// fc runs commands again from the history (fc -s, or an edited fc); only
// fc -l lists them.
func (b *build) fc() {
	b.parse(fcSpec)
	if !b.p.has("l") {
		b.dynamic("fc runs commands from the history")
	}
}
