package shell

import (
	"path/filepath"
	"slices"
	"strings"
)

// A wrapper is a program that runs another program given in its own
// arguments (sudo, env, timeout, nice, chroot, …). Each one is removed with
// its own options, so that the command judged is the one that runs.
type wrapAction int

const (
	// wrapNext: inv.args now start at the wrapped command.
	wrapNext wrapAction = iota
	// wrapAlone: nothing is wrapped; the wrapper is the command.
	wrapAlone
	// wrapDone: the wrapper runs a shell string, already analysed.
	wrapDone
)

type unwrap struct {
	a    *analyzer
	inv  *invocation
	st   *state
	name string
}

type wrapperFn func(u *unwrap) wrapAction

var wrappers map[string]wrapperFn

// next makes the argument at index start the command, recording the
// wrapper in Via.
func (u *unwrap) next(start int, depth, priv bool) wrapAction {
	inv := u.inv
	inv.args = inv.args[start:]
	inv.via = append(slices.Clip(inv.via), u.name)
	if priv {
		u.privilege()
	}
	if depth {
		inv.depth++
	} else {
		inv.wrappers++
	}
	if u.name != "command" && u.name != "builtin" {
		inv.wrapped = true
	}
	return wrapNext
}

func (u *unwrap) privilege() {
	if !slices.Contains(u.inv.priv, u.name) {
		u.inv.priv = append(slices.Clip(u.inv.priv), u.name)
	}
}

// chdir applies a wrapper's working-directory option.
func (u *unwrap) chdir(f field) {
	if f.dyn {
		u.a.dynamic("working directory from expansion in " + u.name)
		u.inv.cwd = ""
		return
	}
	if u.inv.cwd == "" && !filepath.IsAbs(f.val) {
		return
	}
	u.inv.cwd = resolve(f.val, u.inv.cwd)
	u.inv.paths = append(u.inv.paths, u.inv.cwd)
}

func (u *unwrap) file(f field, write bool) {
	v := f.val
	if f.dyn {
		v = f.path
		u.a.dynamic("path from expansion in " + u.name)
	}
	if v == "" || v == "-" {
		return
	}
	p := resolve(v, u.inv.cwd)
	if write {
		u.inv.writes = append(u.inv.writes, p)
	} else {
		u.inv.paths = append(u.inv.paths, p)
	}
}

// shellString analyses a shell program the wrapper runs (su -c, flock -c).
// A dynamic one leaves the wrapper as the command, marked dynamic.
func (u *unwrap) shellString(f field, via string) wrapAction {
	ns := u.childState()
	if f.dyn {
		u.inv.dynWhy = via + " of a non-literal"
		if f.inner != "" {
			u.inv.later = append(u.inv.later, func() { u.a.lenient(f.inner, ns, via) })
		}
		return wrapAlone
	}
	u.a.nested(f.val, ns, via, true)
	return wrapDone
}

func (u *unwrap) childState() *state {
	ns := u.st.fork()
	inv := u.inv
	ns.cwd, ns.depth, ns.via, ns.priv = inv.cwd, inv.depth, inv.via, inv.priv
	ns.exports = slices.Clone(inv.assigns)
	ns.stdin, ns.stdinPath, ns.body, ns.feeder, ns.pipeText = inv.stdin, inv.stdinPath, inv.body, inv.feeder, inv.pipeText
	ns.writes = append(ns.writes, inv.writes...)
	ns.reads = append(ns.reads, inv.paths...)
	ns.funcs, ns.async = nil, false
	return ns
}

// pipedOutput reports an output file given as "|cmd" or "!cmd", which
// strace and ltrace run as a command.
func pipedOutput(f field) (string, bool) {
	if f.dyn || len(f.val) < 2 || f.val[0] != '|' && f.val[0] != '!' {
		return "", false
	}
	return f.val[1:], true
}

// wdef describes a wrapper that needs no code of its own.
type wdef struct {
	spec     string
	operands int      // operands before the command (timeout DURATION)
	depth    bool     // starts the command one nesting level deeper
	priv     bool     // runs it with other privileges
	alone    []string // options after which no command runs
	cwd      []string // options whose value becomes the working directory
	paths    []string // options whose value is a file read
	writes   []string // options whose value is a file written
	opPaths  bool     // the operands before the command are files
}

