package shell

import (
	"path/filepath"
	"slices"
	"strings"
)

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
