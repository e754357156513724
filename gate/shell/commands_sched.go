package shell

import (
	"strings"
)

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