func (d wdef) fn() wrapperFn {
	sp := spec(d.spec)
	return func(u *unwrap) wrapAction {
		p := parseOpts(u.inv.args, 1, sp)
		for _, v := range p.all(d.cwd...) {
			u.chdir(v)
		}
		for _, v := range p.all(d.paths...) {
			u.file(v, false)
		}
		for _, v := range p.all(d.writes...) {
			if cmd, ok := pipedOutput(v); ok {
				// strace -o '|cmd' and '!cmd' pipe the output into a
				// command: analysed, and named in Via of what follows
				via := u.name + " -o |"
				u.a.nested(cmd, u.childState(), via, true)
				u.inv.via = append(slices.Clip(u.inv.via), via)
				continue
			}
			u.file(v, true)
		}
		if d.opPaths {
			for k := 0; k < d.operands && k < len(p.operands); k++ {
				u.file(u.inv.args[p.operands[k]], false)
			}
		}
		if p.has(d.alone...) || len(p.operands) <= d.operands {
			if d.priv {
				u.privilege()
			}
			return wrapAlone
		}
		return u.next(p.operands[d.operands], d.depth, d.priv)
	}
}

var wdefs = map[string]wdef{
	"doas":                     {spec: "+ u: C: n s L", priv: true, alone: []string{"C", "L"}},
	"pkexec":                   {spec: "+ --user= --keep-cwd --disable-internal-agent --version --help", priv: true},
	"run0":                     {spec: "+ u: g: D: --user= --group= --nice= --chdir= --setenv= --property= --unit= --slice= --description= --machine= --background= --area= --shell-prompt-prefix= --via-shell --no-ask-password --pty --pipe", priv: true, cwd: []string{"D", "chdir"}},
	"setpriv":                  {spec: "+ d --reuid= --ruid= --euid= --regid= --rgid= --egid= --groups= --inh-caps= --ambient-caps= --bounding-set= --securebits= --pdeathsig= --selinux-label= --apparmor-profile= --landlock-access= --landlock-rule= --clear-groups --keep-groups --init-groups --nnp --no-new-privs --reset-env --dump", priv: true},
	"timeout gtimeout":         {spec: "+ s: k: v --signal= --kill-after= --preserve-status --foreground --verbose", operands: 1},
	"nice gnice":               {spec: "+ n: --adjustment="},
	"nohup gnohup":             {spec: "+"},
	"stdbuf gstdbuf":           {spec: "+ i: o: e: --input= --output= --error="},
	"time gtime":               {spec: "+ p f: o: a v q --format= --output= --append --verbose --portability --quiet", writes: []string{"o", "output"}},
	"exec":                     {spec: "+ a: c l"},
	"setsid":                   {spec: "+ c f w --ctty --fork --wait", depth: true},
	"chroot gchroot":           {spec: "+ --userspec= --groups= --skip-chdir", operands: 1, depth: true, opPaths: true},
	"unshare":                  {spec: "+ S: G: R: w: --setuid= --setgid= --root= --wd= --propagation= --setgroups= --map-user= --map-group= --map-users= --map-groups= --kill-child? --mount? --uts? --ipc? --net? --pid? --user? --cgroup? --time? --monotonic= --boottime= --mount-proc? --fork --map-root-user --map-current-user --map-auto --keep-caps", depth: true, cwd: []string{"w", "wd"}, paths: []string{"R", "root"}},
	"nsenter":                  {spec: "+ t: S: G: r:: w:: m:: u:: i:: n:: p:: U:: C:: T:: --target= --setuid= --setgid= --root? --wd? --mount? --uts? --ipc? --net? --pid? --user? --cgroup? --time? --all --preserve-credentials --no-fork --follow-context --env", depth: true, cwd: []string{"w", "wd"}},
	"ionice":                   {spec: "+ c: n: p: P: u: t --class= --classdata= --pid= --pgid= --uid= --ignore", depth: true, alone: []string{"p", "P", "u", "pid", "pgid", "uid"}},
	"chrt":                     {spec: "+ b d f i o r e R a m p v T: P: D: --batch --deadline --fifo --idle --other --rr --ext --reset-on-fork --all-tasks --max --pid --verbose --sched-runtime= --sched-period= --sched-deadline=", operands: 1, depth: true, alone: []string{"p", "pid", "m", "max"}},
	"taskset":                  {spec: "+ a c p --all-tasks --cpu-list --pid", operands: 1, depth: true, alone: []string{"p", "pid"}},
	"strace":                   {spec: "+ o: e: p: s: u: E: a: b: I: O: P: S: X: --output= --trace= --attach= --string-limit= --user= --env= --signal= --status=", depth: true, writes: []string{"o", "output"}, alone: []string{"p", "attach"}},
	"ltrace":                   {spec: "+ o: e: p: s: u: a: l: n: L: x: --output= --library= --align= --indent=", depth: true, writes: []string{"o", "output"}, alone: []string{"p"}},
	"torsocks":                 {spec: "+ u: p: a: P: i d --user= --pass= --address= --port= --isolate"},
	"proxychains proxychains4": {spec: "+ f: q", paths: []string{"f"}},
	"faketime":                 {spec: "+ f m p: --exclude-monotonic --date-prog=", operands: 1},
	"eatmydata":                {spec: "+"},
	"fakeroot":                 {spec: "+ l: s: i: b: u --lib= --faked= --save-file= --load-file= --unknown-is-real"},
	"unbuffer":                 {spec: "+ p"},
	"xvfb-run":                 {spec: "+ a e: f: n: l s: w: p: --auto-servernum --error-file= --auth-file= --server-num= --listen-tcp --server-args= --wait= --xauth-protocol="},
	"dbus-run-session":         {spec: "+ --config-file= --dbus-daemon="},
	"prlimit": {spec: "+ p: o: c:: d:: e:: f:: i:: l:: m:: n:: q:: r:: s:: t:: u:: v:: x:: y:: --pid= --output= --noheadings --raw --verbose " +
		"--core? --data? --nice? --fsize? --sigpending? --memlock? --rss? --nofile? --msgqueue? --rtprio? --stack? --cpu? --nproc? --as? --locks? --rttime?", alone: []string{"p", "pid"}},
	"numactl":         {spec: "+ i: p: m: N: C: l a b H s S --interleave= --preferred= --preferred-many= --membind= --cpunodebind= --physcpubind= --localalloc --all --balancing --hardware --show --huge --offset= --shmmode= --length= --strict --shm= --file= --touch --dump --dump-nodes", alone: []string{"H", "s", "hardware", "show"}},
	"linux32 linux64": {spec: "+ v R F Z L X B I S T 3 --verbose --addr-no-randomize --fdpic-funcptrs --mmap-page-zero --addr-compat-layout --read-implies-exec --32bit --short-inode --whole-seconds --sticky-timeouts --3gb --4gb --uname-2.6"},
	"cgexec":          {spec: "+ g: --sticky"},
	"ssh-agent":       {spec: "+ c s D d k a: E: O: P: t:", depth: true, alone: []string{"k"}},
	"dbus-launch":     {spec: "+ --version --help --sh-syntax --csh-syntax --auto-syntax --binary-syntax --close-stderr --exit-with-session --exit-with-x11 --autolaunch= --config-file=", depth: true, paths: []string{"config-file"}},
	"firejail":        {spec: "+", depth: true},
	"valgrind":        {spec: "+", depth: true},
	"catchsegv":       {spec: "+"},
	"proot":           {spec: "+ r: b: m: w: q: k: v: R: S: --rootfs= --bind= --mount= --pwd= --cwd= --qemu= --kernel-release= --verbose=", depth: true},
	// Privilege: these run the command as another user or with other
	// capabilities.
	"gosu su-exec setuidgid s6-setuidgid": {spec: "+", operands: 1, priv: true},
	"s6-applyuidgid":                      {spec: "+ u: g: G: U z", priv: true},
	"pfexec":                              {spec: "+ P:", priv: true},
	"lxsudo lxqt-sudo":                    {spec: "+ s d a --su --sudo --askpass", priv: true},
	"please":                              {spec: "+ c: d: r: t: u: a: g: n p w --check= --dir= --reason= --target= --user= --allowenv= --group= --noprompt --purge --warm --list", priv: true, cwd: []string{"d", "dir"}},
}

