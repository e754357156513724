package shell

import (
	"encoding/hex"
	"slices"
	"strings"
	"sync"
)

// Runners start commands given in their arguments in a way of their own:
// tmux and screen in a new terminal, nix-shell in a built environment.
// Unlike wrappers they are listed themselves, and what they run is
// analysed one level deeper.

func initRunners() {
	for n, h := range map[string]func(*build){
		"tmux": (*build).tmux, "screen": (*build).screen, "nix-shell": (*build).nixShell, "nix": (*build).nix,
		"dc": (*build).dc, "sqlite3": (*build).sqlite3, "m4": (*build).m4, "emacsclient": (*build).emacsclient,
		"ed": (*build).ed, "red": (*build).ed,
	} {
		handlers[n] = h
	}
}

// tmuxKind says what the operands of a tmux command are.
type tmuxKind int

const (
	tmuxOther  tmuxKind = iota
	tmuxArgv            // [shell-command [argument …]]: one word is for sh -c, more are a program and its arguments
	tmuxShell           // one shell command (run-shell, pipe-pane)
	tmuxIf              // if-shell: a shell command, then tmux commands
	tmuxKeys            // send-keys: keys typed into a pane
	tmuxBind            // bind-key: a key, then a tmux command
	tmuxString          // the last operand is a tmux command string (confirm-before, command-prompt, choose-*)
	tmuxHook            // set-hook NAME COMMAND
	tmuxOption          // set-option NAME VALUE
	tmuxSetenv          // set-environment NAME VALUE
	tmuxSource          // source-file PATH…
	tmuxMenu            // display-menu NAME KEY COMMAND …
	tmuxLoad            // load-buffer PATH
	tmuxSave            // save-buffer PATH
	tmuxSetBuf          // set-buffer DATA: text a paste-buffer types
	tmuxPaste           // paste-buffer: types a buffer into a pane
)

type tmuxDef struct {
	name, alias string
	spec        *optSpec
	kind        tmuxKind
}

