package shell

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
)

// Programs that read code in a language of their own, which has a way to
// run shell commands: dc (!), sqlite3 (.shell, .system, pipes), m4
// (syscmd, esyscmd). The shell commands found in code given inline or
// piped in are analysed one level deeper; code read from a file is a
// script.

// programOnStdin marks a program read from standard input (flagged: an
// operand says so) and hands its text to read where it is known: literal
// text piped in, a here-document or a here-string.
func (b *build) programOnStdin(flagged bool, read func(text string)) {
	b.readsStdin(flagged, false)
	if text, ok := b.stdinText(); ok {
		read(text)
	}
}

func (b *build) stdinText() (string, bool) {
	switch b.inv.stdin {
	case "pipe":
		return b.inv.pipeText, b.inv.pipeText != ""
	case "heredoc", "herestring":
		return b.a.heredocText(b.inv.body)
	}
	return "", false
}

// closing is the index of the bracket that closes the one at s[i], or -1.
func closing(s string, i int) int {
	open, close := s[i], map[byte]byte{'(': ')', '{': '}', '[': ']'}[s[i]]
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case close:
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

var dcSpec = spec("e: f: --expression= --file= --help --version")

// dc runs the rest of a line after ! (not !<, !>, !=) as a shell command,
// in its program and in strings it executes.
func (b *build) dc() {
	b.parse(dcSpec)
	progs := b.p.all("e", "expression")
	for _, v := range progs {
		b.mark(MarkInlineCode, "dc -e")
		if v.dyn {
			b.dynamic("dc program from expansion")
			continue
		}
		b.dcProgram(v.val)
	}
	files := b.p.all("f", "file")
	for _, v := range files {
		b.script(v)
	}
	for _, i := range b.p.operands {
		b.script(b.args[i])
	}
	if len(progs) == 0 && len(files) == 0 && len(b.p.operands) == 0 {
		b.programOnStdin(false, b.dcProgram)
	}
}

func (b *build) dcProgram(s string) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth = max(depth-1, 0)
		case '!':
			if i+1 < len(s) && strings.IndexByte("<>=", s[i+1]) >= 0 {
				i++
				continue
			}
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				end = len(s) - i
			}
			cmd := s[i+1 : i+end]
			if depth > 0 {
				cmd, _, _ = strings.Cut(cmd, "]")
			}
			b.mark(MarkExecFlag, "dc !")
			b.lenientString(field{val: cmd}, "dc !")
			i += end - 1
		}
	}
}

// sqliteValued are sqlite3's options with values, and how many.
var sqliteValued = map[string]int{"cmd": 1, "init": 1, "lookaside": 2, "pagecache": 2, "heap": 2, "maxsize": 1, "mmap": 1, "newline": 1, "nullvalue": 1, "separator": 1, "vfs": 1, "escape": 1}

// sqliteQuiet are the dot-commands that only show or format.
var sqliteQuiet = set("tables schema fullschema indexes indices headers header mode help databases dbinfo dump echo eqp changes bail nullvalue separator show stats timer width print prompt quit exit version lint")

// sqliteRunning are the dot-commands that run programs or name files.
var sqliteRunning = []string{"shell", "system", "output", "once", "read", "import", "log", "excel", "load", "backup", "save", "restore", "open", "clone", "cd"}

var reSQLOutside = lazyRegexp(`(?i)\b(edit|load_extension|writefile|readfile|fts3_tokenizer)\s*\(|\battach\b|\bvacuum\s+into\b`)