func initWrappers() {
	wrappers = map[string]wrapperFn{
		"sudo":              wrapSudo,
		"su":                wrapSu,
		"runuser":           wrapRunuser,
		"env":               wrapEnv,
		"command":           wrapCommand,
		"builtin":           wrapBuiltin,
		"busybox":           wrapBusybox,
		"flock":             wrapFlock,
		"sg":                wrapSg,
		"script":            wrapScript,
		"systemd-run":       wrapSystemdRun,
		"toybox":            wrapBusybox,
		"setarch":           wrapSetarch,
		"machinectl":        wrapMachinectl,
		"genv":              wrapEnv,
		"sudo-rs":           wrapSudo,
		"sudoedit":          wrapSudoedit,
		"pleaseedit":        wrapSudoedit,
		"chpst":             wrapChpst,
		"capsh":             wrapCapsh,
		"ksu":               wrapKsu,
		"gksu":              wrapGksu,
		"gksudo":            wrapGksu,
		"kdesu":             wrapGksu,
		"kdesudo":           wrapGksu,
		"beesu":             wrapGksu,
		"envdir":            wrapEnvdir,
		"s6-envdir":         wrapEnvdir,
		"bwrap":             wrapBwrap,
		"start-stop-daemon": wrapStartStopDaemon,
	}
	for names, d := range wdefs {
		for _, n := range strings.Fields(names) {
			wrappers[n] = d.fn()
			specs[n] = spec(d.spec)
		}
	}
	for n, s := range map[string]string{
		"sudo": sudoSpec, "sudo-rs": sudoSpec, "sudoedit": sudoSpec, "su": suSpec, "env": envSpec, "genv": envSpec,
		"command": "+ p v V", "flock": flockSpec, "script": scriptSpec, "chpst": chpstSpec, "ksu": ksuSpec, "gksu": gksuSpec,
	} {
		specs[n] = spec(s)
	}
}