// tmuxCommands lists every tmux command (3.4), so that an abbreviation is
// resolved as tmux resolves it: an alias, a full name, or a unique prefix.
var tmuxCommands = []tmuxDef{
	{"attach-session", "attach", nil, tmuxOther},
	{"bind-key", "bind", spec("+ n r N: T:"), tmuxBind},
	{"break-pane", "breakp", nil, tmuxOther},
	{"capture-pane", "capturep", nil, tmuxOther},
	{"choose-buffer", "", spec("+ N Z r F: f: K: O: t:"), tmuxString},
	{"choose-client", "", spec("+ N Z r F: f: K: O: t:"), tmuxString},
	{"choose-tree", "", spec("+ G N Z r s w F: f: K: O: t:"), tmuxString},
	{"clear-history", "clearhist", nil, tmuxOther},
	{"clear-prompt-history", "clearphist", nil, tmuxOther},
	{"clock-mode", "", nil, tmuxOther},
	{"command-prompt", "", spec("+ 1 b F k i N l I: p: t: T:"), tmuxString},
	{"confirm-before", "confirm", spec("+ b y c: p: t:"), tmuxString},
	{"copy-mode", "", nil, tmuxOther},
	{"customize-mode", "", nil, tmuxOther},
	{"delete-buffer", "deleteb", nil, tmuxOther},
	{"detach-client", "detach", nil, tmuxOther},
	{"display-menu", "menu", spec("+ O M b: c: C: H: s: S: t: T: x: y:"), tmuxMenu},
	{"display-message", "display", nil, tmuxOther},
	{"display-popup", "popup", spec("+ B C E k b: c: d: e: h: s: S: t: T: w: x: y:"), tmuxArgv},
	{"display-panes", "displayp", nil, tmuxOther},
	{"find-window", "findw", nil, tmuxOther},
	{"has-session", "has", nil, tmuxOther},
	{"if-shell", "if", spec("+ b F t:"), tmuxIf},
	{"join-pane", "joinp", nil, tmuxOther},
	{"kill-pane", "killp", nil, tmuxOther},
	{"kill-server", "", nil, tmuxOther},
	{"kill-session", "", nil, tmuxOther},
	{"kill-window", "killw", nil, tmuxOther},
	{"last-pane", "lastp", nil, tmuxOther},
	{"last-window", "last", nil, tmuxOther},
	{"link-window", "linkw", nil, tmuxOther},
	{"list-buffers", "lsb", nil, tmuxOther},
	{"list-clients", "lsc", nil, tmuxOther},
	{"list-commands", "lscm", nil, tmuxOther},
	{"list-keys", "lsk", nil, tmuxOther},
	{"list-panes", "lsp", nil, tmuxOther},
	{"list-sessions", "ls", nil, tmuxOther},
	{"list-windows", "lsw", nil, tmuxOther},
	{"load-buffer", "loadb", spec("+ w b: t:"), tmuxLoad},
	{"lock-client", "lockc", nil, tmuxOther},
	{"lock-server", "lock", nil, tmuxOther},
	{"lock-session", "locks", nil, tmuxOther},
	{"move-pane", "movep", nil, tmuxOther},
	{"move-window", "movew", nil, tmuxOther},
	{"new-session", "new", spec("+ A d D E P X c: e: f: F: n: s: t: x: y:"), tmuxArgv},
	{"new-window", "neww", spec("+ a b d k P S c: e: F: n: t:"), tmuxArgv},
	{"next-layout", "nextl", nil, tmuxOther},
	{"next-window", "next", nil, tmuxOther},
	{"paste-buffer", "pasteb", nil, tmuxPaste},
	{"pipe-pane", "pipep", spec("+ I O o t:"), tmuxShell},
	{"previous-layout", "prevl", nil, tmuxOther},
	{"previous-window", "prev", nil, tmuxOther},
	{"refresh-client", "refresh", nil, tmuxOther},
	{"rename-session", "rename", nil, tmuxOther},
	{"rename-window", "renamew", nil, tmuxOther},
	{"resize-pane", "resizep", nil, tmuxOther},
	{"resize-window", "resizew", nil, tmuxOther},
	{"respawn-pane", "respawnp", spec("+ k c: e: t:"), tmuxArgv},
	{"respawn-window", "respawnw", spec("+ k c: e: t:"), tmuxArgv},
	{"rotate-window", "rotatew", nil, tmuxOther},
	{"run-shell", "run", spec("+ b C E c: d: s: t:"), tmuxShell},
	{"save-buffer", "saveb", spec("+ a b:"), tmuxSave},
	{"select-layout", "selectl", nil, tmuxOther},
	{"select-pane", "selectp", nil, tmuxOther},
	{"select-window", "selectw", nil, tmuxOther},
	{"send-keys", "send", spec("+ F H K l M R X c: N: t:"), tmuxKeys},
	{"send-prefix", "", nil, tmuxOther},
	{"server-access", "", nil, tmuxOther},
	{"set-buffer", "setb", spec("+ a g w b: n: t:"), tmuxSetBuf},
	{"set-environment", "setenv", spec("+ F h g r u t:"), tmuxSetenv},
	{"set-hook", "", spec("+ a g p R u w t:"), tmuxHook},
	{"set-option", "set", spec("+ a F g o p q s u U w t:"), tmuxOption},
	{"set-window-option", "setw", spec("+ a F g o q u t:"), tmuxOption},
	{"show-buffer", "showb", nil, tmuxOther},
	{"show-environment", "showenv", nil, tmuxOther},
	{"show-hooks", "", nil, tmuxOther},
	{"show-messages", "showmsgs", nil, tmuxOther},
	{"show-options", "show", nil, tmuxOther},
	{"show-prompt-history", "showphist", nil, tmuxOther},
	{"show-window-options", "showw", nil, tmuxOther},
	{"source-file", "source", spec("+ F n q v t:"), tmuxSource},
	{"split-window", "splitw", spec("+ b d f h I v P Z c: e: l: p: t: F:"), tmuxArgv},
	{"start-server", "start", nil, tmuxOther},
	{"suspend-client", "suspendc", nil, tmuxOther},
	{"swap-pane", "swapp", nil, tmuxOther},
	{"swap-window", "swapw", nil, tmuxOther},
	{"switch-client", "switchc", nil, tmuxOther},
	{"unbind-key", "unbind", nil, tmuxOther},
	{"unlink-window", "unlinkw", nil, tmuxOther},
	{"wait-for", "wait", nil, tmuxOther},
}

