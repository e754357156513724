package shell

import (
	"strings"
)

var handlers map[string]func(*build)

var (
	bunSpec    = spec("+ e: p: r: --eval=! --print=! --preload=! --cwd= --config= --env-file=")
	trapSpec   = spec("l p P")
	aliasSpec  = spec("p")
	cdSpec     = spec("L P e @")
	hashSpec   = spec("p: d t l r")
	enableSpec = spec("f: a d n p s")
	fcSpec     = spec("e: l n r s")
	npmRunners = set("run run-script rum urn start test t tst exec x restart stop explore")
)

func initHandlers() {
	handlers = map[string]func(*build){
		"eval": (*build).eval, "source": (*build).source, ".": (*build).source,
		"trap": (*build).trap, "alias": (*build).alias,
		"cd": (*build).cd, "pushd": (*build).cd, "popd": (*build).cd,
		"test": (*build).test, "[": (*build).test,
		"find": (*build).find, "xargs": (*build).xargs, "parallel": (*build).parallel, "watch": (*build).watch,
		"ssh": (*build).ssh, "scp": (*build).scp, "sftp": (*build).sftp, "rsync": (*build).rsync,
		"git": (*build).git, "tar": (*build).tar, "zip": (*build).zip, "unzip": (*build).unzip,
		"sort": (*build).sort, "sed": (*build).sed, "tee": (*build).tee,
		"grep": (*build).grep, "egrep": (*build).grep, "fgrep": (*build).grep, "zgrep": (*build).grep, "rg": (*build).grep,
		"chmod": (*build).chmod, "chown": (*build).chmod, "chgrp": (*build).chmod,
		"dd": (*build).dd, "kill": (*build).kill,
		"cp": (*build).copyLike, "mv": (*build).copyLike, "ln": (*build).copyLike, "install": (*build).copyLike,
		"curl": (*build).curl, "wget": (*build).wget, "openssl": (*build).openssl,
		"make": (*build).make, "gmake": (*build).make,
		"npm": (*build).pkgRunner, "npx": (*build).pkgRunner, "yarn": (*build).pkgRunner, "pnpm": (*build).pkgRunner,
		"pnpx": (*build).pkgRunner, "bunx": (*build).pkgRunner, "bun": (*build).bun, "deno": (*build).deno,
		"go": (*build).goTool, "cargo": (*build).cargo, "docker": (*build).docker, "podman": (*build).docker,
		"kubectl": (*build).kubectl, "less": (*build).pager, "more": (*build).pager, "man": (*build).man,
		"vim": (*build).vim, "vi": (*build).vim, "nvim": (*build).vim, "view": (*build).vim, "ex": (*build).vim,
		"vimdiff": (*build).vim, "gvim": (*build).vim, "emacs": (*build).emacs,
		"at": (*build).at, "batch": (*build).at, "crontab": (*build).crontab,
		"hash": (*build).hashCmd, "enable": (*build).enableCmd,
		"printenv": (*build).readsEnv, "env": (*build).readsEnv, "set": (*build).setCmd, "jq": (*build).jq,
		"shopt": (*build).shopt, "fc": (*build).fc,
		"awk": (*build).awk, "gawk": (*build).awk, "mawk": (*build).awk, "nawk": (*build).awk,
		"perl": (*build).perl, "ruby": (*build).ruby, "node": (*build).node, "nodejs": (*build).node,
		"php": (*build).php, "lua": (*build).lua, "luajit": (*build).lua, "Rscript": (*build).rscript,
		"osascript": (*build).osascript, "pwsh": (*build).pwsh, "powershell": (*build).pwsh,
		"tclsh": (*build).tclsh, "wish": (*build).tclsh,
		"gdb": (*build).gdb, "julia": (*build).julia, "expect": (*build).expect,
		"nc": (*build).netcat, "ncat": (*build).netcat, "netcat": (*build).netcat, "socat": (*build).socat,
	}
}

func (b *build) classify() {
	defer b.netDests()
	n := b.name
	switch {
	case isShell(n):
		b.shell()
		return
	case isPython(n):
		b.interp(specs["python"], []string{"c"}, nil, "m")
		return
	}
	if h, ok := handlers[n]; ok {
		h(b)
		return
	}
	if u := unversioned(n); u != n {
		if h, ok := handlers[u]; ok {
			h(b)
			return
		}
	}
	b.generic()
}

// modifying commands change or remove the files they are given.
var modifying = set("rm rmdir unlink shred truncate touch mkdir mkfifo mknod chattr setfacl mkswap wipefs")

// readOpts and writeOpts are option values that name files.
var readOpts = map[string][]string{
	"grep": {"f", "file", "exclude-from"}, "touch": {"r", "reference"}, "truncate": {"r", "reference"},
	"diff": {"from-file", "to-file", "exclude-from"}, "du": {"exclude-from", "files0-from"}, "wc": {"files0-from"},
	"file": {"f", "files-from", "m", "magic-file"}, "patch": {"i", "input", "d"}, "shred": {"random-source"},
	"gcc": {"I", "L"}, "cc": {"I", "L"}, "clang": {"I", "L"}, "g++": {"I", "L"}, "c++": {"I", "L"},
}

var writeOpts = map[string][]string{
	"patch": {"o", "output", "r", "reject-file"}, "gcc": {"o"}, "cc": {"o"}, "clang": {"o"}, "g++": {"o"}, "c++": {"o"},
	"ld": {"o"}, "pandoc": {"o", "output"}, "ssh-keygen": {"f"}, "mktemp": {"p", "tmpdir"},
}

func initToolSpecs() {
	for _, n := range []string{"gcc", "cc", "clang", "g++", "c++", "clang++", "ld"} {
		specs[n] = spec("o: I: L: l: D: U: x:")
	}
	specs["pandoc"] = spec("o: f: t: --output= --from= --to= --template= --metadata= --variable=")
	specs["ssh-keygen"] = spec("f: t: b: C: N: P: E: a: O: n: I: V: Z: s: h: u: z: l: F: R: K: Y:")
}

// generic handles a command without special knowledge: options by the
// arity table, every operand a path unless the tool is known not to take
// files.
func (b *build) generic() {
	b.parse(specs[b.name])
	b.optPaths(false, readOpts[b.name]...)
	b.optPaths(true, writeOpts[b.name]...)
	if noPathTools[b.name] {
		return
	}
	k := 0
	if subcommandTools[b.name] {
		k = 1
	}
	b.operandPaths(k, modifying[b.name] || isDestructive(b.name) && strings.HasPrefix(b.name, "mk"))
}
