// Package shell turns a shell command string into the list of simple
// commands it would run, so that the gate decides on structure rather than
// on strings. [Analyze] parses the string as bash (mvdan.cc/sh/v3, LangBash)
// and returns an [Analysis]: every command with its program name, argument
// vector, options, operands, the files it touches, the variables set for it,
// how it was reached, and risk facts ([Mark]) found in Go so that policies
// never parse strings.
//
//	a := shell.Analyze(`sudo -u root bash -lc 'cd / && rm -rf .'`, shell.Options{Cwd: "/ws", Home: "/home/u"})
//	// a.Commands[2]: Name "rm", Opts [r f], Paths ["/"], Depth 1,
//	// Via ["sudo" "bash -c"], Marks [privilege:sudo]
//
// Analyze never executes anything and never touches the file system: a glob
// is kept as written, ~user is guessed as a sibling of Home (or /root), and
// symbolic links are left for the gate to resolve. It never panics and never
// returns nil; the same input always gives the same output.
//
// # What is found
//
// Commands are listed in execution order: those of command substitutions,
// backticks and process substitutions come before the command whose words
// hold them. Pipelines, lists (&&, ||, ;, newline, &), subshells, brace
// groups, if/while/until/for/case bodies, function bodies, arithmetic
// commands, [[ ]], coprocesses, time and ! are all walked. A function body
// is walked where it is defined, as code that may run with any standard
// input, and again at each call, where it runs (with the caller's
// directory, input and environment); the function's name is listed at
// each call as well, as a command with Function set when the function
// surely runs and its body was analysed there (defined unconditionally
// in this bash or sh, not since given to an unset that may have removed
// it, no trap set and no script sourced, not in a loop body that may
// remove it before a later iteration, not a recursive call), or as the
// program of that name when it may be absent. Functions defined in a
// subshell or a substitution stay there; the last element of a pipeline
// may run in this shell (shopt -s lastpipe), so what it defines, unsets
// or changes may stay. A definition is not unconditional in a compound
// command with a redirection (which may fail and skip it), nor after a
// command of the same line whose expansion may fail (an arithmetic
// error, a bad substitution, an assignment to a readonly variable such
// as UID): bash then abandons the rest of the line. Only exported
// functions reach a child shell, where they may be absent (sh does not
// import them); in zsh, ksh, PowerShell or a shell not known (su -c,
// ssh, trap handlers) aliases and builtins may come first, and no call
// is marked. A cycle of calls with one in a pipeline or the background
// is a fork bomb.
//
// An alias definition makes the analysis dynamic: with expand_aliases or
// in POSIX mode a later line expands it, and `alias x=command` turns
// `x rm -rf /` into a command no word here names. So does turning on
// history expansion (set -H, set -o histexpand): `!!` on a later line
// runs earlier text. fc, unless it only lists (-l), runs commands from
// the history and is dynamic too.
//
// Words are expanded statically: brace expansion, ANSI-C quotes ($'\x72m'),
// backslashes, quote removal, ~ and ~/x where bash expands them (at the start
// of a word and after the = of an assignment-like argument). A word holding a
// parameter expansion, a command or process substitution or an arithmetic
// expansion is dynamic. As a command name it makes the command dynamic
// (Name is empty, Argv keeps the source text). As an operand it is kept as
// written, and makes the command dynamic only where it names a file or is
// given to a destructive command (rm, mv, chmod, dd, find, kill, …). A glob
// in the command name is dynamic too.
//
// # Wrappers and nesting
//
// Wrappers are removed with their own option arity and recorded in Via:
// sudo, doas, su, pkexec, run0, setpriv, runuser, env (assignments go to
// Assigns, -C changes the directory, -S is split into words as GNU env
// splits it and read as env's own arguments), timeout, nice, command (-v
// runs nothing), exec, time, nohup, stdbuf, busybox, builtin, and setsid,
// flock, chroot, unshare, nsenter, ionice, chrt, taskset, strace,
// ssh-agent, dbus-launch and a few others, which also add a level of
// Depth. A wrapper with no command after it is the command. The privilege
// wrappers (also gosu, su-exec, capsh, ksu, chpst -u, sudoedit, gksu,
// kdesu, please, machinectl shell, systemd-run without --user) add a
// privilege mark to the wrapped command and to everything it starts. A
// wrapper named by a path outside the system directories (./sudo) is
// listed as the script it may be, and unwrapped as the wrapper it may be.
//
// Strings that are shell programs are parsed one level deeper (Depth+1, Via
// says how): bash/sh/zsh/dash/ksh/ash -c (also under other names: ksh93,
// bash-static, busybox hush), eval, here-documents and here-strings fed to
// a shell, literal text piped into a shell by echo, printf or cat, su -c,
// flock -c, script -c, ssh HOST CMD, watch, nix-shell --run, trap and alias
// bodies, the shell commands of tmux (new-session, new-window,
// split-window, run-shell, if-shell, send-keys, key bindings, hooks, #()
// in formats) and screen (-X stuff), and the commands behind options that
// run programs (git -c alias.x=!…, tar --to-command, sort
// --compress-program, rsync -e, ssh -o ProxyCommand, sed e, awk system(),
// vim -c '!…', gdb -ex shell, dc !, sqlite3 .shell, m4 syscmd, …).
// find -exec/-execdir/-ok, xargs, parallel, screen and tmux with several
// words run their command lines as nested commands: find's {} stands for
// the start points; what xargs appends comes from stdin and is dynamic.
// source and . mark the script (runs_script) without reading it.
//
// # Paths
//
// Paths lists the operands and option values that name files, absolute
// against the tracked working directory, cleaned lexically; Writes lists
// those created, changed or removed (output redirections, tee, sed -i, cp,
// mv and install targets, rm, chmod, -o FILE, …); every write is also a
// path. Operands that are not files are left out: patterns (grep, sed, awk
// programs), echo and printf arguments, modes and owners (chmod, chown),
// URLs, git refs and subcommands, pids. cd and pushd change the directory
// for the rest of the list (a subshell restores it). A cd may fail (its
// target is not known to exist unless it is an ancestor), so the old
// directory stays possible too: later commands are listed once for each
// directory they may run in, except after `cd DIR &&` and `cd DIR || exit`.
// cd -, a dynamic target, a target looked up through CDPATH or
// cdable_vars, a cd inside a branch, or more than four possible directories
// make it unknown, which is reported as dynamic ("cwd unknown after cd"),
// and later relative paths resolve against / so that they are judged
// conservatively.
//
// # Arithmetic
//
// bash evaluates a variable's value again when it is used in arithmetic
// ($((x)), ((x)), let, [[ x -gt 0 ]], array subscripts, substring
// offsets), and runs the command substitutions in an array subscript it
// finds there: after x='a[$(id)]', $((x)) runs id. A value used so is
// dynamic unless every assignment to the variable in the whole string is
// a literal integer or an arithmetic result (or it is one bash sets to a
// number, like RANDOM). So are command output evaluated as arithmetic, a
// subscript with a substitution given as a name to unset, read, printf -v,
// declare and its kin or [[ -v ]], indirect expansion ${!x} and prompt
// expansion ${x@P}.
//
// # Limits
//
// Input longer than [Options.MaxBytes] (64 KiB), nesting deeper than
// MaxDepth (8), more than MaxCommands (256) commands, a NUL byte, oversized
// expansions, and anything that does not parse set [Analysis.Error] and no
// commands: the gate denies. A nested string that is only probably shell
// code (an alias value, a pager setting) that does not parse is reported as
// dynamic instead.
//
// # Known limits
//
// Variable values are not tracked, except whether they are plain integers
// (X=rm; $X is dynamic, not rm). Aliases
// are analysed where they are defined. Programs in other languages (python
// -c, perl -e, node -e) are marked, not read; only their ways of running a
// shell command are looked for where they are simple (awk system(), dc !,
// sqlite3 .shell, gdb shell, pwsh -c read as shell text). Remote commands (ssh) are
// analysed with an unknown working directory. The parser follows bash;
// other shells' syntax (fish, csh) is read as bash.
package shell
