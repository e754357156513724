// Package policies holds claw's built-in Rego policies: the rules that turn
// one proposed action into allow, ask, passphrase or deny, with a risk level,
// stable rule ids and a sandbox plan.
//
// The policies are plain OPA v1 Rego with no custom built-ins, so `opa fmt`,
// `opa check --strict` and `opa test` work on every file. They are embedded
// in the binary ([FS]); the gate compiles [Modules] once per process under
// [Capabilities] and evaluates data.claw.gate.result for each action.
//
// # Layout
//
// Package claw.gate makes the decision; package claw.lib holds helpers that
// user policies may import too.
//
//	main.rego         configuration, user policies, risk, combining, sandbox, result
//	tools.rego        emergency stop, malformed input, unknown tools and autonomy
//	paths.rego        what is read and written, workspace confinement, forbidden paths
//	commands.rego     shell analysis: unparseable, forbidden commands, privilege, marks
//	destructive.rego  destructive patterns (all critical)
//	network.rego      the http tool: URL checks and the allowed_domains allowlist
//	grants.rego       grants (data.claw.grants): an ask a grant covers becomes an allow
//	private.rego      allow_private_cidrs: which non-public destinations a shell command may reach
//	lib.rego          claw.lib helpers (reason, under, glob_base, has_opt, ...)
//	*_test.rego       unit tests (claw.gate_test: tables of cases per rule;
//	                  claw.lib_test); testdata/user holds sample user policies
//	builtin.json      the built-in forbidden paths, merged by Go into the config
//
// # Input
//
// input is the gate's Input document (gate/input.go, gate/shell/types.go),
// built entirely in Go; the policies never parse strings:
//
//	{"version": 1,
//	 "kind": "shell",                       // or file_read, file_write, edit_file, file_list,
//	                                        // http, time, memory_search, tool, unknown
//	 "action": {"tool": "shell", "args": {"command": "rm -rf ./build"}},
//	 "parsed": {"commands": [{"name": "rm", "argv": ["rm", "-rf", "./build"],
//	                          "opts": ["r", "f"], "operands": ["./build"],
//	                          "paths": ["/ws/build"], "writes": [], "assigns": [],
//	                          "depth": 0, "via": [], "stdin": "", "dynamic": false,
//	                          "marks": [{"kind": "privilege", "detail": "sudo"}]}],
//	            "redirects": [{"op": ">", "target": "/ws/out", "write": true}],
//	            "dynamic": false, "dynamic_reasons": [], "fork_bomb": false,
//	            "network": [], "error": ""},
//	 "paths": ["/ws/build"], "writes": [],  // canonical absolute paths
//	 "url": {"scheme": "https", "host": "example.com", "port": 443, "userinfo": false,
//	         "ip": "", "class": "public", "error": ""},
//	 "errors": [],
//	 "context": {"autonomy": "supervised", "workspace": "/ws", "cwd": "/ws",
//	             "home": "/home/u", "channel": "cli", "estop": false,
//	             "conversation": ""}}        // grants may be scoped to one
//
// Every path is canonical and absolute; a path that is not (relative, with
// "." or ".." elements, "//" or a trailing slash) is denied as input.invalid.
// A shell pattern the shell would expand (`/home/u/.s*`) stays in a path as
// written and is judged by what it may expand to.
//
// # Data
//
// data.claw.config is built by Go from config.toml (paths expanded, made
// absolute and cleaned; the built-in forbidden paths of [BuiltinForbiddenPaths]
// merged into forbidden_paths):
//
//	workspace_only              bool, default true
//	forbidden_paths             paths and patterns: * matches within one path
//	                            element, ** across elements ("/proc/*/environ",
//	                            "**/docker.sock"); default []
//	read_paths                  paths readable outside the workspace; default []
//	forbidden_commands          command names; a name also forbids its dotted
//	                            variants (mkfs → mkfs.ext4); default
//	                            ["rm", "shutdown", "reboot", "mkfs", "dd"]
//	allowed_commands            command names, or "*"; default []
//	allowed_domains             hosts for the http tool: "example.com" exactly,
//	                            "*.example.com" its subdomains, "*" every public
//	                            host; default [] (no host)
//	passphrase_enabled          bool, default false
//	passphrase_for              risk levels and rule ids; default []
//	allow_privilege_escalation  bool, default false
//	forbidden_glob              optional: [ForbiddenGlob] of forbidden_paths,
//	                            which the policies otherwise build per decision
//
// An absent key takes its default. The booleans count only when exactly
// true (workspace_only: unless exactly false), so a mistyped value fails
// closed.
//
// # Result
//
// data.claw.gate.result is defined for every input:
//
//	{"decision": "allow|ask|passphrase|deny",
//	 "risk": "low|medium|high|critical",
//	 "reasons": [{"id": "cmd.rm.workspace", "severity": "medium",
//	              "msg": "rm inside the workspace needs approval: /ws/build"}],
//	 "sandbox": {"read": ["/ws"], "write": ["/ws"], "net": false}}
//
// Reasons list the denials first (most severe first), then passphrase and
// approval reasons, then one outcome reason; there is always at least one.
// The sandbox plan reads the workspace and the permitted paths outside it
// (a pattern path gives its directory); it writes the workspace for shell,
// file_write and edit_file (plus permitted writes outside it when
// workspace_only is false); only http gets the network.
//
// # Risk and combining
//
// Base risk by kind: time and memory_search are low; file_read and file_list
// are low inside the workspace and medium outside; file_write and edit_file
// are medium inside and high outside; http GET or HEAD to an allowed host is
// low and any other method medium; shell is medium when every command is
// static and on allowed_commands (or is rm inside the workspace), high
// otherwise; the generic tool kind is medium; a plugin tool is judged by
// the reach its manifest declares: none or reads inside the workspace low,
// a write inside or a read outside medium, a write outside high. The risk is the maximum of
// the base risk and the severity of every rule reason. Marks do not raise
// the base risk: an allowlisted program that runs other code (make,
// python3 script.py, python3 -c) gets a medium approval reason, so it asks
// at supervised and at full autonomy instead of being denied at
// supervised.
//
// Deny rules deny at every autonomy. A denial turns into a passphrase prompt
// only when the passphrase is enabled, every denying rule id is listed in
// passphrase_for and none is critical. Otherwise the passphrase is asked for
// (when enabled) if the risk or an approval reason id is listed in
// passphrase_for, or a user policy asked for it, except where readonly
// denies. Otherwise autonomy decides:
//
//	readonly    allow low-risk file_read, file_list, time, memory_search,
//	            http GET/HEAD and shell commands that write nothing and reach
//	            no network (their sandbox grants no write); deny the rest
//	supervised  low → allow; anything else that no rule denies → ask
//	full        allow at any risk unless an approval rule asks
//
// Risk follows reach: an action whose reach stays in the workspace and
// read_paths, without network, is low whatever program it runs (the
// sandbox confines it); reach beyond (a write outside, a read outside
// read_paths where workspace_only = false permits them) is medium for a
// read or shell command and high for a write tool.
//
// Approval reasons raise an allow to ask and never lower a denial:
// deny > passphrase > ask > allow.
//
// # Rule ids
//
// Deny rules:
//
//	estop                          the emergency stop is engaged (critical)
//	input.invalid                  Go reported input errors, wrong input version,
//	                               invalid workspace, or a non-canonical path (critical)
//	tool.unknown                   the action's kind is not known (critical)
//	autonomy.invalid               autonomy is not readonly, supervised or full (critical)
//	path.outside_workspace         with workspace_only, a read outside the workspace,
//	                               read_paths and safe devices, or a write outside the workspace
//	path.forbidden                 a forbidden path is read, written, reached by a
//	                               recursive command, or may be named by a pattern
//	shell.unparseable              the command cannot be parsed or exceeds a bound (critical)
//	cmd.forbidden                  a command on forbidden_commands
//	priv.escalation                sudo, su, doas, pkexec, run0, setpriv, gosu,
//	                               su-exec, capsh, ksu, chpst -u and their kin
//	shell.network_device           /dev/tcp or /dev/udp
//	http.invalid_url               the URL cannot be parsed (critical)
//	http.scheme                    a scheme other than http or https
//	http.userinfo                  user[:password]@ in the URL
//	http.private_address           a loopback, private, link-local, metadata,
//	                               unspecified, multicast or reserved address
//	http.domain_not_allowed        the host is not on allowed_domains
//	net.domain_not_allowed         a shell command connects to a host (URL, proxy,
//	                               --resolve target, git remote URL, DNS name,
//	                               package registry) not on allowed_domains
//	net.private_address            a shell destination that is not a public address
//	net.userinfo                   user@ in an http(s) destination of a shell command
//	net.invalid_destination        a shell destination that cannot be parsed
//	priv.identity                  set-id bits in any notation (chmod u+s, =4755,
//	                               install -m 4755), setcap, chown root, unshare,
//	                               nsenter, chroot, account, mount and firewall tools
//	persist.config                 git config --global, go env -w, npm/pip config set,
//	                               global installs, systemctl enable, launchctl
//	persist.delayed                at, batch, crontab (but -l), systemd-run
//	persist.workspace_exec         a write to a workspace file that runs code outside
//	                               the sandbox later (.git/hooks, .git/config,
//	                               .gitattributes, .envrc, .npmrc, .cargo/config.toml,
//	                               .vscode/, .claude/, .mcp.json ...), git config of a
//	                               key that runs a program, direnv allow
//	cred.printer                   git credential fill, gh auth token, aws configure get,
//	                               kubectl config view --raw, ssh-add -L and their kin
//	proc.control                   killall, pkill, systemctl or service stop/kill/restart
//	user.invalid_reason            a user policy produced something that is not a reason
//	passphrase.unavailable         a user policy wants the passphrase but none is set
//	plugin.changed                 a plugin's files differ from the pins of its install
//	plugin.unavailable             the plugin is not installed, has no such tool, or
//	                               was not looked up
//	plugin.invalid_args            the arguments fail the tool's JSON Schema (medium)
//
// Destructive rules (all critical; never a passphrase, never lifted):
//
//	destructive.rm_root            rm -r on /, /*, a top-level or system directory,
//	                               home or an ancestor, an ancestor of the workspace;
//	                               rm --no-preserve-root
//	destructive.find_delete        find -delete or -exec rm on such a directory
//	destructive.mkfs               mkfs, mkfs.*, mke2fs, mkswap, wipefs, ...
//	destructive.dd_device          dd of=/dev/... (safe devices excepted)
//	destructive.block_device       any write to a disk, partition, loop, dm or md
//	                               device, or /dev/mem, /dev/kmem, /dev/port
//	destructive.fork_bomb          a fork bomb in any spelling
//	destructive.power              shutdown, reboot, halt, poweroff, kexec; init or
//	                               telinit 0, 1 or 6; systemctl poweroff, reboot, ...
//	destructive.recursive_chmod    chmod, chown, chgrp, setfacl or chattr -R on a
//	                               critical directory
//	destructive.chmod_system       world-writable or setuid mode on a system path
//	destructive.download_to_shell  a download or decoded data piped into a shell
//	destructive.kill_all           kill to pid -1 or 1 in any spelling, killall5,
//	                               skill; pkill or killall -r with a catch-all pattern
//	destructive.kernel_write       writes to /proc/sys, /sys, /proc/sysrq-trigger; sysctl -w
//	destructive.system_file_write  writes below /etc, /usr, /boot, /bin, /sbin, /lib, /var/lib
//	destructive.crontab_remove     crontab -r
//	destructive.move_critical      mv of a critical directory; rsync --delete into
//	                               one, --remove-source-files from one
//
// Approval rules (raise allow to ask; a readonly denial stays a denial;
// medium unless marked high):
//
//	net.unknown_destination        a shell destination built at run time
//	shell.outside_server           tmux or screen configured (default-shell, hooks,
//	                               source-file): their server may run outside the sandbox
//	priv.escalation.allowed        privilege escalation with allow_privilege_escalation (high)
//	shell.dynamic                  something in the command is not static (high)
//	shell.inline_code              an interpreter given code inline (python -c, ...)
//	shell.exec_flag                an option that runs a program (sort --compress-program, ...)
//	shell.stdin_shell              a shell or interpreter reading its program from stdin
//	shell.dangerous_env            PATH, LD_PRELOAD, BASH_ENV, ... set for a command
//	shell.reads_env                env, printenv, set, export -p: prints the environment
//	shell.exec_option              an option that runs a command (strace -o '|cmd',
//	                               gcc -wrapper, split --filter, tar -F, ...)
//	git.force_push                 git push --force, --mirror, --delete, +ref or :ref
//
// Supervised rules (ask at supervised, allowed at full; medium):
//
//	cmd.rm.workspace               a recursive delete inside the workspace: rm -r,
//	                               find -delete, git clean -f
//	net.sends                      data sent or remote state changed: an upload,
//	                               a POST, a push, a publish, a raw connection
//	persist.workspace_exec_allowed a write to a file persist.workspace_exec names
//	                               that [security] workspace_exec_allow lists
//
// Outcome reasons (why the combination came out as it did):
//
//	allow.low_risk                 a low-risk action allowed at readonly or supervised
//	allow.full_autonomy            allowed at full autonomy
//	autonomy.supervised.ask        reach beyond the sandbox at supervised
//	autonomy.readonly              readonly allows only low-risk reads
//	passphrase.required            the passphrase is needed
//	grant.applied                  a grant (data.claw.grants) covers an ask: allowed
//
// # Evaluation
//
// The gate prepares [Query] once over [Modules] with rego.Capabilities
// ([Capabilities]), rego.Strict(true) and rego.StrictBuiltinErrors(true),
// and evaluates it with the input passed as an AST value. An evaluation
// error is a denial. Two things matter for speed: keep data.claw.config in
// the store as AST values (inmem.NewFromObjectWithOpts with
// inmem.OptReturnASTValuesOnRead(true)), or every read converts the
// forbidden list again; and set forbidden_glob. The cost of a decision is
// mostly the number of rules OPA enters (a couple of microseconds each),
// so rules are grouped into families behind one cheap guard each
// (input_ok for tools.rego, has_paths for the path rules, might_destroy
// for destructive.rego, has_marks for the marks, has_user_items for user
// policies), each setting is read on its own rather than merged into one
// object, and rules test input.kind, input.context.autonomy and
// data.claw.config.passphrase_enabled directly so that OPA's rule index
// skips rules that cannot apply.
//
// # User policies
//
// Modules in $CLAW_HOME/policies must be in a package claw.user.<name>.
// They may define the sets deny, ask and passphrase of reasons; each reason
// is built from the rule's METADATA with claw.lib.reason, exactly like the
// built-in rules:
//
//	package claw.user.team
//
//	import data.claw.lib
//
//	# METADATA
//	# title: No terraform destroy
//	# custom:
//	#   id: team.terraform_destroy
//	#   severity: high
//	deny contains lib.reason(rego.metadata.rule(), "terraform destroy is not allowed") if {
//		some c in input.parsed.commands
//		c.name == "terraform"
//		"destroy" in c.operands
//	}
//
// User reasons are only ever added: a user policy cannot remove a built-in
// reason, so it cannot turn any denial into an allow. A reason without a
// valid severity counts as high. A user policy may read input,
// data.claw.config and data.claw.lib, but not data.claw.gate (that would
// be a cycle). Tests for user policies go in *_test.rego files next to them
// and run with `claw gate test --rego` ([RunTests]).
package policies

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"
)

