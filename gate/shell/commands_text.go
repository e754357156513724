package shell

import (
	"strings"
)

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
