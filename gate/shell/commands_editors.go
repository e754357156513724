package shell

import (
	"slices"
	"strings"
)

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