const sudoSpec = "+ u: g: C: D: h: p: r: t: U: T: R: E H i s n b k K S l v e A P V --user= --group= --close-from= --chdir= --host= " +
	"--prompt= --role= --type= --other-user= --command-timeout= --chroot= --preserve-env? --login --shell --non-interactive --background " +
	"--reset-timestamp --remove-timestamp --stdin --askpass --edit --list --validate --preserve-groups --set-home --version --help"

var sudoOpts = spec(sudoSpec)

func wrapSudo(u *unwrap) wrapAction {
	args := u.inv.args
	p := parseOpts(args, 1, sudoOpts)
	for _, v := range p.all("D", "chdir") {
		u.chdir(v)
	}
	u.privilege()
	if p.has("e", "edit") {
		// sudoedit: the operands are files edited as root.
		for _, i := range p.operands {
			u.file(args[i], true)
		}
		return wrapAlone
	}
	k := skipAssigns(u, p.operands)
	if k >= len(p.operands) {
		return wrapAlone
	}
	return u.next(p.operands[k], false, true)
}

// wrapSudoedit: sudoedit FILE… edits the files as root (sudo -e).
func wrapSudoedit(u *unwrap) wrapAction {
	p := parseOpts(u.inv.args, 1, sudoOpts)
	u.privilege()
	for _, i := range p.operands {
		u.file(u.inv.args[i], true)
	}
	return wrapAlone
}

const chpstSpec = "+ u: U: b: e: /: n: l: L: m: d: o: p: f: c: r: t: v P 0 1 2"

var chpstOpts = spec(chpstSpec)

// chpst (runit) runs a command with another user (-u), root directory
// (-/), environment (-e DIR: a variable per file) and limits.
func wrapChpst(u *unwrap) wrapAction {
	p := parseOpts(u.inv.args, 1, chpstOpts)
	priv := p.has("u", "/")
	for _, v := range p.all("/") {
		u.file(v, false)
	}
	if _, ok := p.val("e"); ok {
		u.inv.dynWhy = "variables set from the files of a directory (chpst -e)"
	}
	if len(p.operands) == 0 {
		if priv {
			u.privilege()
		}
		return wrapAlone
	}
	return u.next(p.operands[0], false, priv)
}

var envdirOpts = spec("+ I i n f c L")

// envdir DIR COMMAND (daemontools, s6) sets a variable per file of DIR:
// which ones is not known here.
func wrapEnvdir(u *unwrap) wrapAction {
	p := parseOpts(u.inv.args, 1, envdirOpts)
	if len(p.operands) < 2 {
		return wrapAlone
	}
	u.file(u.inv.args[p.operands[0]], false)
	u.inv.dynWhy = "variables set from the files of a directory (" + u.name + ")"
	return u.next(p.operands[1], false, false)
}

// capsh changes capabilities and ids, then runs /bin/bash (or --shell)
// with the arguments after --, or itself again with those after ==.
func wrapCapsh(u *unwrap) wrapAction {
	u.privilege()
	args := u.inv.args
	shell := field{val: "/bin/bash"}
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			u.inv.dynWhy = "capsh argument from expansion"
			return wrapAlone
		}
		switch {
		case f.val == "--":
			u.inv.args = append([]field{args[0], shell}, args[i+1:]...)
			return u.next(1, true, true)
		case f.val == "==":
			u.inv.args = append([]field{args[0]}, args[i+1:]...)
			i = 0
			args = u.inv.args
		case strings.HasPrefix(f.val, "--shell="):
			shell = field{val: strings.TrimPrefix(f.val, "--shell=")}
		case strings.HasPrefix(f.val, "--chroot="):
			u.file(field{val: strings.TrimPrefix(f.val, "--chroot=")}, false)
		}
	}
	return wrapAlone
}

const ksuSpec = "n: c: r: l: k D p f z Z q"

var ksuOpts = spec(ksuSpec)

// ksu [USER] [options] [-e COMMAND ARGS…] [-a SHELL-ARGS…] (Kerberos su).
func wrapKsu(u *unwrap) wrapAction {
	u.privilege()
	args := u.inv.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn {
			continue
		}
		switch f.val {
		case "-e":
			if i+1 >= len(args) {
				return wrapAlone
			}
			return u.next(i+1, true, true)
		case "-a":
			u.inv.args = append([]field{args[0], {val: "sh"}}, args[i+1:]...)
			return u.next(1, true, true)
		case "-n", "-c", "-r", "-l":
			i++
		}
	}
	return wrapAlone
}

