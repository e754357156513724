package shell

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The tables (option specs, command handlers, wrappers) and regular
// expressions are built on first use rather than at package
// initialisation: every claw process links this package, and most never
// analyse a command.
var loadTables = sync.OnceFunc(func() {
	initHandlers()
	initRunners()
	initToolSpecs()
	initSpecs()
	initWrappers()
})

// lazyRegexp returns a function that compiles expr on its first call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Option arity is described by a small spec language, one string per
// command, with tokens separated by spaces:
//
//   - options end at the first operand (POSIX getopt, wrappers)
//     x        short option without a value (documentation only)
//     x:       short option with a required value: -xV or -x V
//     x::      short option with an optional attached value: -x or -xV
//     --name   long option without a value
//     --name=  long option with a required value: --name=V or --name V
//     --name?  long option with an optional value, attached only: --name=V
//     …!       (after any long option) the option runs a program or code
//
// Unknown options take no value. Long options listed in a spec may be
// abbreviated to any unique prefix, as getopt_long allows; the parser
// reports the full name.
//
// A spec is parsed on its first use (see [optSpec.load]).
type optSpec struct {
	src   string
	once  sync.Once
	posix bool
	short [128]uint8 // argNone, argRequired, argOptional
	long  map[string]uint8
	runs  map[string]bool // long options marked !
	names []string        // long names in spec order, for prefix matching
}

const (
	argNone uint8 = iota
	argRequired
	argOptional
)

func spec(s string) *optSpec { return &optSpec{src: s} }

// load parses the spec on its first call and returns it.
func (sp *optSpec) load() *optSpec {
	sp.once.Do(sp.parse)
	return sp
}

func (sp *optSpec) parse() {
	sp.long = map[string]uint8{}
	sp.runs = map[string]bool{}
	for _, tok := range strings.Fields(sp.src) {
		switch {
		case tok == "+":
			sp.posix = true
		case strings.HasPrefix(tok, "--"):
			name, kind := tok[2:], argNone
			name, runs := strings.CutSuffix(name, "!")
			if n, ok := strings.CutSuffix(name, "="); ok {
				name, kind = n, argRequired
			} else if n, ok := strings.CutSuffix(name, "?"); ok {
				name, kind = n, argOptional
			}
			sp.long[name] = kind
			sp.runs[name] = runs
			sp.names = append(sp.names, name)
		default:
			c := tok[0]
			kind := argNone
			switch tok[1:] {
			case ":":
				kind = argRequired
			case "::":
				kind = argOptional
			}
			if c < 128 {
				sp.short[c] = kind
			}
		}
	}
}

// resolveLong returns the full name of a possibly abbreviated long option
// and its arity (see [abbrev]; the options that run something are marked
// with ! in the spec). A name it cannot resolve is kept as written, with
// no value.
func (sp *optSpec) resolveLong(name string) (string, uint8) {
	sp.load()
	if full, ok := abbrev(name, sp.names, func(n string) bool { return sp.runs[n] }); ok {
		return full, sp.long[full]
	}
	return name, argNone
}

// abbrev resolves name, which may abbreviate one of names (be a prefix of
// it), as getopt_long, tmux, PowerShell, emacs, gdb and sqlite3 take
// abbreviations: a name in names is itself, and a prefix of one name is
// that name. A prefix of several is an error for the program, but a
// version of it that knows fewer names or more may take it, so it is taken
// as the first of them that runs something (runs says which do): an
// ambiguous prefix that could run something is treated as running it. ok
// is false for a name that abbreviates none of names, or several of which
// none runs anything.
func abbrev(name string, names []string, runs func(string) bool) (full string, ok bool) {
	if slices.Contains(names, name) {
		return name, true
	}
	first, count := "", 0
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			if count == 0 {
				first = n
			}
			count++
		}
	}
	if count == 1 {
		return first, true
	}
	for _, n := range names {
		if strings.HasPrefix(n, name) && runs(n) {
			return n, true
		}
	}
	return "", false
}