// sqlite3 DB [SQL|.COMMAND …]: dot-commands run programs (.shell,
// .system, |pipes of .output, .once, .read, .import), load native code
// (.load) or reach other files; SQL functions of the shell do too
// (edit(), writefile(), load_extension()). Without commands it reads them
// from standard input.
func (b *build) sqlite3() {
	args := b.args
	db := false
	for i := 1; i < len(args); i++ {
		f := args[i]
		if !f.dyn && strings.HasPrefix(f.val, "-") && len(f.val) > 1 {
			name := strings.TrimLeft(f.val, "-")
			b.cmd.Opts = append(b.cmd.Opts, name)
			switch {
			case name == "A":
				b.mark(MarkExecFlag, "sqlite3 -A")
				for _, g := range args[i+1:] {
					b.path(g)
				}
				return
			case name == "init" && i+1 < len(args):
				b.script(args[i+1])
			case name == "cmd" && i+1 < len(args):
				b.sqliteCommand(args[i+1])
			}
			i += min(sqliteValued[name], len(args)-1-i)
			continue
		}
		b.cmd.Operands = append(b.cmd.Operands, f.val)
		b.p.operands = append(b.p.operands, i)
		if !db {
			db = true
			b.path(f)
			continue
		}
		b.sqliteCommand(f)
	}
	if len(b.p.operands) < 2 {
		b.programOnStdin(false, func(text string) { b.sqliteCommand(field{val: text}) })
	}
}

// sqliteCommand checks SQL or dot-commands, one a line.
func (b *build) sqliteCommand(f field) {
	if f.dyn {
		b.dynamic("sqlite3 command from expansion")
		return
	}
	for _, line := range strings.Split(f.val, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, ".") {
			if m := reSQLOutside().FindString(line); m != "" {
				b.mark(MarkExecFlag, "sqlite3 "+strings.ToLower(strings.TrimRight(m, " \t(")))
			}
			continue
		}
		name, rest, _ := strings.Cut(line[1:], " ")
		rest = strings.TrimSpace(rest)
		if sqliteQuiet[name] {
			continue
		}
		// sqlite3 takes a prefix of a dot-command's name: .sh is .shell.
		if full, ok := abbrev(name, sqliteRunning, func(string) bool { return true }); ok {
			name = full
		}
		b.mark(MarkExecFlag, "sqlite3 ."+name)
		arg := rest
		if len(arg) > 1 && (arg[0] == '\'' || arg[0] == '"') && arg[len(arg)-1] == arg[0] {
			arg = arg[1 : len(arg)-1]
		}
		switch name {
		case "shell", "system":
			b.lenientString(field{val: rest}, "sqlite3 ."+name)
		case "output", "once", "read", "import", "log", "excel":
			if cmd, ok := strings.CutPrefix(arg, "|"); ok {
				b.lenientString(field{val: cmd}, "sqlite3 ."+name)
			} else if arg != "" && !strings.HasPrefix(arg, "-") && name != "excel" {
				file, _, _ := strings.Cut(arg, " ")
				b.addPath(field{val: file}, name != "read" && name != "import")
			}
		case "load":
			if arg != "" {
				b.script(field{val: arg})
			}
		case "backup", "save", "restore", "open", "clone":
			if fs := strings.Fields(arg); len(fs) > 0 {
				b.addPath(field{val: fs[len(fs)-1]}, name != "restore" && name != "open")
			}
		case "cd":
			b.dynamic("sqlite3 .cd")
		}
	}
}

var m4Spec = spec("D: U: I: o: l: t: F: R: W: H: L: d:: --define= --undefine= --include= --error-output= --arglength= --trace= " +
	"--freeze-state= --reload-state= --word-regexp= --hashsize= --nesting-limit= --debug? --debugfile? --debuglen= " +
	"--prefix-builtins --synclines --interactive --fatal-warnings --silent --quiet --gnu --traditional --help --version")

var (
	reM4Sys = lazyRegexp(`\b(m4_)?e?syscmd\(`)
	// reM4Indirect calls a macro by a name given as text: syscmd among them
	reM4Indirect = lazyRegexp(`\b(m4_)?(indir|builtin)\(`)
)