const gksuSpec = "+ u: m: D: c: f: i: p: k l S w P a g d s t n r --user= --message= --description= --preserve-env --login --print-pass --sudo-mode --su-mode --disable-grab --prompt --debug --noignorebutton --attach="

var gksuOpts = spec(gksuSpec)

// gksu, kdesu and the like run a command line (-c CMD, or the operands)
// as root from a graphical prompt.
func wrapGksu(u *unwrap) wrapAction {
	u.privilege()
	p := parseOpts(u.inv.args, 1, gksuOpts)
	if c, ok := p.val("c"); ok {
		return u.shellString(c, u.name)
	}
	if len(p.operands) == 0 {
		return wrapAlone
	}
	return u.shellString(joinFields(u.inv.args[p.end:]), u.name)
}

// skipAssigns records the NAME=VALUE operands in front of a command (env,
// sudo) as assignments and returns the index of the first other operand.
func skipAssigns(u *unwrap, ops []int) int {
	k := 0
	for k < len(ops) {
		f := u.inv.args[ops[k]]
		if f.dyn {
			break
		}
		name, _, ok := strings.Cut(f.val, "=")
		if !ok || name == "" || strings.ContainsAny(name, "/") {
			break
		}
		u.inv.assigns = addNames(u.inv.assigns, name)
		k++
	}
	return k
}

const suSpec = "c: s: g: G: w: l m p P f --command= --session-command= --shell= --group= --supp-group= --whitelist-environment= --login --preserve-environment --pty --fast"

var suOpts = spec(suSpec)

func wrapSu(u *unwrap) wrapAction {
	p := parseOpts(u.inv.args, 1, suOpts)
	u.privilege()
	if c, ok := p.val("c", "command", "session-command"); ok {
		return u.shellString(c, "su -c")
	}
	return wrapAlone
}

var runuserPosix = spec("+ u: c: s: g: G: w: l m p P f --user= --command=! --session-command=! --shell=! --group= --supp-group= --whitelist-environment= --login --preserve-environment --pty")

func wrapRunuser(u *unwrap) wrapAction {
	u.privilege()
	all := parseOpts(u.inv.args, 1, suOpts)
	if c, ok := all.val("c", "command", "session-command"); ok {
		return u.shellString(c, "runuser -c")
	}
	p := parseOpts(u.inv.args, 1, runuserPosix)
	if p.has("u", "user") && len(p.operands) > 0 {
		return u.next(p.operands[0], true, true)
	}
	return wrapAlone
}

const envSpec = "+ i 0 u: C: S: v --ignore-environment --null --unset= --chdir= --split-string= --debug --block-signal? --default-signal? --ignore-signal? --list-signal-handling"

var envOpts = spec(envSpec)

func wrapEnv(u *unwrap) wrapAction {
	for n := 0; ; n++ {
		args := u.inv.args
		p := parseOpts(args, 1, envOpts)
		s, split := optValAt(p, "S", "split-string")
		for _, v := range p.vals {
			if (v.name == "C" || v.name == "chdir") && (!split || v.next <= s.next) {
				u.chdir(v.val)
			}
		}
		if split {
			// env -S splits its string into words and parses them again
			// as its own arguments, followed by the arguments after it.
			if s.val.dyn {
				u.inv.dynWhy = "env -S of a non-literal"
				return wrapAlone
			}
			words, ok := splitEnvString(s.val.val)
			if !ok {
				u.inv.dynWhy = "env -S string that env rejects"
				return wrapAlone
			}
			if n >= u.a.opts.MaxDepth {
				u.a.fail(ErrTooDeep)
				return wrapDone
			}
			u.inv.args = append(append([]field{args[0]}, words...), args[s.next:]...)
			u.name = "env -S"
			continue
		}
		ops := p.operands
		for len(ops) > 0 && !args[ops[0]].dyn && args[ops[0]].val == "-" {
			ops = ops[1:] // a lone - means -i
		}
		k := skipAssigns(u, ops)
		if k >= len(ops) {
			return wrapAlone
		}
		return u.next(ops[k], u.name == "env -S", false)
	}
}

// optValAt returns the first value given to any of the named options.
func optValAt(p parsed, names ...string) (optVal, bool) {
	for _, v := range p.vals {
		if slices.Contains(names, v.name) {
			return v, true
		}
	}
	return optVal{}, false
}

