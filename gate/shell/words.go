package shell

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// field is one argument after static expansion.
type field struct {
	// val is the expanded value, or the source text of a dynamic word.
	val string
	// dyn marks a word holding a parameter expansion, a command or process
	// substitution or an arithmetic expansion: its value is unknown.
	dyn bool
	// why says what made the word dynamic, worded for a command name.
	why string
	// path is the text to resolve as a path when dyn is set: the source
	// with a leading ~, $HOME or $PWD replaced by what they name.
	path string
	// glob is set when the word holds an unquoted glob pattern.
	glob bool
	// synthetic marks a stand-in for arguments that xargs appends.
	synthetic bool
	// ph marks a word holding find's {}: it stands for the files found,
	// under known start points.
	ph bool
	// inner is, for a dynamic word in double quotes, the text between
	// them as written: `eval "rm -rf $X"` is still looked at.
	inner string
	// proc marks a process substitution: a pipe, not a file.
	proc bool
}

// hasText reports literal text (not only blanks) among parts.
func hasText(parts []syntax.WordPart) bool {
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && strings.TrimSpace(l.Value) != "" {
			return true
		}
	}
	return false
}

// Limits on static expansion, so that `{1..9}{1..9}{1..9}…` cannot make the
// analysis itself expensive.
const (
	maxFieldsPerCommand = 4096
)

// fields statically expands a command's words.
func (a *analyzer) fields(ws []*syntax.Word, st *state) []field {
	out := make([]field, 0, len(ws))
	for _, w := range ws {
		out = a.word(out, w, st)
		if a.failed() {
			return nil
		}
		if len(out) > maxFieldsPerCommand {
			a.fail(errTooLarge)
			return nil
		}
	}
	return out
}

// word appends the fields of one word to out.
func (a *analyzer) word(out []field, w *syntax.Word, st *state) []field {
	if why := dynReason(w.Parts); why != "" {
		src := a.source(w, st)
		f := field{val: src, dyn: true, why: why, path: a.dynPath(w, src, st)}
		if len(w.Parts) == 1 {
			switch p := w.Parts[0].(type) {
			case *syntax.DblQuoted:
				l, r := int(p.Left.Offset())+1, int(p.Right.Offset())
				if !p.Dollar && hasText(p.Parts) && l <= r && r <= len(st.src) {
					f.inner = st.src[l:r]
				}
			case *syntax.ProcSubst:
				f.proc = true
			}
		}
		return append(out, f)
	}
	glob := hasGlob(w.Parts)
	if v, ok := plainWord(w); ok {
		if !a.charge(len(v) + 1) {
			return out
		}
		return append(out, field{val: v, glob: glob})
	}
	return a.expandWord(out, a.assignTilde(w), glob)
}

// expandWord runs the expander on a static word.
func (a *analyzer) expandWord(out []field, w *syntax.Word, glob bool) []field {
	start := len(out)
	braced := hasBrace(w)
	for s, err := range expand.FieldsSeq(a.cfg, w) {
		if err != nil {
			// A static word that does not expand (an oversized brace
			// sequence): fail closed.
			a.fail(errTooLarge)
			return out[:start]
		}
		if !a.charge(len(s) + 1) {
			return out[:start]
		}
		if len(out)-start > maxFieldsPerCommand {
			a.fail(errTooLarge)
			return out[:start]
		}
		if braced {
			// bash expands a tilde at the start of each word brace
			// expansion made: {rm,-rf,~} removes the home directory
			s = a.braceTilde(s)
		}
		out = append(out, field{val: s, glob: glob})
	}
	return out
}

// hasBrace reports whether an unquoted part of w holds a brace.
func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.ContainsRune(l.Value, '{') {
			return true
		}
	}
	return false
}

// tildeHome is the directory ~user names (~ alone: the home the analysis
// runs for), or "" when it names none the analysis can tell.
func (a *analyzer) tildeHome(user string) string {
	switch {
	case user == "":
		return a.opts.Home
	case validName(user):
		return userHome(user, a.opts.Home)
	}
	return ""
}

// braceTilde expands ~ and ~user at the start of a word made by brace
// expansion, as bash does after it.
func (a *analyzer) braceTilde(s string) string {
	if !strings.HasPrefix(s, "~") {
		return s
	}
	user, rest, slash := strings.Cut(s[1:], "/")
	home := a.tildeHome(user)
	if home == "" {
		return s
	}
	if slash {
		return home + "/" + rest
	}
	return home
}

// plainWord returns the value of a word that needs no expansion at all:
// plain text without backslashes, braces or a tilde, or a simple quoted
// string. Most words are like this; they skip the expander.
func plainWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if !strings.ContainsAny(p.Value, "\\{~") {
			return p.Value, true
		}
	case *syntax.SglQuoted:
		if !p.Dollar {
			return p.Value, true
		}
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 && !p.Dollar {
			if l, ok := p.Parts[0].(*syntax.Lit); ok && !strings.ContainsRune(l.Value, '\\') {
				return l.Value, true
			}
		}
	}
	return "", false
}

// literal expands a static word into one string (an assignment value, a
// here-string); ok is false for a dynamic word.
func (a *analyzer) literal(w *syntax.Word, st *state) (string, bool) {
	if w == nil {
		return "", true
	}
	if dynReason(w.Parts) != "" {
		return a.source(w, st), false
	}
	fs := a.word(nil, w, st)
	vals := make([]string, len(fs))
	for i, f := range fs {
		vals[i] = f.val
	}
	return strings.Join(vals, " "), true
}