// m4 runs shell commands with syscmd and esyscmd: its input is a program,
// whether a file or standard input.
func (b *build) m4() {
	b.parse(m4Spec)
	for _, v := range b.p.all("R", "reload-state") {
		b.script(v)
	}
	for _, v := range b.p.all("D", "define") {
		if v.dyn || reM4Sys().MatchString(v.val) || reM4Indirect().MatchString(v.val) {
			b.mark(MarkInlineCode, "m4 -D")
			b.m4Program(v)
		}
	}
	b.optPaths(true, "o", "error-output", "F", "freeze-state", "debugfile")
	if b.p.has("help", "version") {
		return
	}
	stdin := len(b.p.operands) == 0
	for _, i := range b.p.operands {
		if f := b.args[i]; !f.dyn && f.val == "-" {
			stdin = true
		} else {
			b.script(f)
		}
	}
	if stdin {
		b.programOnStdin(len(b.p.operands) > 0, func(text string) { b.m4Program(field{val: text}) })
	}
}

// m4Program analyses the argument of each syscmd and esyscmd, without
// its m4 quotes.
func (b *build) m4Program(f field) {
	if f.dyn {
		b.dynamic("m4 program from expansion")
		return
	}
	s := f.val
	if reM4Indirect().MatchString(s) {
		b.mark(MarkExecFlag, "m4 indir")
		b.dynamic("m4 macro called by name (indir, builtin)")
	}
	for _, loc := range reM4Sys().FindAllStringIndex(s, -1) {
		b.mark(MarkExecFlag, "m4 syscmd")
		j := closing(s, loc[1]-1)
		if j < 0 {
			j = len(s)
		}
		// charged as scanned: unbalanced calls make each scan run to the
		// end, and the budget ends that
		if !b.a.charge(j - loc[1] + parseCost) {
			return
		}
		arg := s[loc[1]:j]
		arg = strings.NewReplacer("`", "", "'", "", "[", "", "]", "").Replace(arg)
		b.lenientString(field{val: arg}, "m4 syscmd")
	}
}

// decodePwsh decodes a PowerShell -EncodedCommand: base64 of UTF-16LE.
func decodePwsh(s string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw)%2 != 0 {
		return "", false
	}
	u := make([]uint16, len(raw)/2)
	for i := range u {
		u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
	}
	return string(utf16.Decode(u)), true
}

var emacsclientSpec = spec("a: c d: e f: F: H n q r s: t T: u w: V --alternate-editor=! --create-frame --display= --eval! --frame-parameters= " +
	"--help --no-wait --quiet --reuse-frame --server-file= --socket-name= --timeout= --tramp= --tty --nw --version --parent-id= --suppress-output")

// emacsclient -e makes its operands Lisp expressions for a running emacs;
// -a runs another editor when there is no server.
func (b *build) emacsclient() {
	b.parse(emacsclientSpec)
	for _, v := range b.p.all("a", "alternate-editor") {
		if v.val != "" || v.dyn {
			b.mark(MarkExecFlag, "emacsclient -a")
			b.lenientString(v, "emacsclient -a")
		}
	}
	if b.p.has("e", "eval") {
		b.mark(MarkInlineCode, "emacsclient --eval")
		return
	}
	b.operandPaths(0, true)
}

// ed runs the rest of a command line after ! (also in r !, w !, e !):
// the commands it reads from standard input are a program only where one
// has a !.
func (b *build) ed() {
	b.parse(edSpec)
	b.operandPaths(0, true)
	if b.name == "red" {
		return // restricted: no shell commands
	}
	text, ok := b.stdinText()
	if !ok {
		b.readsStdin(false, false)
		return
	}
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '!'); i >= 0 {
			b.mark(MarkExecFlag, "ed !")
			b.lenientString(field{val: line[i+1:]}, "ed !")
		}
	}
}

var edSpec = spec("p: E G l r s v --prompt= --extended-regexp --traditional --loose-exit-status --restricted --quiet --silent --verbose")