// splitEnvString splits the string of env -S into words as GNU env does
// (coreutils env.c, build_argv): blanks separate words outside quotes;
// '…' and "…" quote, and start a word even when empty; outside single
// quotes a backslash escapes \\ \" \' \$ \# and stands for \t \n \r \v
// \f; \_ separates words outside double quotes and is a space inside
// them; \c, and # at the start of a word, end the string. Inside single
// quotes only \\ and \' are escapes. ${NAME} is the value of a variable,
// unknown here: the word holding it is dynamic. ok is false for a string
// env rejects (an unknown escape, a lone $, an open quote), which runs
// nothing.
func splitEnvString(s string) (words []field, ok bool) {
	var (
		cur      strings.Builder
		started  bool // a word has been started
		dyn      bool // the current word holds a ${NAME}
		sep      = true
		sq, dq   bool
		finished bool // \c or # ended the string
	)
	flush := func() {
		if !started {
			return
		}
		f := field{val: cur.String()}
		if dyn {
			f.dyn, f.why, f.path = true, "variable in env -S string", f.val
		}
		words = append(words, f)
		cur.Reset()
		dyn = false
	}
	// begin starts a new word if a separator came before.
	begin := func() {
		if sep {
			flush()
			started, sep = true, false
		}
	}
loop:
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\'':
			if !dq {
				sq = !sq
				begin()
				continue
			}
		case '"':
			if !sq {
				dq = !dq
				begin()
				continue
			}
		case ' ', '\t', '\n', '\v', '\f', '\r':
			if !sq && !dq {
				sep = true
				continue
			}
		case '#':
			if sep {
				finished = true
				break loop
			}
		case '\\':
			if sq && (i+1 >= len(s) || s[i+1] != '\\' && s[i+1] != '\'') {
				break
			}
			i++
			if i >= len(s) {
				return nil, false
			}
			switch c = s[i]; c {
			case '"', '#', '$', '\'', '\\':
			case '_':
				if !dq {
					sep = true
					continue
				}
				c = ' '
			case 'c':
				if dq {
					return nil, false
				}
				finished = true
				break loop
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'v':
				c = '\v'
			default:
				return nil, false
			}
		case '$':
			if sq {
				break
			}
			end := strings.IndexByte(s[i:], '}')
			if !strings.HasPrefix(s[i:], "${") || end < 0 || !validName(s[i+2:i+end]) {
				return nil, false
			}
			begin()
			cur.WriteString(s[i : i+end+1])
			dyn = true
			i += end
			continue
		}
		begin()
		cur.WriteByte(c)
	}
	if !finished && (sq || dq) {
		return nil, false
	}
	flush()
	return words, true
}

var commandOpts = spec("+ p v V")

func wrapCommand(u *unwrap) wrapAction {
	p := parseOpts(u.inv.args, 1, commandOpts)
	if p.has("v", "V") || len(p.operands) == 0 {
		return wrapAlone // command -v only looks the name up
	}
	return u.next(p.operands[0], false, false)
}

func wrapBuiltin(u *unwrap) wrapAction {
	if len(u.inv.args) < 2 {
		return wrapAlone
	}
	return u.next(1, false, false)
}

func wrapBusybox(u *unwrap) wrapAction {
	args := u.inv.args
	if len(args) < 2 || !args[1].dyn && strings.HasPrefix(args[1].val, "-") {
		return wrapAlone
	}
	return u.next(1, false, false)
}

const flockSpec = "+ s x e u n o E: w: F c: --shared --exclusive --unlock --nonblock --close --conflict-exit-code= --timeout= --no-fork --command= --verbose"

var flockOpts = spec(flockSpec)

func wrapFlock(u *unwrap) wrapAction {
	args := u.inv.args
	p := parseOpts(args, 1, flockOpts)
	if len(p.operands) == 0 {
		return wrapAlone
	}
	f := args[p.operands[0]]
	if !f.dyn && isDigits(f.val) {
		return wrapAlone // flock FD: locks an open descriptor
	}
	u.file(f, false)
	if c, ok := p.val("c", "command"); ok {
		return u.shellString(c, "flock -c")
	}
	if len(p.operands) < 2 {
		return wrapAlone
	}
	g := args[p.operands[1]]
	if !g.dyn && (g.val == "-c" || g.val == "--command") {
		if len(p.operands) < 3 {
			return wrapAlone
		}
		return u.shellString(args[p.operands[2]], "flock -c")
	}
	return u.next(p.operands[1], true, false)
}

// sg GROUP [-c] COMMAND: the command is a string for /bin/sh, run with
// another group.
func wrapSg(u *unwrap) wrapAction {
	args := u.inv.args
	u.privilege()
	if len(args) < 3 {
		return wrapAlone
	}
	rest := args[2:]
	if !rest[0].dyn && rest[0].val == "-c" {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return wrapAlone
	}
	f := joinFields(rest)
	return u.shellString(f, "sg")
}