// optVal is the value given to an option.
type optVal struct {
	name string
	val  field
	// next is the index of the first argument after the option and its
	// value.
	next int
}

// parsed is the result of splitting arguments into options and operands.
type parsed struct {
	opts     []string
	vals     []optVal
	operands []int // indices into the argument slice
	// afterDashDash is the index in operands of the first operand that
	// followed "--", or -1.
	afterDashDash int
	// end is the index of the first argument not consumed as an option
	// (the first operand for POSIX-style parsing).
	end int
}

func (p *parsed) has(names ...string) bool {
	for _, o := range p.opts {
		for _, n := range names {
			if o == n {
				return true
			}
		}
	}
	return false
}

// val returns the last value given to any of the named options.
func (p *parsed) val(names ...string) (field, bool) {
	for i := len(p.vals) - 1; i >= 0; i-- {
		for _, n := range names {
			if p.vals[i].name == n {
				return p.vals[i].val, true
			}
		}
	}
	return field{}, false
}

// all returns every value given to any of the named options, in order.
func (p *parsed) all(names ...string) []field {
	var out []field
	for _, v := range p.vals {
		for _, n := range names {
			if v.name == n {
				out = append(out, v.val)
				break
			}
		}
	}
	return out
}

var emptySpec = spec("")

// parseOpts splits args[from:] into options and operands following sp.
// Dynamic fields are always operands: what they expand to is unknown.
func parseOpts(args []field, from int, sp *optSpec) parsed {
	if sp == nil {
		sp = emptySpec
	}
	sp.load()
	p := parsed{afterDashDash: -1, end: len(args)}
	dashdash := false
	for i := from; i < len(args); i++ {
		a := args[i]
		if dashdash || a.dyn || len(a.val) < 2 || a.val[0] != '-' {
			if sp.posix && !dashdash {
				p.end = i
				for j := i; j < len(args); j++ {
					p.operands = append(p.operands, j)
				}
				return p
			}
			p.operands = append(p.operands, i)
			continue
		}
		if a.val == "--" {
			dashdash = true
			p.afterDashDash = len(p.operands)
			if sp.posix {
				p.end = i + 1
				for j := i + 1; j < len(args); j++ {
					p.operands = append(p.operands, j)
				}
				return p
			}
			continue
		}
		if strings.HasPrefix(a.val, "--") {
			name, val, hasEq := strings.Cut(a.val[2:], "=")
			name, kind := sp.resolveLong(name)
			p.opts = append(p.opts, name)
			switch {
			case hasEq:
				p.vals = append(p.vals, optVal{name, field{val: val}, i + 1})
			case kind == argRequired && i+1 < len(args):
				i++
				p.vals = append(p.vals, optVal{name, args[i], i + 1})
			}
			continue
		}
		cluster := a.val[1:]
		if isDigits(cluster) {
			p.opts = append(p.opts, cluster)
			continue
		}
		for j, r := range cluster {
			name := string(r)
			p.opts = append(p.opts, name)
			kind := argNone
			if r < 128 {
				kind = sp.short[r]
			}
			if kind == argNone {
				continue
			}
			rest := cluster[j+len(name):]
			if rest != "" {
				p.vals = append(p.vals, optVal{name, field{val: rest}, i + 1})
			} else if kind == argRequired && i+1 < len(args) {
				i++
				p.vals = append(p.vals, optVal{name, args[i], i + 1})
			}
			break
		}
	}
	return p
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// specs is the option arity of common commands. A command not listed here
// has options without values. The lists favour options whose value would
// otherwise be mistaken for an operand (a file, a pattern, a program).
var specs = map[string]*optSpec{}

func initSpecs() {
	for names, s := range specSource {
		sp := spec(s)
		for _, n := range strings.Fields(names) {
			specs[n] = sp
		}
	}
}

var specSource = map[string]string{
	"rm":          "--recursive --force --interactive? --one-file-system --no-preserve-root --preserve-root? --dir --verbose --help --version",
	"rmdir":       "--ignore-fail-on-non-empty --parents --verbose",
	"shred":       "n: s: --iterations= --size= --random-source= --remove? --zero --force --exact --verbose",
	"cp":          "S: t: --target-directory= --suffix= --backup? --preserve? --no-preserve= --reflink? --sparse= --update? --recursive --force --interactive --archive --no-clobber --no-dereference --dereference --link --symbolic-link --parents --remove-destination --strip-trailing-slashes --one-file-system --attributes-only --copy-contents --no-target-directory --verbose --context?",
	"mv":          "S: t: --target-directory= --suffix= --backup? --update? --force --interactive --no-clobber --strip-trailing-slashes --no-target-directory --verbose --exchange --no-copy",
	"ln":          "S: t: --target-directory= --suffix= --backup? --force --symbolic --no-dereference --relative --verbose --logical --physical --interactive --no-target-directory",
	"install":     "m: o: g: S: t: --mode= --owner= --group= --suffix= --target-directory= --backup? --strip-program= --context? --directory --strip --compare --preserve-timestamps --verbose",
	"mkdir":       "m: --mode= --parents --verbose --context?",
	"touch":       "d: r: t: --date= --reference= --time= --no-create --no-dereference",
	"truncate":    "s: r: --size= --reference= --no-create --io-blocks",
	"chmod":       "--reference= --recursive --changes --silent --quiet --verbose --preserve-root --no-preserve-root",
	"chown chgrp": "--from= --reference= --recursive --no-dereference --dereference --changes --silent --quiet --verbose --preserve-root --no-preserve-root",
	"grep egrep fgrep zgrep": "e: f: m: A: B: C: d: D: --regexp= --file= --max-count= --after-context= --before-context= --context? " +
		"--directories= --devices= --include= --exclude= --exclude-dir= --exclude-from= --label= --binary-files= --color? --colour? --group-separator= " +
		"--recursive --dereference-recursive --ignore-case --invert-match --word-regexp --line-regexp --count --files-with-matches --files-without-match --line-number --quiet --silent --no-messages --only-matching --extended-regexp --fixed-strings --basic-regexp --perl-regexp --null --null-data --text",
	"rg": "e: f: g: t: T: m: A: B: C: j: M: r: E: d: --regexp= --file= --glob= --iglob= --type= --type-not= --max-count= --after-context= --before-context= --context= " +
		"--threads= --max-columns= --replace= --encoding= --max-depth= --pre=! --pre-glob= --type-add= --type-clear= --sort= --sortr= --colors= --color= --ignore-file= " +
		"--max-filesize= --path-separator= --context-separator= --field-match-separator= --field-context-separator= --dfa-size-limit= --regex-size-limit= --engine= --hyperlink-format= --generate=",
	"sed":                "e: f: l: i:: --expression=! --file=! --line-length= --in-place? --separate --quiet --silent --regexp-extended --null-data --unbuffered --sandbox --debug --posix --follow-symlinks --zero-terminated",
	"awk gawk mawk nawk": "+ f: v: F: e: i: l: E: W: --file=! --assign= --field-separator= --source=! --include=! --load=! --exec=!",
	"tar": "f: C: T: X: I: F: g: K: L: N: b: H: V: --file= --directory= --files-from= --exclude-from= --use-compress-program=! --info-script=! --new-volume-script=! " +
		"--listed-incremental= --starting-file= --tape-length= --newer= --after-date= --newer-mtime= --blocking-factor= --record-size= --format= --label= " +
		"--to-command=! --checkpoint-action=! --checkpoint? --exclude= --owner= --group= --mode= --mtime= --transform= --xform= --rsh-command=! --rmt-command=! " +
		"--suffix= --backup? --volno-file= --index-file= --strip-components= --occurrence? --sort= --warning= --quoting-style= --add-file= --exclude-tag= " +
		"--exclude-tag-under= --exclude-tag-all= --exclude-ignore= --exclude-ignore-recursive= --hole-detection= --owner-map= --group-map= --pax-option= " +
		"--extract --get --create --list --append --update --delete --diff --compare --concatenate --catenate --gzip --gunzip --bzip2 --xz --zstd --lzip --lzma --lzop " +
		"--compress --uncompress --auto-compress --verbose --keep-old-files --overwrite --absolute-names --preserve-permissions --same-permissions --dereference " +
		"--one-file-system --totals --wildcards --no-wildcards --remove-files --verify --touch --unlink-first --recursive-unlink --sparse --ignore-zeros " +
		"--incremental --multi-volume --null --no-null --to-stdout --keep-newer-files --skip-old-files --same-owner --no-same-owner --no-same-permissions",
	"head tail":     "n: c: s: --lines= --bytes= --sleep-interval= --pid= --max-unchanged-stats= --follow? --retry --quiet --silent --verbose --zero-terminated",
	"sort":          "o: k: t: S: T: --output= --key= --field-separator= --buffer-size= --temporary-directory= --compress-program=! --files0-from= --parallel= --random-source= --batch-size= --sort= --check?",
	"uniq":          "f: s: w: --skip-fields= --skip-chars= --check-chars= --all-repeated? --group?",
	"cut":           "b: c: d: f: --bytes= --characters= --delimiter= --fields= --output-delimiter=",
	"ls":            "I: T: w: --ignore= --hide= --tabsize= --width= --format= --sort= --time= --time-style= --color? --block-size= --quoting-style= --indicator-style=",
	"du":            "d: B: t: X: --max-depth= --exclude= --exclude-from= --threshold= --block-size= --time? --time-style= --files0-from=",
	"df":            "B: t: x: --block-size= --type= --exclude-type= --output?",
	"wc":            "--files0-from=",
	"diff":          "C: U: D: I: F: L: S: W: x: X: --unified? --context? --label= --ignore-matching-lines= --exclude= --exclude-from= --starting-file= --width= --tabsize= --from-file= --to-file= --color?",
	"xxd":           "c: g: l: o: s: n: --cols= --groupsize= --len= --offset= --seek= --name=",
	"base64 base32": "w: --wrap= --decode --ignore-garbage",
	"tee":           "--output-error? --append --ignore-interrupts",
	"curl": "o: d: H: X: u: A: e: b: c: K: T: F: x: m: r: w: E: D: z: C: Y: y: U: Q: t: P: " +
		"--output= --data= --data-raw= --data-binary= --data-urlencode= --data-ascii= --header= --request= --user= --user-agent= --referer= " +
		"--cookie= --cookie-jar= --config= --upload-file= --form= --form-string= --proxy= --max-time= --connect-timeout= --range= --write-out= " +
		"--cert= --key= --cacert= --capath= --dump-header= --time-cond= --continue-at= --speed-limit= --speed-time= --proxy-user= --quote= " +
		"--telnet-option= --ftp-port= --url= --output-dir= --retry= --retry-delay= --retry-max-time= --limit-rate= --max-filesize= --resolve= " +
		"--connect-to= --interface= --dns-servers= --unix-socket= --abstract-unix-socket= --netrc-file= --trace= --trace-ascii= --stderr= --json= " +
		"--variable= --oauth2-bearer= --aws-sigv4= --ciphers= --preproxy= --proxy-header= --mail-from= --mail-rcpt= --max-redirs= --etag-save= --etag-compare= " +
		"--noproxy= --socks4= --socks4a= --socks5= --socks5-hostname= --proxy-cacert= --proxy-capath= --proxy-cert= --proxy-key= --proxy-pass= " +
		"--cert-type= --key-type= --pass= --pinnedpubkey= --tls-max= --local-port= --keepalive-time= --expect100-timeout= --parallel-max= " +
		"--request-target= --doh-url= --alt-svc= --hsts= --curves= --proxy-ciphers= --tls13-ciphers= --proxy-tls13-ciphers= --happy-eyeballs-timeout-ms= " +
		"--remote-name --remote-name-all --location --silent --show-error --fail --insecure --include --head --verbose --compressed --create-dirs",
	"wget": "O: o: a: P: i: t: T: w: Q: U: e: B: D: X: I: R: A: l: " +
		"--output-document= --output-file= --append-output= --directory-prefix= --input-file= --tries= --timeout= --wait= --quota= --user-agent= " +
		"--execute=! --base= --domains= --exclude-domains= --include-directories= --exclude-directories= --reject= --accept= --level= --header= " +
		"--post-data= --post-file= --body-data= --body-file= --method= --user= --password= --http-user= --http-password= --load-cookies= --save-cookies= " +
		"--config= --use-askpass=! --referer= --limit-rate= --bind-address= --ca-certificate= --certificate= --private-key= --ca-directory= " +
		"--read-timeout= --dns-timeout= --connect-timeout= --waitretry= --restrict-file-names= --default-page= --cut-dirs= --progress= --warc-file= --rejected-log=",
	"ssh":                              "+ B: b: c: D: E: e: F: I: i: J: L: l: m: O: o: p: Q: R: S: W: w:",
	"scp":                              "c: D: F: i: J: l: o: P: S: X:",
	"sftp":                             "B: b: c: D: F: i: J: l: o: P: R: S: s: X:",
	"rsync":                            "e: f: T: B: M: --rsh=! --rsync-path=! --filter= --exclude= --exclude-from= --include= --include-from= --files-from= --temp-dir= --compare-dest= --copy-dest= --link-dest= --backup-dir= --suffix= --log-file= --log-file-format= --password-file= --partial-dir= --chmod= --chown= --usermap= --groupmap= --timeout= --contimeout= --port= --sockopts= --bwlimit= --max-size= --min-size= --max-delete= --block-size= --compress-level= --compress-choice= --checksum-choice= --out-format= --remote-option= --only-write-batch= --write-batch= --read-batch= --iconv= --modify-window= --address= --info= --debug= --stop-after= --stop-at= --mkpath --recursive --archive --verbose --delete --dry-run",
	"zip":                              "b: n: t: P: x: i: Z: O: A: --temp-path= --suffixes= --from-date= --password= --exclude= --include= --compression-method= --output-file= --unzip-command=!",
	"unzip":                            "d: x: P: Z:",
	"less more":                        "b: h: j: k: o: O: p: P: t: T: x: y: z: --log-file= --LOG-FILE= --pattern= --prompt= --tag= --tag-file= --tabs= --window= --shift=",
	"man":                              "C: M: P: L: S: m: e: p: r: E: H:: T:: --config-file= --manpath= --pager=! --locale= --sections= --systems= --extension= --preprocessor= --prompt= --encoding= --html?! --troff-device?",
	"vim vi nvim view ex vimdiff gvim": "c: S: u: U: i: T: w: W: t: q: --cmd=! --startuptime= --servername= --remote-send=! --remote-expr=!",
	"jq":                               "f: L: --from-file= --indent= --arg= --argjson= --slurpfile= --rawfile=",
	"make gmake":                       "C: f: I: j: l: o: W: --directory= --file= --makefile= --include-dir= --jobs? --load-average? --old-file= --assume-old= --what-if= --new-file= --assume-new= --eval=! --output-sync?",
	"kill":                             "s: n: --signal= --queue= --timeout=",
	"pkill pgrep":                      "s: g: G: P: s: t: u: U: F: --signal= --pgroup= --group= --parent= --session= --terminal= --euid= --uid= --pidfile= --ns= --nslist=",
	"killall":                          "s: u: o: y: --signal= --user= --older-than= --younger-than=",
	"docker podman":                    "+ c: H: l: --config= --context= --host= --log-level= --tlscacert= --tlscert= --tlskey=",
	"kubectl":                          "n: s: --namespace= --context= --cluster= --kubeconfig= --server= --user= --token=",
	"go":                               "+ C:",
	"cargo":                            "+ C: Z: --config= --color= --manifest-path=",
	"npm":                              "+ C: w: --prefix= --workspace= --userconfig= --registry= --cache= --loglevel=",
	"yarn pnpm":                        "+ C: --cwd= --dir= --filter=",
	"mktemp":                           "p: t: --tmpdir? --suffix=",
	"date":                             "d: f: r: s: I:: --date= --file= --reference= --set= --iso-8601? --rfc-3339=",
	"patch":                            "p: i: o: r: B: D: F: V: Y: z: --strip= --input= --output= --reject-file= --directory= d: --prefix= --suffix= --basename-prefix=",
	"openssl":                          "+",
	"crontab":                          "u: --user=",
	"at batch":                         "q: f: t: --file=",
	"split":                            "a: b: l: n: C: t: --suffix-length= --bytes= --lines= --number= --line-bytes= --separator= --additional-suffix= --numeric-suffixes? --hex-suffixes? --filter=",
	"nl":                               "b: d: f: h: i: l: n: s: v: w:",
	"paste":                            "d: --delimiters=",
	"join":                             "a: e: j: o: t: v: 1: 2:",
	"tr":                               "",
	"file":                             "e: f: F: m: P: --exclude= --files-from= --separator= --magic-file= --parameter=",
	"stat":                             "c: --format= --printf=",
	"readlink realpath":                "--relative-to= --relative-base=",
	"strings":                          "n: t: e: T: --bytes= --radix= --encoding= --target=",
	"python python2 python3":           "+ c: m: W: X: Q: --check-hash-based-pycs=",
	"node nodejs":                      "+ e: p: r: C: --eval=! --print=! --require=! --import=! --loader=! --experimental-loader=! --input-type= --conditions= --title= --env-file= --env-file-if-exists= --inspect? --inspect-brk? --stack-size=",
	"ruby":                             "+ e: r: I: C: E: x:: F: i:: W:: --encoding= --external-encoding= --internal-encoding= --enable= --disable= --dump=",
	"perl":                             "+ e: E: I: M: m: x:: i:: l:: 0:: C:: d:: D:: F: V::",
	"php":                              "+ r: f: B: R: E: F: c: d: z: t: S:",
	"lua luajit":                       "+ e: l:",
	"Rscript":                          "+ e: --file=!",
	"osascript":                        "+ e: l: s:",
	"tclsh wish":                       "+",
	"deno bun":                         "+",
}

// subcommandTools take a subcommand as their first operand; it is not a
// path.
var subcommandTools = set("go cargo npm npx yarn pnpm pnpx bun deno docker podman kubectl helm terraform systemctl journalctl apt apt-get dnf yum pacman brew pip pip3 pipx uv poetry gh gcloud aws az rustup nix snap flatpak service make gmake ninja cmake mvn gradle openssl git")

// noPathTools never take file operands.
var noPathTools = set("machinectl nc ncat netcat socat telnet ping ping6 host dig nslookup traceroute ssh curl wget echo printf kill pkill killall pgrep true false : sleep date whoami id uname hostname seq expr yes pwd export unset alias unalias type which whereis hash help jobs wait exit return shift set shopt read getopts let declare local readonly typeset trap ulimit umask nproc printenv basename dirname tr test [ env nice renice ionice chrt taskset timeout watch xargs parallel sudo doas su pkexec run0 command builtin exec time nohup eval getent groups users who w uptime tput clear reset history fc bg fg disown logout caller compgen complete enable mapfile readarray source . cd pushd popd dirs")

// destructive commands: a dynamic operand of one of these makes the
// command dynamic, whatever position it is in.
var destructive = set("rm rmdir unlink shred truncate mv cp ln install chmod chown chgrp chattr setfacl dd find mkfs mke2fs mkswap wipefs fdisk sfdisk sgdisk parted kill pkill killall tee rsync scp sed perl git tar unzip crontab systemctl reboot shutdown halt poweroff mount umount")

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}
