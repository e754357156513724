package shell

// Options bound and seed an analysis.
type Options struct {
	// Cwd is the absolute directory the command starts in. `cd` is tracked
	// from here so relative paths resolve to what they would name.
	Cwd string
	// Home is the user's home directory, for `~` expansion.
	Home string
	// MaxBytes bounds the command length (default 64 KiB).
	MaxBytes int
	// MaxDepth bounds nesting through bash -c, eval, $(...), find -exec,
	// xargs and wrappers (default 8).
	MaxDepth int
	// MaxCommands bounds the number of simple commands (default 256).
	MaxCommands int
}

// Analysis is the structural view of one shell command string: every simple
// command it would run, with wrappers removed and words statically expanded.
// It is fed to the policies as input.parsed.
type Analysis struct {
	// Commands lists every simple command in execution order, including
	// those nested in $(...), backticks, process substitution, subshells,
	// functions, `bash -c`, `eval`, here-docs fed to shells, find -exec and
	// xargs.
	Commands []Command `json:"commands"`
	// Redirects lists every redirection of the whole string.
	Redirects []Redirect `json:"redirects"`
	// Dynamic is true when something could not be resolved statically: a
	// variable, glob or substitution as a command name, eval of a variable,
	// source of an unknown file, and so on. A dynamic command never gets a
	// plain allow.
	Dynamic        bool     `json:"dynamic"`
	DynamicReasons []string `json:"dynamic_reasons"`
	// ForkBomb is true for functions that call themselves or each other
	// with a call in a pipe or in the background (`:(){ :|:& };:` in any
	// spelling, `a(){ b|b& }; b(){ a; }; a`), and for an endless loop
	// that starts background jobs.
	ForkBomb bool `json:"fork_bomb"`
	// Network lists /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT targets used
	// anywhere (redirections or operands).
	Network []string `json:"network"`
	// Error is non-empty when the string cannot be parsed or exceeds a
	// bound; the gate denies such a command.
	Error string `json:"error"`
}

// Command is one simple command that would run.
type Command struct {
	// Name is the basename of the program after static expansion
	// ("rm" for `/bin/rm`, `\rm`, `"r"m`, `{rm,-rf,/}`, `$'\x72m'`). Empty
	// when the name is dynamic.
	Name string `json:"name"`
	// Argv is the statically expanded argument vector, wrappers removed
	// (for `sudo -u root rm -rf /` it is ["rm","-rf","/"]).
	Argv []string `json:"argv"`
	// Opts are the option names given, without dashes, short clusters
	// split: `-rf --no-preserve-root` gives ["r","f","no-preserve-root"].
	// A long option's `=value` is dropped. Options end at `--`.
	Opts []string `json:"opts"`
	// Operands are the non-option arguments after argv[0], in order.
	Operands []string `json:"operands"`
	// Paths are the operands (and option values) that name files,
	// made absolute against the tracked cwd, `~` expanded, lexically
	// cleaned, plus the targets of the command's redirections. The gate
	// resolves symlinks afterwards.
	Paths []string `json:"paths"`
	// Writes are the absolute targets of this command's output
	// redirections (`>`, `>>`, `&>`, `>|`, `<>`) and the files it creates,
	// changes or removes (tee, sed -i, cp/mv/install targets, rm, chmod,
	// -o FILE, …). Every write is also in Paths.
	Writes []string `json:"writes"`
	// Assigns are the names of environment variables set for this command
	// (`FOO=1 cmd`, `env FOO=1 cmd`, `export FOO=…` before it in a list).
	Assigns []string `json:"assigns"`
	// Depth is the nesting depth: 0 at top level, +1 for each bash -c,
	// eval, command substitution, find -exec, xargs, here-doc shell.
	Depth int `json:"depth"`
	// Via lists the wrappers and nestings that led here, outermost first,
	// e.g. ["sudo", "bash -c"], ["$()"], ["find -exec"], ["xargs"].
	Via []string `json:"via"`
	// Stdin says where standard input comes from when that matters:
	// "pipe" (right side of |), "heredoc", "herestring", "file" or "".
	Stdin string `json:"stdin"`
	// Dynamic is true when this command's name is not static.
	Dynamic bool `json:"dynamic"`
	// Function is true when the name is a shell function the script
	// surely defined before this call, in this shell: the function runs,
	// not a program of that name. Its body's commands are listed where
	// it is called. A call of a function that may be absent (defined in a
	// branch, exported to a child shell, after an unset that may have
	// removed it, in a loop body that may remove it, anywhere after a
	// trap is set or a script sourced), a recursive call, and a call in a
	// shell other than bash or sh are not marked.
	Function bool `json:"function"`
	// Dests are the network destinations the command would connect to:
	// URLs, hosts, proxies, git remotes, package registries, DNS names.
	Dests []Dest `json:"dests"`
	// Marks are risk facts about this command, found in Go so policies
	// never parse strings. See the Mark kinds.
	Marks []Mark `json:"marks"`
}