// findTmux resolves a tmux command name: an alias, or a name or its
// abbreviation (see [abbrev]; the commands that run something are those
// of a kind other than tmuxOther).
func findTmux(name string) (tmuxDef, bool) {
	for _, d := range tmuxCommands {
		if d.alias == name {
			return d, true
		}
	}
	names := tmuxNames()
	full, ok := abbrev(name, names, func(n string) bool { return tmuxCommands[slices.Index(names, n)].kind != tmuxOther })
	if !ok {
		return tmuxDef{}, false
	}
	return tmuxCommands[slices.Index(names, full)], true
}

// tmuxNames are the names of tmuxCommands, in order.
var tmuxNames = sync.OnceValue(func() []string {
	names := make([]string, len(tmuxCommands))
	for i, d := range tmuxCommands {
		names[i] = d.name
	}
	return names
})

var tmuxGlobal = spec("+ 2 C D h l N u U v V c: f: L: S: T:")

// tmux runs shell commands given to new sessions, windows and panes, to
// run-shell, if-shell and pipe-pane, keys typed by send-keys, and tmux
// commands bound to keys, hooks and prompts; #(…) in a format runs a shell
// command too.
func (b *build) tmux() {
	b.parse(tmuxGlobal)
	if c, ok := b.p.val("c"); ok {
		b.shellString(c, "tmux -c", true)
	}
	for _, f := range b.p.all("f") {
		b.script(f)
	}
	b.optPaths(false, "S")
	b.tmuxList(b.args[b.p.end:], 0)
}

