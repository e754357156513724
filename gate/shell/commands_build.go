package shell

import (
	"path/filepath"
	"strings"
)

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