const scriptSpec = "a e f q t:: c: E: O: I: B: T: m: --append --return --flush --quiet --timing? --command= --echo= --log-out= --log-in= --log-io= --log-timing= --logging-format= --force"

var scriptOpts = spec(scriptSpec)

// script [-c CMD] [FILE]: records a session into FILE.
func wrapScript(u *unwrap) wrapAction {
	args := u.inv.args
	p := parseOpts(args, 1, scriptOpts)
	for _, v := range p.all("O", "B", "T", "log-out", "log-io", "log-timing") {
		u.file(v, true)
	}
	if len(p.operands) > 0 {
		u.file(args[p.operands[0]], true)
	} else {
		u.file(field{val: "typescript"}, true)
	}
	if c, ok := p.val("c", "command"); ok {
		return u.shellString(c, "script -c")
	}
	return wrapAlone
}

var setarchOpts = spec("+ v R F Z L X B I S T 3 --verbose --addr-no-randomize --fdpic-funcptrs --mmap-page-zero --addr-compat-layout --read-implies-exec --32bit --short-inode --whole-seconds --sticky-timeouts --3gb --4gb --uname-2.6 --list")

// setarch ARCH [options] [COMMAND]: the architecture comes first.
func wrapSetarch(u *unwrap) wrapAction {
	args := u.inv.args
	if len(args) < 2 || args[1].dyn || strings.HasPrefix(args[1].val, "-") {
		return wrapAlone
	}
	p := parseOpts(args, 2, setarchOpts)
	if len(p.operands) == 0 {
		return wrapAlone
	}
	return u.next(p.operands[0], false, false)
}

var machinectlOpts = spec("+ M: H: p: E: o: n: s: --machine= --host= --property= --setenv= --output= --lines= --signal= --kill-whom= --uid= --max-addresses= --format= --verify= --no-pager --no-legend --no-ask-password --quiet --all --value --full --read-only --mkdir --force --now --runner=")

// machinectl shell|login [USER@]HOST [COMMAND…] runs a shell or a command,
// possibly as root. Options may also come between the verb and the host.
func wrapMachinectl(u *unwrap) wrapAction {
	args := u.inv.args
	p := parseOpts(args, 1, machinectlOpts)
	if len(p.operands) == 0 {
		return wrapAlone
	}
	sub := args[p.operands[0]]
	if sub.dyn || sub.val != "shell" && sub.val != "login" {
		return wrapAlone
	}
	u.privilege()
	q := parseOpts(args, p.operands[0]+1, machinectlOpts)
	setenv(u, p, q)
	if sub.val != "shell" || len(q.operands) < 2 {
		return wrapAlone
	}
	return u.next(q.operands[1], true, true)
}

// setenv records the NAME=VALUE values of -E/--setenv as assignments.
func setenv(u *unwrap, ps ...parsed) {
	for _, p := range ps {
		for _, v := range p.all("E", "setenv") {
			if name, _, _ := strings.Cut(v.val, "="); !v.dyn && name != "" {
				u.inv.assigns = addNames(u.inv.assigns, name)
			} else if v.dyn {
				u.inv.dynWhy = "variable set from expansion in " + u.name
			}
		}
	}
}

var systemdRunOpts = spec("+ u: p: E: M: H: G: d P q r t --unit= --property= --setenv= --machine= --host= --description= --slice= --working-directory= --nice= --uid= --gid= --on-active= --on-boot= --on-startup= --on-unit-active= --on-unit-inactive= --on-calendar= --timer-property= --path-property= --socket-property= --service-type= --user --system --scope --pty --pipe --wait --collect --quiet --same-dir --shell")

func wrapSystemdRun(u *unwrap) wrapAction {
	p := parseOpts(u.inv.args, 1, systemdRunOpts)
	for _, v := range p.all("working-directory") {
		u.chdir(v)
	}
	setenv(u, p)
	priv := !p.has("user")
	if priv {
		u.privilege()
	}
	for _, v := range p.all("p", "property") {
		// ExecStartPre=, ExecStopPost=, …: more commands the unit runs.
		key, val, _ := strings.Cut(v.val, "=")
		if v.dyn || strings.HasPrefix(key, "Exec") {
			val = strings.TrimLeft(val, "-@:+!|")
			ns := u.childState()
			u.inv.later = append(u.inv.later, func() { u.a.lenient(val, ns, "systemd-run -p "+key) })
			if v.dyn {
				u.inv.dynWhy = "systemd-run property from expansion"
			}
		}
	}
	if len(p.operands) == 0 {
		return wrapAlone
	}
	return u.next(p.operands[0], true, priv)
}

