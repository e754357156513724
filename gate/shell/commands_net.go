package shell

import (
	"slices"
	"strings"
)

// --- network clients ---

// fileURLs records file:// operands of a downloader: local reads.
func (b *build) fileURLs() {
	for _, i := range b.p.operands {
		f := b.args[i]
		if rest, ok := cutPrefixFold(f.val, "file://"); ok && !f.dyn {
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				b.path(field{val: rest[j:]})
			}
		}
	}
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func (b *build) curl() {
	b.parse(specs["curl"])
	b.fileURLs()
	b.optPaths(true, "o", "output", "c", "cookie-jar", "D", "dump-header", "trace", "trace-ascii", "stderr", "etag-save", "output-dir")
	b.optPaths(false, "K", "config", "T", "upload-file", "netrc-file", "cacert", "capath", "cert", "key", "E", "etag-compare", "unix-socket")
	for _, v := range b.p.vals {
		if v.val.dyn {
			continue
		}
		switch v.name {
		case "d", "data", "data-binary", "data-ascii", "json":
			if file, ok := strings.CutPrefix(v.val.val, "@"); ok {
				b.path(field{val: file})
			}
		case "data-urlencode":
			if i := strings.IndexByte(v.val.val, '@'); i >= 0 {
				b.path(field{val: v.val.val[i+1:]})
			}
		}
	}
	for _, v := range b.p.all("F", "form") {
		if _, val, ok := strings.Cut(v.val, "="); ok && !v.dyn && (strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<")) {
			file, _, _ := strings.Cut(val[1:], ";")
			b.path(field{val: file})
		}
	}
	for _, v := range b.p.all("b", "cookie") {
		if !v.dyn && !strings.Contains(v.val, "=") {
			b.path(v)
		}
	}
	if b.p.has("O", "remote-name", "remote-name-all") {
		for _, i := range b.p.operands {
			if name := urlBase(b.args[i].val); name != "" && !b.args[i].dyn {
				b.addResolved(resolve(name, b.cwd), true)
			}
		}
	}
}

// urlBase is the file name a downloader saves a URL as.
func urlBase(u string) string {
	u, _, _ = strings.Cut(u, "#")
	u, _, _ = strings.Cut(u, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	i := strings.IndexByte(u, '/')
	if i < 0 {
		return ""
	}
	base := u[strings.LastIndexByte(u, '/')+1:]
	if base == "." || base == ".." {
		return ""
	}
	return base
}

func (b *build) wget() {
	b.parse(specs["wget"])
	b.fileURLs()
	out, hasOut := b.p.val("O", "output-document")
	if hasOut {
		b.write(out)
	}
	b.optPaths(true, "o", "output-file", "a", "append-output", "save-cookies", "warc-file", "rejected-log")
	b.optPaths(false, "i", "input-file", "post-file", "body-file", "load-cookies", "config", "ca-certificate", "certificate", "private-key", "ca-directory")
	if v, ok := b.p.val("use-askpass"); ok {
		b.mark(MarkExecFlag, "wget --use-askpass")
		b.lenientString(v, "wget --use-askpass")
	}
	if hasOut {
		return
	}
	dir := field{val: "."}
	if v, ok := b.p.val("P", "directory-prefix"); ok {
		dir = v
		b.write(dir)
	}
	if dir.dyn {
		return
	}
	base := resolve(dir.val, b.cwd)
	for _, i := range b.p.operands {
		f := b.args[i]
		if f.dyn {
			continue
		}
		name := urlBase(f.val)
		if name == "" {
			name = "index.html"
		}
		b.addResolved(resolve(name, base), true)
	}
}

var (
	juliaSpec  = spec("+ e: E: L: J: C: t: p: O: g: --eval=! --print=! --load=! --sysimage= --project? --threads= --procs= --machine-file= --startup-file= --history-file= --depwarn= --inline= --check-bounds= --math-mode= --code-coverage? --track-allocation?")
	expectSpec = spec("+ c: f: b: d i n N D:")
)

func (b *build) julia() { b.interp(juliaSpec, []string{"e", "E", "eval", "print"}, nil) }

func (b *build) expect() { b.interp(expectSpec, []string{"c"}, []string{"f", "b"}) }

// gdb: -ex and -x run debugger commands (! and shell run programs), and
// --args makes the rest the program to run.
func (b *build) gdb() {
	args := b.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "-") {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			b.path(f)
			continue
		}
		name, val, hasEq := strings.Cut(strings.TrimLeft(f.val, "-"), "=")
		name = gdbOption(name)
		b.cmd.Opts = append(b.cmd.Opts, name)
		switch name {
		case "args":
			b.mark(MarkExecFlag, "gdb --args")
			b.nestedArgv(args[i+1:], "gdb --args", nil)
			return
		case "ex", "eval-command", "iex", "init-eval-command", "eiex", "early-init-eval-command":
			v := field{val: val}
			if !hasEq && i+1 < len(args) {
				i++
				v = args[i]
			}
			b.mark(MarkExecFlag, "gdb -ex")
			if v.dyn {
				b.dynamic("gdb -ex of a non-literal")
				continue
			}
			b.gdbCommand(v.val)
		case "x", "command", "ix", "init-command", "eix", "early-init-command":
			if !hasEq && i+1 < len(args) {
				i++
				b.mark(MarkExecFlag, "gdb -x")
				b.script(args[i])
			}
		case "p", "pid", "cd", "d", "directory", "s", "symbols", "e", "exec", "se", "c", "core", "b", "baud", "l", "tty", "t", "D", "data-directory", "i", "interpreter":
			if !hasEq && i+1 < len(args) {
				i++
			}
		}
	}
	if !slices.Contains(b.cmd.Opts, "batch") && !slices.Contains(b.cmd.Opts, "batch-silent") {
		// gdb reads commands from a pipe
		b.programOnStdin(false, func(text string) {
			for _, line := range strings.Split(text, "\n") {
				b.gdbCommand(line)
			}
		})
	}
}