// tmuxList runs a list of tmux commands separated by ; words (or a ; at
// the end of a word).
func (b *build) tmuxList(words []field, level int) {
	if level > b.a.opts.MaxDepth {
		b.dynamic("tmux commands nested too deep")
		return
	}
	var cur []field
	for _, w := range words {
		if w.dyn || !strings.HasSuffix(w.val, ";") {
			cur = append(cur, w)
			continue
		}
		if v := strings.TrimSuffix(w.val, ";"); strings.HasSuffix(v, `\`) {
			w.val = strings.TrimSuffix(v, `\`) + ";"
			cur = append(cur, w)
			continue
		} else if v != "" {
			w.val = v
			cur = append(cur, w)
		}
		b.tmuxCommand(cur, level)
		cur = nil
	}
	b.tmuxCommand(cur, level)
}

func (b *build) tmuxCommand(words []field, level int) {
	if len(words) == 0 {
		return
	}
	for _, w := range words {
		b.tmuxFormats(w)
	}
	if words[0].dyn {
		b.dynamic("tmux command from expansion")
		return
	}
	d, ok := findTmux(words[0].val)
	if !ok {
		// an alias (splitp, a command-alias) or a command this table
		// lacks may run a shell command
		b.dynamic("tmux command not known: " + words[0].val)
		return
	}
	if d.kind == tmuxOther {
		return
	}
	via := "tmux " + d.name
	p := parseOpts(words, 1, d.spec)
	b.cmd.Opts = append(b.cmd.Opts, p.opts...)
	ops := words[p.end:]
	for _, v := range p.all("e") {
		if name, _, _ := strings.Cut(v.val, "="); v.dyn || dangerousEnv(name) {
			b.mark(MarkDangerousEnv, name)
		}
	}
	dirOpt := "c"
	if d.name == "display-popup" {
		dirOpt = "d"
	}
	if v, ok := p.val(dirOpt); ok && (d.kind == tmuxArgv || d.kind == tmuxShell) {
		// the start directory of the command
		if v.dyn {
			b.dynamic("path from expansion in tmux")
			b.cwd = ""
		} else if b.cwd != "" || strings.HasPrefix(v.val, "/") {
			b.cwd = resolve(v.val, b.cwd)
			b.addResolved(b.cwd, false)
		}
	}
	switch d.kind {
	case tmuxArgv:
		switch len(ops) {
		case 0:
		case 1:
			b.shellString(ops[0], via, true)
		default:
			b.nestedArgv(ops, via, nil)
		}
	case tmuxShell:
		if len(ops) > 0 {
			if p.has("C") {
				b.tmuxString(ops[0], level)
			} else {
				b.shellString(ops[0], via, true)
			}
		}
	case tmuxIf:
		for k, f := range ops {
			if k == 0 && !p.has("F") {
				b.shellString(f, via, true)
			} else if k > 0 {
				b.tmuxString(f, level)
			}
		}
	case tmuxKeys:
		if !p.has("X") {
			b.tmuxKeys(ops, p.has("l"), p.has("H"))
		}
	case tmuxBind:
		b.tmuxCommandArgs(ops[min(1, len(ops)):], level)
	case tmuxString:
		if len(ops) > 0 {
			b.tmuxString(ops[len(ops)-1], level)
		}
	case tmuxHook:
		if len(ops) > 1 {
			b.tmuxString(ops[1], level)
		}
	case tmuxOption:
		b.tmuxOption(ops, level)
	case tmuxSetenv:
		if len(ops) > 0 && (ops[0].dyn || dangerousEnv(ops[0].val)) {
			b.mark(MarkDangerousEnv, ops[0].val)
		}
	case tmuxSource:
		for _, f := range ops {
			b.script(f)
		}
	case tmuxMenu:
		for k := 0; k < len(ops); {
			if ops[k].val == "" && !ops[k].dyn {
				k++ // a separator line
				continue
			}
			if k+2 < len(ops) {
				b.tmuxString(ops[k+2], level)
			}
			k += 3
		}
	case tmuxLoad:
		if len(ops) > 0 {
			b.path(ops[0])
		}
	case tmuxSave:
		if len(ops) > 0 {
			b.write(ops[0])
		}
	case tmuxSetBuf:
		if len(ops) > 0 {
			b.lenientString(ops[0], "tmux set-buffer")
		}
	case tmuxPaste:
		b.mark(MarkExecFlag, "tmux paste-buffer")
	}
}

// tmuxCommandArgs analyses the tmux command given in arguments: one
// argument is a command string tmux parses, more are a command and its
// arguments.
func (b *build) tmuxCommandArgs(ops []field, level int) {
	switch len(ops) {
	case 0:
	case 1:
		b.tmuxString(ops[0], level)
	default:
		b.tmuxList(ops, level+1)
	}
}

// tmuxOptionCmds are the options whose value is a shell command, and
// tmuxOptionProgs those whose value is a program.
var (
	tmuxOptionCmds  = set("default-command lock-command copy-command")
	tmuxOptionProgs = set("default-shell editor")
)

func (b *build) tmuxOption(ops []field, level int) {
	if len(ops) < 2 {
		return
	}
	name, val := ops[0], ops[1]
	if name.dyn {
		b.dynamic("tmux option name from expansion")
		return
	}
	opt, _, _ := strings.Cut(name.val, "[")
	switch {
	case tmuxOptionCmds[opt]:
		b.mark(MarkExecFlag, "tmux "+opt)
		b.lenientString(val, "tmux "+opt)
	case tmuxOptionProgs[opt]:
		if val.dyn || !isSystemProgram(val.val) {
			b.script(val)
		}
	case opt == "command-alias":
		if _, cmd, ok := strings.Cut(val.val, "="); ok && !val.dyn {
			b.tmuxString(field{val: cmd}, level)
		} else if val.dyn {
			b.dynamic("tmux command-alias from expansion")
		}
	}
}

// tmuxString analyses a string tmux parses as commands (a hook, a
// binding, if-shell's commands). A string it cannot read is dynamic.
func (b *build) tmuxString(f field, level int) {
	if f.dyn {
		b.dynamic("tmux command string from expansion")
		return
	}
	words, ok := splitTmux(f.val)
	if !ok {
		b.dynamic("tmux command string that is not understood")
		return
	}
	b.tmuxList(words, level+1)
}

// splitTmux splits a tmux command string (tmux's configuration syntax)
// into words, with ; words between commands: quotes, backslashes, #
// comments, and { … } blocks, which are one word. Variables ($X, ${X})
// and %if directives are not resolved: ok is false.
func splitTmux(s string) (words []field, ok bool) {
	var cur strings.Builder
	started := false
	flush := func() {
		if started {
			words = append(words, field{val: cur.String()})
		}
		cur.Reset()
		started = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '\n' || c == ';':
			flush()
			words = append(words, field{val: ";"})
		case c == '#' && !started:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			i--
		case c == '%' && !started:
			return nil, false
		case c == '$':
			return nil, false
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			cur.WriteByte(s[i])
			started = true
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, false
			}
			text := s[i+1 : i+1+j]
			if c == '"' && strings.ContainsAny(text, `\$`) {
				return nil, false
			}
			cur.WriteString(text)
			started = true
			i += j + 1
		case c == '{' && !started:
			j := closing(s, i)
			if j < 0 {
				return nil, false
			}
			words = append(words, field{val: s[i+1 : j]})
			i = j
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	flush()
	return words, true
}

// tmuxFormats analyses the shell commands in #(…) of a format, which
// tmux runs when it expands the format (status lines, display-message,
// -F formats).
func (b *build) tmuxFormats(f field) {
	if f.dyn {
		return
	}
	s := f.val
	for {
		i := strings.Index(s, "#(")
		if i < 0 {
			return
		}
		b.mark(MarkExecFlag, "tmux #()")
		j := closing(s, i+1)
		if j < 0 {
			b.dynamic("tmux #( without its )")
			return
		}
		b.lenientString(field{val: s[i+2 : j]}, "tmux #()")
		s = s[j+1:]
	}
}

// tmuxKeyText is what typing a tmux key name does to the command line:
// Enter and the like end it, Space adds a blank, and keys that edit or
// complete the line make its text unknown.
var tmuxKeyText = map[string]string{
	"Enter": "\n", "KPEnter": "\n", "C-m": "\n", "C-j": "\n", "C-c": "\n", "C-d": "\n", "C-z": "\n", "C-l": "\n",
	"Escape": "\n", "Space": " ",
}

var reTmuxKey = lazyRegexp(`^((C|M|S)-)+.$|^(BSpace|BTab|DC|Delete|End|Home|IC|Insert|NPage|PageDown|PgDn|PPage|PageUp|PgUp|Tab|Up|Down|Left|Right|F[0-9]+|KP.*)$|^\^.$`)

// tmuxKeys analyses the text send-keys types into a pane: a shell
// reading it runs it.
func (b *build) tmuxKeys(keys []field, literal, hexa bool) {
	var text strings.Builder
	for _, k := range keys {
		if k.dyn {
			b.dynamic("tmux send-keys of a non-literal")
			text.WriteString(k.val)
			continue
		}
		switch t, named := tmuxKeyText[k.val]; {
		case hexa:
			raw, err := hex.DecodeString(k.val)
			if err != nil || len(raw) != 1 {
				b.dynamic("tmux send-keys -H of a key that is not a byte")
				continue
			}
			text.Write(raw)
		case literal:
			text.WriteString(k.val)
		case named:
			text.WriteString(t)
		case reTmuxKey().MatchString(k.val):
			b.dynamic("tmux send-keys of a key that edits the line")
		default:
			text.WriteString(k.val)
		}
	}
	if strings.TrimSpace(text.String()) != "" {
		b.lenientString(field{val: text.String()}, "tmux send-keys")
	}
}

var screenSpec = spec("+ a A d D m r R x q i l O U f c: e: h: p: S: t: T: X: s: L")

// screenQuiet are the screen commands (-X) that run nothing.
var screenQuiet = set("quit detach kill windows title sessionname info select next prev other number width height clear lockscreen redisplay version time license")

// screen runs a program with its arguments in a new window; -X sends a
// command to a running session (stuff types text, exec and screen run
// programs).
func (b *build) screen() {
	b.parse(screenSpec)
	for _, f := range b.p.all("c") {
		b.script(f) // a screenrc runs its commands
	}
	if v, ok := b.p.val("s"); ok && (v.dyn || !isSystemProgram(v.val)) && v.val != "" {
		b.script(v)
	}
	ops := b.args[b.p.end:]
	if v, ok := b.p.val("X"); ok {
		b.screenCommand(append([]field{v}, ops...))
		return
	}
	if len(b.args) > 1 && !b.args[1].dyn && (b.args[1].val == "-ls" || b.args[1].val == "-list" || b.args[1].val == "-wipe") ||
		b.p.has("r", "x") {
		return
	}
	if len(ops) > 0 {
		b.nestedArgv(ops, "screen", nil)
	}
}

var screenWindowSpec = spec("+ a f: h: l L M O T: t:")

func (b *build) screenCommand(words []field) {
	if words[0].dyn {
		b.dynamic("screen -X of a non-literal")
		return
	}
	name, args := words[0].val, words[1:]
	switch name {
	case "stuff":
		if len(args) > 0 {
			b.lenientString(screenStuff(args[0]), "screen stuff")
		}
	case "exec":
		if len(args) > 0 && !args[0].dyn && strings.Trim(args[0].val, ".!|:") == "" {
			args = args[1:] // a file-descriptor pattern
		}
		b.nestedArgv(args, "screen exec", nil)
	case "screen":
		p := parseOpts(args, 0, screenWindowSpec)
		rest := args[p.end:]
		if len(rest) > 0 && !rest[0].dyn && isDigits(rest[0].val) {
			rest = rest[1:]
		}
		b.nestedArgv(rest, "screen", nil)
	case "setenv":
		if len(args) > 0 && (args[0].dyn || dangerousEnv(args[0].val)) {
			b.mark(MarkDangerousEnv, args[0].val)
		}
	default:
		if !screenQuiet[name] {
			b.mark(MarkExecFlag, "screen -X "+name)
		}
	}
}

// screenStuff is the text screen's stuff command types: ^M, \n, \r and
// octal escapes end lines.
func screenStuff(f field) field {
	if f.dyn {
		return f
	}
	r := strings.NewReplacer("^M", "\n", "^J", "\n", `\n`, "\n", `\r`, "\n", `\015`, "\n", `\012`, "\n", "\r", "\n")
	return field{val: r.Replace(f.val)}
}

// nixShellValued are nix-shell's options with one value; --arg, --argstr
// and --option take two.
var nixShellValued = set("-A --attr -I --include -E --expr --keep -k -j --max-jobs --cores --exclude -i -p --packages -o --out-link")

// nixShell: --run and --command are shell commands run in the built
// environment; the shell.nix or default.nix it reads runs its shellHook,
// so it runs other code whatever its arguments, as make does.
func (b *build) nixShell() {
	args := b.args
	b.mark(MarkExecFlag, "nix-shell")
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "-") {
			b.cmd.Operands = append(b.cmd.Operands, f.val)
			b.p.operands = append(b.p.operands, i)
			if f.dyn || looksLikeFile(f.val) {
				b.script(f)
			}
			continue
		}
		name, val, hasEq := strings.Cut(f.val, "=")
		b.cmd.Opts = append(b.cmd.Opts, strings.TrimLeft(name, "-"))
		switch {
		case name == "--run" || name == "--command":
			v := field{val: val}
			if !hasEq {
				if i+1 >= len(args) {
					return
				}
				i++
				v = args[i]
			}
			b.shellString(v, "nix-shell "+name, true)
		case name == "--arg" || name == "--argstr" || name == "--option":
			i += 2
		case name == "-p" || name == "--packages":
			for i+1 < len(args) && (args[i+1].dyn || !strings.HasPrefix(args[i+1].val, "-")) {
				i++ // packages, up to the next option
			}
		case nixShellValued[name] && !hasEq:
			i++
		}
	}
}

// nix develop|shell … -c COMMAND ARGS runs a program; nix run runs a
// package.
func (b *build) nix() {
	args := b.args
	sub := ""
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			b.dynamic("nix argument from expansion")
			continue
		}
		if sub == "" && !strings.HasPrefix(f.val, "-") {
			sub = f.val
			b.cmd.Operands = append(b.cmd.Operands, sub)
			switch sub {
			case "develop", "shell", "run", "print-dev-env", "bundle", "fmt", "repl":
				b.mark(MarkExecFlag, "nix "+sub)
			}
			continue
		}
		if (sub == "develop" || sub == "shell") && (f.val == "-c" || f.val == "--command") {
			b.nestedArgv(args[i+1:], "nix "+sub, nil)
			return
		}
	}
}