// Mark is one risk fact about a command.
type Mark struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Mark kinds. Policies match on these constants.
const (
	// MarkDangerousEnv: an assignment (or read, printf -v, mapfile,
	// getopts into a variable) of PATH, LD_PRELOAD, LD_LIBRARY_PATH,
	// LD_AUDIT, BASH_ENV, ENV, PROMPT_COMMAND, IFS, GIT_SSH_COMMAND,
	// GIT_EXEC_PATH, GIT_CONFIG*, PAGER, GIT_PAGER, EDITOR, VISUAL,
	// PYTHONPATH, PYTHONSTARTUP, NODE_OPTIONS, PERL5OPT, RUBYOPT, … Detail
	// is the variable name.
	MarkDangerousEnv = "dangerous_env"
	// MarkExecFlag: an option that makes the program run another program
	// (sort --compress-program, git -c alias.x=!…, git -c core.sshCommand,
	// tar --to-command / --use-compress-program / --checkpoint-action,
	// rsync -e, zip -TT, find -exec (the nested command is listed too),
	// less/man with a shell escape, sed `e` command, ssh host COMMAND, …).
	// Detail names the option.
	MarkExecFlag = "exec_flag"
	// MarkInlineCode: an interpreter given code inline (python -c, perl -e,
	// ruby -e, node -e/-p, php -r, awk with system()/pipes/getline from a
	// command, lua -e, osascript -e, …). Detail is "NAME OPT".
	MarkInlineCode = "inline_code"
	// MarkStdinShell: a shell or interpreter reading its program from
	// standard input (pipe, here-doc, here-string, `bash -s`). Detail is
	// the source ("pipe", "heredoc", "herestring").
	MarkStdinShell = "stdin_shell"
	// MarkDownloadToShell: the output of a downloader (curl, wget, fetch,
	// nc, …) or of a decoder (base64 -d, xxd -r, openssl enc -d) piped
	// into a shell or interpreter. A shell reading a standard input whose
	// source is not followed (inside >(…), in a function body, after exec
	// <…, from <&3) counts as fed by the first producer anywhere in the
	// string. Detail names the producer.
	MarkDownloadToShell = "download_to_shell"
	// MarkRunsProject: the command runs code the project contains (make
	// recipes, npm and yarn scripts, npx, go run and go generate, cargo
	// run). The sandbox confines that code like any program. Detail names
	// the runner.
	MarkRunsProject = "runs_project"
	// MarkNetworkDevice: /dev/tcp or /dev/udp used. Detail is the path.
	MarkNetworkDevice = "network_device"
	// MarkRunsScript: runs a script file by path (`./x.sh`, `bash x.sh`,
	// `source x`, `python3 x.py`). Detail is the script path.
	MarkRunsScript = "runs_script"
	// MarkPrivilege: ran through sudo, su, doas, pkexec, run0, setpriv
	// or another wrapper that changes the user or the capabilities
	// (runuser, gosu, capsh, chpst -u, …). Detail names the wrapper.
	MarkPrivilege = "privilege"
	// MarkInterpreter: the command is a shell or general interpreter
	// (bash, sh, python3, perl, node, …) whatever its arguments.
	MarkInterpreter = "interpreter"
	// MarkReadsEnv: the command prints or reads the environment, where
	// secrets often live (env or printenv without a command, export -p,
	// declare -p, set alone, jq's $ENV and env). Detail names the command.
	MarkReadsEnv = "reads_env"
)

// Redirect is one redirection.
type Redirect struct {
	// Op is the operator as written: ">", ">>", "<", "&>", ">&", "<<",
	// "<<<", "<>", ">|", "&>>".
	Op string `json:"op"`
	// Target is the absolute path for file redirections, the fd for
	// dups ("&2"), or "" for here-docs.
	Target string `json:"target"`
	// Write is true for redirections that create or modify the target.
	Write bool `json:"write"`
}