// dynReason says why a word's value is unknown, or "" if it is static.
func dynReason(parts []syntax.WordPart) string {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.ParamExp:
			name := "?"
			if p.Param != nil {
				name = p.Param.Value
			}
			return "command name from variable $" + name
		case *syntax.CmdSubst:
			return "command substitution as command name"
		case *syntax.ArithmExp:
			return "arithmetic expansion as command name"
		case *syntax.ProcSubst:
			return "process substitution as command name"
		case *syntax.DblQuoted:
			if r := dynReason(p.Parts); r != "" {
				return r
			}
		}
	}
	return ""
}

// hasGlob reports an unquoted glob pattern: *, ?, [...] or an extended
// glob, outside quotes and not escaped.
func hasGlob(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.ExtGlob:
			return true
		case *syntax.Lit:
			s := p.Value
			for i := 0; i < len(s); i++ {
				switch s[i] {
				case '\\':
					i++
				case '*', '?':
					return true
				case '[':
					if strings.IndexByte(s[i+1:], ']') >= 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// source returns the text of a node as written.
func (a *analyzer) source(n syntax.Node, st *state) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start >= 0 && end <= len(st.src) && start <= end {
		return st.src[start:end]
	}
	var sb strings.Builder
	if err := syntax.NewPrinter().Print(&sb, n); err != nil {
		return "?"
	}
	return sb.String()
}

// dynPath is the path text of a dynamic word: a leading unquoted ~, $HOME
// or $PWD is replaced by what it names; the rest stays as written.
func (a *analyzer) dynPath(w *syntax.Word, src string, st *state) string {
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if strings.HasPrefix(p.Value, "~") {
			name, rest, _ := strings.Cut(src[1:], "/")
			if name == "" && a.opts.Home != "" {
				return a.opts.Home + "/" + rest
			}
			if name != "" && validName(name) {
				return userHome(name, a.opts.Home) + "/" + rest
			}
		}
	case *syntax.ParamExp, *syntax.DblQuoted:
		pe, _ := p.(*syntax.ParamExp)
		if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
			pe, _ = dq.Parts[0].(*syntax.ParamExp)
		}
		if pe == nil || pe.Param == nil || pe.Exp != nil || pe.Repl != nil || pe.Slice != nil || pe.Index != nil || pe.Length || pe.Excl {
			break
		}
		text := a.source(p, st)
		if !strings.HasPrefix(src, text) {
			break
		}
		switch pe.Param.Value {
		case "HOME":
			if a.opts.Home != "" {
				return a.opts.Home + src[len(text):]
			}
		case "PWD":
			if st.cwd != "" {
				return st.cwd + src[len(text):]
			}
		}
	}
	return src
}

// assignTilde expands a tilde after the = of an argument that looks like
// an assignment (`of=~/x`), as bash does outside POSIX mode.
func (a *analyzer) assignTilde(w *syntax.Word) *syntax.Word {
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return w
	}
	name, val, ok := strings.Cut(lit.Value, "=")
	if !ok || !validName(name) || !strings.HasPrefix(val, "~") {
		return w
	}
	user, rest, slash := strings.Cut(val[1:], "/")
	if !slash && len(w.Parts) > 1 {
		return w
	}
	home := a.tildeHome(user)
	if home == "" {
		return w
	}
	if slash {
		rest = "/" + rest
	}
	nl := *lit
	nl.Value = name + "=" + home + rest
	nw := &syntax.Word{Parts: append([]syntax.WordPart{&nl}, w.Parts[1:]...)}
	return nw
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.') {
			continue
		}
		return false
	}
	return true
}

// userHome guesses the home directory of another user without reading the
// user database: /root for root, otherwise a sibling of home (or /home).
func userHome(user, home string) string {
	if user == "root" {
		return "/root"
	}
	base := "/home"
	if home != "" && home != "/" {
		base = filepath.Dir(home)
	}
	return filepath.Join(base, user)
}

// env serves the expansion of ~ and ~user only: static words have no other
// parameter expansions. It never consults the user database, so ~user of
// an unknown user is a guess (see userHome).
func (a *analyzer) env(name string) string {
	switch {
	case name == "HOME":
		return a.opts.Home
	case strings.HasPrefix(name, "HOME "):
		return userHome(name[5:], a.opts.Home)
	}
	return ""
}

func newExpandConfig(a *analyzer) *expand.Config {
	return &expand.Config{Env: expand.FuncEnviron(a.env), ExtGlob: true}
}

// resolve makes a path absolute against cwd ("" = unknown, judged as "/"),
// and cleans it lexically unless it has ".." elements: "link/.." names the
// parent of the link's target, not the link's directory, so those are left
// for the gate, which walks them the way the kernel does.
func resolve(p, cwd string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			cwd = "/"
		}
		p = strings.TrimSuffix(cwd, "/") + "/" + p
	}
	if hasDotDot(p) {
		return p
	}
	return filepath.Clean(p)
}

func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// isURL reports a scheme://… operand.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// isRemoteSpec reports an scp/rsync/git remote: host:path or user@host:path.
func isRemoteSpec(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return false
	}
	slash := strings.IndexByte(s, '/')
	return slash < 0 || colon < slash
}
