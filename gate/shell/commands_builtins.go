package shell

import (
	"strings"
)

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