// bwrapArity is the number of values of each bubblewrap option.
var bwrapArity = map[string]int{
	"unshare-all": 0, "share-net": 0, "unshare-user": 0, "unshare-user-try": 0, "unshare-ipc": 0, "unshare-pid": 0, "unshare-net": 0,
	"unshare-uts": 0, "unshare-cgroup": 0, "unshare-cgroup-try": 0, "clearenv": 0, "new-session": 0, "die-with-parent": 0, "as-pid-1": 0,
	"disable-userns": 0, "assert-userns-disabled": 0, "help": 0, "version": 0, "level-prefix": 0,
	"args": 1, "argv0": 1, "userns": 1, "userns2": 1, "pidns": 1, "uid": 1, "gid": 1, "hostname": 1, "chdir": 1, "unsetenv": 1,
	"lock-file": 1, "sync-fd": 1, "remount-ro": 1, "exec-label": 1, "file-label": 1, "proc": 1, "dev": 1, "tmpfs": 1, "mqueue": 1,
	"dir": 1, "seccomp": 1, "add-seccomp-fd": 1, "block-fd": 1, "userns-block-fd": 1, "info-fd": 1, "json-status-fd": 1,
	"cap-add": 1, "cap-drop": 1, "perms": 1, "size": 1, "overlay-src": 1, "tmp-overlay": 1, "ro-overlay": 1,
	"setenv": 2, "bind": 2, "bind-try": 2, "dev-bind": 2, "dev-bind-try": 2, "ro-bind": 2, "ro-bind-try": 2, "bind-fd": 2,
	"ro-bind-fd": 2, "file": 2, "bind-data": 2, "ro-bind-data": 2, "symlink": 2, "chmod": 2,
	"overlay": 3,
}

// bwrap [options] COMMAND…: options take up to three values; one it does
// not know leaves the command unknown. --args reads more options from a
// file descriptor.
func wrapBwrap(u *unwrap) wrapAction {
	args := u.inv.args
	for i := 1; i < len(args); i++ {
		f := args[i]
		if f.dyn || !strings.HasPrefix(f.val, "--") {
			return u.next(i, true, false)
		}
		if f.val == "--" {
			if i+1 >= len(args) {
				return wrapAlone
			}
			return u.next(i+1, true, false)
		}
		name := f.val[2:]
		n, ok := bwrapArity[name]
		if !ok || name == "args" || i+n >= len(args) {
			u.inv.dynWhy = "bwrap option " + f.val + " not understood"
			return wrapAlone
		}
		switch name {
		case "setenv":
			u.inv.assigns = addNames(u.inv.assigns, args[i+1].val)
		case "chdir":
			u.chdir(args[i+1])
		}
		i += n
	}
	return wrapAlone
}

var startStopDaemonOpts = spec("S K T H V x: a: n: u: p: g: c: r: d: N: P: I: k: O: R: s: m b C o q v t --start --stop --status --exec=! --startas=! --name= " +
	"--user= --pidfile= --group= --chuid= --chroot= --chdir= --nicelevel= --procsched= --iosched= --umask= --output= --retry= --signal= " +
	"--make-pidfile --remove-pidfile --background --no-close --oknodo --quiet --verbose --test --ppid= --notify-await --notify-timeout=")

// start-stop-daemon --start --exec PROGRAM [-- ARGS…] starts PROGRAM (or
// --startas) with the arguments after --, as --chuid's user.
func wrapStartStopDaemon(u *unwrap) wrapAction {
	args := u.inv.args
	p := parseOpts(args, 1, startStopDaemonOpts)
	priv := p.has("c", "chuid", "u", "user", "r", "chroot")
	if priv {
		u.privilege()
	}
	prog, ok := p.val("a", "startas")
	if !ok {
		prog, ok = p.val("x", "exec")
	}
	if !ok || !p.has("S", "start") {
		return wrapAlone
	}
	for _, v := range p.all("d", "chdir") {
		u.chdir(v)
	}
	var rest []field
	if p.afterDashDash >= 0 {
		rest = fieldsAt(args, p.operands[p.afterDashDash:])
	}
	u.inv.args = append([]field{args[0], prog}, rest...)
	return u.next(1, true, priv)
}

// joinFields joins words with spaces into one field, as programs that hand
// their arguments to sh -c do.
func joinFields(fs []field) field {
	vals := make([]string, len(fs))
	out := field{}
	for i, f := range fs {
		vals[i] = f.val
		if f.dyn {
			out.dyn = true
		}
	}
	out.val = strings.Join(vals, " ")
	out.path = out.val
	return out
}
