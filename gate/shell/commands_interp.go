package shell

import (
	"strings"
)

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
		switch pwshParam(key) {
		case "":
		case "command", "commandwithargs":
			b.mark(MarkInlineCode, b.name+" "+f.val)
			b.lenientString(joinFields(b.args[i+1:]), b.name+" -c")
			return
		case "encodedcommand":
			b.mark(MarkInlineCode, b.name+" "+f.val)
			if i+1 < len(b.args) && !b.args[i+1].dyn {
				if src, ok := decodePwsh(b.args[i+1].val); ok {
					b.lenientString(field{val: src}, b.name+" -EncodedCommand")
					return
				}
			}
			b.dynamic(b.name + " -EncodedCommand that does not decode")
			return
		case "file":
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

// pwshParams are PowerShell's parameters (7.4), the ones that run
// something first; pwshAliases are its short names that are not prefixes.
var (
	pwshParams = strings.Fields("command commandwithargs encodedcommand file configurationfile configurationname custompipename " +
		"executionpolicy help inputformat interactive login mta noexit nologo noninteractive noprofile noprofileloadtime " +
		"outputformat settingsfile sshservermode sta version windowstyle workingdirectory")
	pwshAliases = map[string]string{"cwa": "commandwithargs", "ec": "encodedcommand"}
)

// pwshParam resolves a parameter name (lower case, without its dash) as
// PowerShell does, a prefix of a name standing for it: -comm is -Command
// (see [abbrev]). It returns "" for a name it cannot resolve, and for a
// bare dash (standard input).
func pwshParam(key string) string {
	if key == "" {
		return ""
	}
	if full, ok := pwshAliases[key]; ok {
		return full
	}
	full, _ := abbrev(key, pwshParams, func(n string) bool {
		return n == "command" || n == "commandwithargs" || n == "encodedcommand" || n == "file"
	})
	return full
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