// FS holds the embedded policies, their tests and builtin.json.
//
//go:embed *.rego builtin.json
var FS embed.FS

// Query is the document the gate evaluates.
const Query = "data.claw.gate.result"

// Modules returns the policy modules (every .rego file that is not a test),
// by file name.
func Modules() (map[string]string, error) {
	return regoFiles(func(name string) bool { return !strings.HasSuffix(name, "_test.rego") })
}

// Tests returns the Rego unit tests (the *_test.rego files), by file name.
func Tests() (map[string]string, error) {
	return regoFiles(func(name string) bool { return strings.HasSuffix(name, "_test.rego") })
}

func regoFiles(keep func(string) bool) (map[string]string, error) {
	names, err := fs.Glob(FS, "*.rego")
	if err != nil {
		return nil, fmt.Errorf("failed to list embedded policies: %w", err)
	}
	out := make(map[string]string, len(names))
	for _, name := range names {
		if !keep(name) {
			continue
		}
		b, err := FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("failed to read embedded policy %s: %w", name, err)
		}
		out[name] = string(b)
	}
	return out, nil
}

var builtinForbidden = sync.OnceValue(func() []string {
	b, err := FS.ReadFile("builtin.json")
	if err != nil {
		panic("policies: builtin.json is not embedded: " + err.Error())
	}
	var v struct {
		ForbiddenPaths []string `json:"forbidden_paths"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		panic("policies: builtin.json is invalid: " + err.Error())
	}
	return v.ForbiddenPaths
})

// BuiltinForbiddenPaths returns the built-in forbidden paths and patterns
// (credentials, shell start-up files, devices, kernel interfaces, container
// sockets). Entries starting with "~/" are relative to the home directory;
// Go expands them and merges the list into forbidden_paths. The returned
// slice is a copy.
func BuiltinForbiddenPaths() []string {
	return slices.Clone(builtinForbidden())
}

// ForbiddenGlob returns the glob the policies compile forbidden_paths
// into: every entry, with glob syntax other than * and ** escaped, as
// alternatives, each matching itself and everything below it
// ("{e1,e2,...}{,/**}"), or "**" when "/" is forbidden. The policies build
// it for every decision unless data.claw.config.forbidden_glob holds it;
// Go saves that work by setting it from the same (expanded) list. An empty
// list gives "", which the policies ignore.
func ForbiddenGlob(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	if slices.Contains(paths, "/") {
		return "**"
	}
	escape := strings.NewReplacer(`\`, `\\`, ",", `\,`, "{", `\{`, "}", `\}`, "[", `\[`, "]", `\]`, "?", `\?`)
	var b strings.Builder
	b.WriteString("{")
	for i, p := range paths {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(escape.Replace(p))
	}
	b.WriteString("}{,/**}")
	return b.String()
}

// allowedBuiltins are the only built-in functions policies may call: pure
// functions of their arguments. Left out on purpose: http.send, net.*,
// opa.runtime, time.now_ns and the time zone functions, rand.*, uuid.*,
// crypto functions that take keys, io.jwt.*, providers.*, json schema
// checks (they may fetch remote references), graphql.* and
// rego.parse_module.
var allowedBuiltins = []string{
	// operators and internals
	"eq", "equal", "neq", "lt", "lte", "gt", "gte", "assign",
	"plus", "minus", "mul", "div", "rem", "and", "or",
	"internal.member_2", "internal.member_3", "internal.print",
	"internal.template_string", "internal.test_case",
	// numbers
	"abs", "ceil", "floor", "round", "count", "max", "min", "sum", "product",
	"numbers.range", "numbers.range_step", "to_number", "format_int",
	"bits.and", "bits.or", "bits.xor", "bits.negate", "bits.lsh", "bits.rsh",
	// types
	"is_array", "is_boolean", "is_null", "is_number", "is_object", "is_set",
	"is_string", "type_name",
	"cast_array", "cast_boolean", "cast_null", "cast_object", "cast_set", "cast_string",
	// collections
	"array.concat", "array.flatten", "array.reverse", "array.slice",
	"intersection", "union", "set_diff", "sort", "all", "any", "walk",
	"object.filter", "object.get", "object.keys", "object.remove",
	"object.subset", "object.union", "object.union_n",
	"graph.reachable", "graph.reachable_paths",
	// strings
	"concat", "contains", "endswith", "startswith", "indexof",
	"indexof_n", "lower", "upper", "replace", "split", "sprintf", "substring",
	"trim", "trim_left", "trim_prefix", "trim_right", "trim_space", "trim_suffix",
	"strings.any_prefix_match", "strings.any_suffix_match", "strings.count",
	"strings.replace_n", "strings.reverse", "strings.split_n",
	// patterns
	"glob.match", "glob.quote_meta", "re_match", "regex.match",
	"regex.find_n", "regex.find_all_string_submatch_n", "regex.is_valid",
	"regex.replace", "regex.split", "regex.template_match", "regex.globs_match",
	// encodings
	"base64.decode", "base64.encode", "base64.is_valid", "base64url.decode",
	"base64url.encode", "base64url.encode_no_pad", "hex.decode", "hex.encode",
	"json.filter", "json.is_valid", "json.marshal", "json.marshal_with_options",
	"json.patch", "json.remove", "json.unmarshal",
	"yaml.is_valid", "yaml.marshal", "yaml.unmarshal",
	"urlquery.decode", "urlquery.decode_object", "urlquery.encode",
	"urlquery.encode_object", "uri.is_valid", "uri.parse",
	"units.parse", "units.parse_bytes", "semver.compare", "semver.is_valid",
	"time.parse_duration_ns", "time.parse_rfc3339_ns",
	// hashes without keys
	"crypto.md5", "crypto.sha1", "crypto.sha256",
	// metadata and debugging
	"rego.metadata.chain", "rego.metadata.rule", "print", "trace",
}

// Capabilities returns the capabilities policies are compiled under: this
// OPA version's keywords and features, and only the built-ins on an
// allowlist of pure functions (no network, clock, randomness, keys or
// runtime information). A policy calling anything else, http.send for one,
// fails to compile. AllowNet is empty, so the compiler fetches nothing.
func Capabilities() *ast.Capabilities {
	all := ast.CapabilitiesForThisVersion()
	caps := &ast.Capabilities{
		FutureKeywords:  all.FutureKeywords,
		Features:        all.Features,
		WasmABIVersions: nil,
		AllowNet:        []string{},
	}
	allowed := make(map[string]bool, len(allowedBuiltins))
	for _, name := range allowedBuiltins {
		allowed[name] = true
	}
	for _, b := range all.Builtins {
		if allowed[b.Name] {
			caps.Builtins = append(caps.Builtins, b)
		}
	}
	return caps
}

// TestTimeout bounds each Rego unit test run by [RunTests].
const TestTimeout = 30 * time.Second

// RunTests runs the Rego unit tests of the built-in policies together with
// extra modules (user policies and their *_test.rego files, by file name)
// with OPA's tester, under [Capabilities], and writes a report like
// `opa test` to w: failing tests with the failing expression, then
// "PASS: n/m" and "FAIL: n/m". Each case of a table test counts once.
// A test that errors counts as failed. err is non-nil when the modules do
// not parse or compile; then nothing ran.
func RunTests(ctx context.Context, extra map[string]string, w io.Writer) (passed, failed int, err error) {
	mods, err := Modules()
	if err != nil {
		return 0, 0, err
	}
	tests, err := Tests()
	if err != nil {
		return 0, 0, err
	}
	sources := make(map[string]string, len(mods)+len(tests)+len(extra))
	for _, m := range []map[string]string{mods, tests} {
		for name, src := range m {
			sources[name] = src
		}
	}
	for name, src := range extra {
		if _, dup := sources[name]; dup {
			return 0, 0, fmt.Errorf("module %s has the name of a built-in policy file", name)
		}
		sources[name] = src
	}

	parsed := make(map[string]*ast.Module, len(sources))
	for name, src := range sources {
		m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{
			RegoVersion:       ast.RegoV1,
			ProcessAnnotation: true,
		})
		if err != nil {
			return 0, 0, fmt.Errorf("failed to parse %s: %w", name, err)
		}
		parsed[name] = m
	}

	compiler := ast.NewCompiler().
		WithCapabilities(Capabilities()).
		WithEnablePrintStatements(true).
		WithDefaultRegoVersion(ast.RegoV1)
	ch, err := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(inmem.New()).
		SetModules(parsed).
		SetDefaultRegoVersion(ast.RegoV1).
		CapturePrintOutput(true).
		RaiseBuiltinErrors(true).
		SetTimeout(TestTimeout).
		RunTests(ctx, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("failed to compile the policies and their tests: %w", err)
	}

	// Results arrive in completion order; report them in source order.
	var results []*tester.Result
	for r := range ch {
		results = append(results, r)
		p, f := countResult(r)
		passed += p
		failed += f
	}
	slices.SortFunc(results, func(a, b *tester.Result) int {
		if c := strings.Compare(a.Location.File, b.Location.File); c != 0 {
			return c
		}
		return a.Location.Row - b.Location.Row
	})
	sorted := make(chan *tester.Result, len(results))
	for _, r := range results {
		sorted <- r
	}
	close(sorted)
	if err := (tester.PrettyReporter{Output: w, FailureLine: true}).Report(sorted); err != nil {
		return passed, failed, fmt.Errorf("failed to write the test report: %w", err)
	}
	return passed, failed, ctx.Err()
}

// countResult counts a test like the tester's reporter does: each leaf case
// of a table test once, an error as a failure, a skipped test not at all.
func countResult(r *tester.Result) (passed, failed int) {
	switch {
	case r.Skip:
		return 0, 0
	case r.Error != nil:
		return 0, 1
	case len(r.SubResults) > 0:
		for _, sr := range r.SubResults.Iter {
			if len(sr.SubResults) > 0 {
				continue
			}
			if sr.Fail {
				failed++
			} else {
				passed++
			}
		}
		return passed, failed
	case r.Fail:
		return 0, 1
	default:
		return 1, 0
	}
}
