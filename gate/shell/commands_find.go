package shell

import (
	"slices"
	"strings"
)

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

var watchSpec = spec("+ n: d:: g x t b e c p q: w r --interval= --differences? --chgexit --exec! --no-title --beep --errexit --color --precise --equexit= --no-wrap --no-rerun")

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
