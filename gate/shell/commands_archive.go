package shell

import (
	"slices"
	"strings"
)

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