// gdbLong are gdb's options. gdb reads them with getopt_long_only: one
// dash or two, and any unique prefix (-eval-comm is -eval-command).
var gdbLong = strings.Fields("tui dbx readnow readnever r q quiet silent nh nx n batch-silent batch version fullname f nw nowindows w windows " +
	"statistics configuration help h write return-child-result args se symbols s e exec c core pid p x command eval-command ex " +
	"init-eval-command init-command ix iex early-init-eval-command early-init-command eix eiex directory d data-directory D cd " +
	"tty t i interpreter b baud l")

// gdbOption resolves an option name as getopt_long_only does.
func gdbOption(name string) string {
	return longOption(name, gdbLong, "eval-command", "init-eval-command", "early-init-eval-command", "command", "init-command", "early-init-command", "args")
}

// longOption resolves a long option given as a prefix of one of names
// (see [abbrev]; runs are the options that run code), or keeps it as
// written.
func longOption(name string, names []string, runs ...string) string {
	if full, ok := abbrev(name, names, func(n string) bool { return slices.Contains(runs, n) }); ok {
		return full
	}
	return name
}

// gdbCommand looks at a gdb command for the shell commands it runs:
// shell (or an abbreviation, or !) and pipe (|); python and guile run
// code of their own.
func (b *build) gdbCommand(c string) {
	c = strings.TrimSpace(c)
	word, rest, _ := strings.Cut(c, " ")
	switch {
	case strings.HasPrefix(c, "!"):
		b.lenientString(field{val: c[1:]}, "gdb -ex !")
	case len(word) >= 3 && strings.HasPrefix("shell", word):
		b.lenientString(field{val: rest}, "gdb -ex shell")
	case strings.HasPrefix(c, "|") || word == "pipe":
		s := strings.TrimPrefix(strings.TrimPrefix(c, "pipe"), "|")
		if strings.HasPrefix(strings.TrimSpace(s), "-d") {
			b.dynamic("gdb pipe with a delimiter")
			return
		}
		if _, sh, ok := strings.Cut(s, "|"); ok {
			b.lenientString(field{val: sh}, "gdb -ex pipe")
		}
	case word == "python" || word == "py" || word == "pi" || word == "python-interactive" || word == "guile" || word == "gu":
		b.mark(MarkInlineCode, "gdb "+word)
	}
}

var netcatSpec = spec("e: c: p: s: w: i: q: x: X: P: I: O: T: V: M: m: --exec=! --sh-exec=! --lua-exec=! --proxy= --proxy-type= --source= --wait= --output=")

// netcat: -e/-c run a program with the connection as its standard input
// and output.
func (b *build) netcat() {
	b.parse(netcatSpec)
	for _, o := range []string{"e", "c", "exec", "sh-exec", "lua-exec"} {
		for _, v := range b.p.all(o) {
			b.mark(MarkExecFlag, b.name+" "+dashed(o))
			b.lenientString(v, b.name+" "+dashed(o))
		}
	}
	b.optPaths(true, "o", "output")
}

// socat ADDRESS ADDRESS: EXEC: and SYSTEM: addresses run programs.
func (b *build) socat() {
	b.parse(nil)
	for _, i := range b.p.operands {
		f := b.args[i]
		kind, rest, _ := strings.Cut(f.val, ":")
		switch strings.ToUpper(kind) {
		case "EXEC", "SYSTEM":
			b.mark(MarkExecFlag, "socat "+strings.ToUpper(kind))
			cmd, _, _ := strings.Cut(rest, ",")
			b.lenientString(field{val: strings.Trim(cmd, `'"`), dyn: f.dyn}, "socat "+strings.ToUpper(kind))
		case "OPEN", "CREATE", "GOPEN", "FILE", "PIPE", "UNIX-CONNECT", "UNIX-CLIENT", "UNIX-SENDTO", "UNIX", "UNIX-LISTEN", "UNIX-RECV", "UNIX-RECVFROM":
			p, _, _ := strings.Cut(rest, ",")
			k := strings.ToUpper(kind)
			b.addPath(field{val: p, dyn: f.dyn, path: p}, k == "CREATE" || k == "UNIX-LISTEN" || k == "GOPEN" || k == "FILE")
		}
	}
}

var opensslValued = set("in out key inkey cert certfile CAfile CApath signkey keyout config pass passin passout k K iv S md cipher name subj days newkey engine kdf kdfopt pbkdf2 iter salt rand writerand extfile extensions reqexts section set_serial sigopt pkeyopt digest macopt mac")
var opensslWrites = set("out keyout writerand")
var opensslReads = set("in key inkey cert certfile CAfile signkey config extfile rand")

func (b *build) openssl() {
	args := b.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || len(f.val) < 2 || f.val[0] != '-' {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			continue
		}
		name := f.val[1:]
		b.cmd.Opts = append(b.cmd.Opts, name)
		if opensslValued[name] && i+1 < len(args) {
			i++
			switch {
			case opensslWrites[name]:
				b.write(args[i])
			case opensslReads[name]:
				b.path(args[i])
			}
		}
	}
}
