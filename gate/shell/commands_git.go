package shell

import (
	"path/filepath"
	"strings"
)

// --- git ---

var gitGlobal = spec("+ C: c: --git-dir= --work-tree= --namespace= --exec-path?! --config-env= --super-prefix= --list-cmds= p P " +
	"--paginate --no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --version --help")

var gitSub = map[string]*optSpec{
	"commit":        spec("m: F: C: c: t: S:: --message= --file= --reuse-message= --reedit-message= --template= --author= --date= --fixup= --squash= --cleanup= --trailer= --pathspec-from-file= --gpg-sign?"),
	"checkout":      spec("b: B: --orphan= --conflict= --pathspec-from-file="),
	"switch":        spec("c: C: --create= --force-create= --orphan= --conflict="),
	"clone":         spec("b: o: c: j: u: --branch= --origin= --config= --depth= --reference= --reference-if-able= --template= --upload-pack=! --separate-git-dir= --shallow-since= --shallow-exclude= --jobs= --filter= --server-option= --bundle-uri= --ref-format= --revision="),
	"fetch":         spec("j: o: --upload-pack=! --depth= --deepen= --shallow-since= --shallow-exclude= --refmap= --server-option= --jobs= --negotiation-tip= --filter= --recurse-submodules?"),
	"pull":          spec("j: o: s: X: --upload-pack= --depth= --deepen= --shallow-since= --shallow-exclude= --server-option= --jobs= --strategy= --strategy-option= --recurse-submodules?"),
	"push":          spec("o: --receive-pack=! --exec=! --repo= --push-option= --signed? --force-with-lease? --recurse-submodules="),
	"ls-remote":     spec("--upload-pack= --sort= o: --server-option="),
	"archive":       spec("o: --output= --format= --prefix= --remote= --exec=! --add-file= --add-virtual-file="),
	"rebase":        spec("x: s: X: S:: --exec=! --onto= --strategy= --strategy-option= --gpg-sign?"),
	"stash":         spec("m: --message= --pathspec-from-file="),
	"tag":           spec("m: F: u: --message= --file= --local-user= --cleanup= --sort= --format= --contains= --points-at="),
	"config":        spec("f: --file= --blob= --type= --default= --comment= --value="),
	"grep":          spec("e: f: m: A: B: C: O:: --max-depth= --max-count= --open-files-in-pager?"),
	"log":           spec("n: L: --max-count= --skip= --since= --until= --after= --before= --author= --committer= --grep= --format? --pretty? --date= --decorate?"),
	"show":          spec("--format? --pretty? --date="),
	"diff":          spec("U: --unified= --diff-filter= --stat? --color? --word-diff? --output="),
	"reset":         spec("--pathspec-from-file="),
	"restore":       spec("s: --source= --pathspec-from-file="),
	"add":           spec("--chmod= --pathspec-from-file="),
	"rm":            spec("--pathspec-from-file="),
	"apply":         spec("p: C: --directory= --exclude= --include= --build-fake-ancestor= --whitespace="),
	"am":            spec("p: C: S:: --directory= --exclude= --include= --whitespace= --patch-format="),
	"difftool":      spec("x: t: --extcmd= --tool="),
	"mergetool":     spec("t: --tool="),
	"submodule":     spec("+ q --quiet --cached"),
	"bisect":        spec("+"),
	"worktree":      spec("b: B: --reason="),
	"branch":        spec("u: t: --set-upstream-to= --track? --format= --sort= --contains= --merged? --no-merged? --points-at="),
	"remote":        spec("t: m: --mirror?"),
	"filter-branch": spec("d: --env-filter= --tree-filter= --index-filter= --parent-filter= --msg-filter= --commit-filter= --tag-name-filter= --subdirectory-filter= --prune-empty --original= --state-branch= --setup="),
}

// gitCommandKeys hold a command (or program) git runs; gitExecKeys only
// make git run something else (hooks, config files, transports).
var gitCommandKeys = set("core.sshcommand core.pager core.editor core.fsmonitor core.askpass core.gitproxy credential.helper sequence.editor diff.external gpg.program uploadpack.packobjectshook interactive.difffilter core.alternaterefscommand")
var gitExecKeys = set("core.hookspath protocol.allow protocol.ext.allow include.path init.templatedir web.browser")
var reGitKey = lazyRegexp(`^(credential\..+\.helper|pager\..+|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+\.(clean|smudge|process)|gpg\..+\.program|browser\..+\.cmd|man\..+\.cmd|difftool\..+\.cmd|mergetool\..+\.cmd|remote\..+\.(uploadpack|receivepack|proxy)|includeif\..+\.path|protocol\..+\.allow|url\..+\.insteadof)$`)

// gitConfig checks one configuration assignment for programs git would run.
func (b *build) gitConfig(key string, val field, hasVal bool, how string) {
	k := strings.ToLower(key)
	switch {
	case strings.HasPrefix(k, "alias."):
		if hasVal && (val.dyn || strings.HasPrefix(val.val, "!")) {
			b.mark(MarkExecFlag, how+" "+key)
			if val.dyn {
				b.dynamic(how + " " + key + " of a non-literal")
				return
			}
			b.lenientString(field{val: strings.TrimPrefix(val.val, "!")}, "git alias")
		}
	case gitCommandKeys[k] || reGitKey().MatchString(k) && !strings.HasPrefix(k, "url.") && !strings.HasSuffix(k, ".allow") && !strings.HasSuffix(k, ".path"):
		b.mark(MarkExecFlag, how+" "+key)
		if !hasVal {
			return
		}
		if val.dyn {
			b.dynamic(how + " " + key + " of a non-literal")
			return
		}
		v := val.val
		if k == "credential.helper" || strings.HasSuffix(k, ".helper") {
			if !strings.HasPrefix(v, "!") && !strings.Contains(v, "/") {
				return // a helper name: git credential-NAME
			}
		}
		b.lenientString(field{val: strings.TrimPrefix(v, "!")}, "git "+key)
	case gitExecKeys[k] || reGitKey().MatchString(k):
		b.mark(MarkExecFlag, how+" "+key)
	}
}

func (b *build) git() {
	g := parseOpts(b.args, 1, gitGlobal)
	b.cmd.Opts = append(b.cmd.Opts, g.opts...)
	for _, v := range g.all("C") {
		if v.dyn {
			b.dynamic("path from expansion in git")
			b.cwd = ""
			continue
		}
		if b.cwd != "" || filepath.IsAbs(v.val) {
			b.cwd = resolve(v.val, b.cwd)
			b.addResolved(b.cwd, false)
		}
	}
	for _, v := range g.all("c") {
		key, val, ok := strings.Cut(v.val, "=")
		if v.dyn {
			b.mark(MarkExecFlag, "git -c")
			b.dynamic("git -c of a non-literal")
			continue
		}
		b.gitConfig(key, field{val: val}, ok, "git -c")
	}
	for _, v := range g.all("config-env") {
		key, _, _ := strings.Cut(v.val, "=")
		b.gitConfig(key, field{dyn: true}, false, "git --config-env")
	}
	if g.has("exec-path") {
		if _, ok := g.val("exec-path"); ok {
			b.mark(MarkExecFlag, "git --exec-path")
		}
	}
	b.optPathsOf(g, false, "git-dir", "work-tree")
	if len(g.operands) == 0 {
		return
	}
	subF := b.args[g.operands[0]]
	sub := subF.val
	b.cmd.Operands = append(b.cmd.Operands, sub)
	if subF.dyn {
		b.dynamic("git subcommand from expansion")
		return
	}
	p := parseOpts(b.args, g.operands[0]+1, gitSub[sub])
	b.p = p
	b.takeParsed()
	ops := p.operands
	isPathSub := sub == "add" || sub == "rm" || sub == "mv"
	for k, i := range ops {
		f := b.args[i]
		after := p.afterDashDash >= 0 && k >= p.afterDashDash
		if f.dyn {
			if after || isPathSub {
				b.path(f)
			}
			continue
		}
		if strings.HasPrefix(f.val, "ext::") {
			b.mark(MarkExecFlag, "git ext::")
			b.lenientString(field{val: strings.TrimPrefix(f.val, "ext::")}, "git ext::")
			continue
		}
		if isURL(f.val) || (!after && isRemoteSpec(f.val)) {
			continue
		}
		if after || isPathSub || strings.Contains(f.val, "/") || strings.HasPrefix(f.val, ".") {
			b.path(f)
		}
	}
	b.optPathsOf(p, false, "F", "file", "pathspec-from-file")
	b.optPathsOf(p, true, "output")
	if sub == "archive" {
		b.optPathsOf(p, true, "o")
	}
	if sub == "config" && len(ops) > 0 {
		key := b.args[ops[0]]
		val, has := field{}, false
		if len(ops) > 1 {
			val, has = b.args[ops[1]], true
		}
		if !key.dyn {
			b.gitConfig(key.val, val, has, "git config")
		}
	}
	for _, o := range []string{"upload-pack", "receive-pack", "exec"} {
		if v, ok := p.val(o); ok {
			b.mark(MarkExecFlag, "git --"+o)
			b.lenientString(v, "git --"+o)
		}
	}
	if sub == "clone" {
		if v, ok := p.val("u"); ok {
			b.mark(MarkExecFlag, "git clone -u")
			b.lenientString(v, "git clone -u")
		}
		if n := len(ops); n >= 2 {
			b.write(b.args[ops[n-1]])
		}
	}
	switch sub {
	case "rebase":
		for _, v := range p.all("x", "exec") {
			b.mark(MarkExecFlag, "git rebase --exec")
			b.shellString(v, "git rebase --exec", true)
		}
	case "difftool":
		for _, v := range p.all("x", "extcmd") {
			b.mark(MarkExecFlag, "git difftool --extcmd")
			b.lenientString(v, "git difftool --extcmd")
		}
	case "filter-branch":
		for _, v := range p.vals {
			if strings.HasSuffix(v.name, "-filter") && v.name != "subdirectory-filter" {
				b.mark(MarkExecFlag, "git filter-branch --"+v.name)
				b.shellString(v.val, "git filter-branch --"+v.name, true)
			}
		}
	case "bisect":
		if len(ops) > 0 && b.args[ops[0]].val == "run" {
			b.mark(MarkExecFlag, "git bisect run")
			b.nestedArgv(b.args[ops[0]+1:], "git bisect run", nil)
		}
	case "submodule":
		if len(ops) > 0 && b.args[ops[0]].val == "foreach" {
			rest := b.args[ops[0]+1:]
			for len(rest) > 0 && !rest[0].dyn && strings.HasPrefix(rest[0].val, "-") {
				rest = rest[1:]
			}
			b.mark(MarkExecFlag, "git submodule foreach")
			if len(rest) > 0 {
				b.joinedShell(rest, "git submodule foreach")
			}
		}
	}
}

func (b *build) optPathsOf(p parsed, write bool, names ...string) {
	for _, v := range p.all(names...) {
		b.addPath(v, write)
	}
}
