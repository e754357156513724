package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const testHome = "/home/u/.claw"

// testEnv is a fixed environment for Expand.
func testEnv(k string) string {
	return map[string]string{
		"HOME":      "/home/u",
		"WS":        "/srv/space",
		"DATA":      "/data",
		"CLAW_HOME": testHome,
	}[k]
}

var ignoreInternal = cmpopts.IgnoreUnexported(Config{})

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// errorLines returns the lines of a Parse or Expand error, or nil.
func errorLines(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is %T, want *Errors: %v", err, err)
	}
	return strings.Split(errs.Error(), "\n")
}

func TestTemplateIsDefault(t *testing.T) {
	c, err := Parse(Template(), "config.toml", testHome)
	if err != nil {
		t.Fatalf("Parse(Template()): %v", err)
	}
	want := Default(testHome)
	want.Path = "config.toml"
	if d := cmp.Diff(want, c, ignoreInternal); d != "" {
		t.Errorf("template differs from Default (-want +got):\n%s", d)
	}
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		file string
		want func(c *Config)
	}{
		{
			name: "empty file is the defaults",
			file: "",
			want: func(c *Config) {},
		},
		{
			name: "every key",
			file: string(readTestdata(t, "full.toml")),
			want: func(c *Config) {
				c.WorkspaceDir = "/srv/space/agent"
				c.DefaultProvider, c.DefaultModel = "openai", "gpt-test"
				s := &c.Security
				s.Autonomy = AutonomyFull
				s.WorkspaceOnly = false
				s.ForbiddenPaths = []string{"/srv/secret", "/home/u/.config/gh", "**/id_rsa", "/data/private"}
				s.ReadPaths = []string{"/usr", "/opt"}
				s.ForbiddenCommands = []string{"rm", "curl"}
				s.AllowedCommands = []string{"ls", "git", "python3.12", "g++"}
				s.AllowedDomains = []string{"example.com", "*.github.com", "*"}
				s.PassphraseHash = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHRzb21lc2FsdA$AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
				s.PassphraseFor = []string{"critical", "cmd.rm.workspace", "destructive.rm_root"}
				s.AllowPrivilegeEscalation = true
				s.ApprovalTimeout = Duration{30 * time.Second}
				s.PassphraseMaxFailures = 3
				s.PassphraseLockout = Duration{time.Hour}
				c.Agent = Agent{MaxToolRounds: 8, MaxResponseBytes: 65536, ToolTimeout: Duration{10 * time.Second},
					ShellTimeout: Duration{5 * time.Second}, HTTPTimeout: Duration{7 * time.Second},
					HistoryMessages: 20, HistoryBudget: 4096, Soul: testHome + "/me.md", MemoryDB: "/var/lib/claw/memory.sqlite"}
				c.Providers = map[string]Provider{
					"openai": {Kind: "openai-compatible", BaseURL: "http://127.0.0.1:11434/v1", APIKeyEnv: "OPENAI_API_KEY",
						Model: "gpt-test", Timeout: Duration{45 * time.Second}, MaxResponseBytes: 2048, Headers: map[string]string{"X-Title": "claw"}},
					"claude": {Kind: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-test"},
					"main":   {Kind: "reliable", Fallbacks: []string{"claude", "openai", "local"}},
					"auto":   {Kind: "router", Default: "main", Routes: map[string]string{"offline": "local"}},
					"local":  {Kind: "mock", Script: testHome + "/demo.yaml"},
				}
				c.Serve = Serve{Socket: "/run/claw/claw.sock", Listen: "127.0.0.1:8787", TokenFile: testHome + "/serve.token",
					MaxBodyBytes: 4096, ReadHeaderTimeout: Duration{2 * time.Second}, RequestTimeout: Duration{30 * time.Second}}
				s.GateTimeout = Duration{time.Second}
				c.Sandbox = Sandbox{MinLandlockABI: 4, RunAs: "", Timeout: Duration{2 * time.Minute},
					MemoryMax: "512M", PidsMax: 64, HTTPPorts: []int{443, 8443}, Path: []string{"/usr/local/go/bin", "/home/u/.cargo/bin"}}
				c.Receipts = Receipts{Dir: "/var/lib/claw/receipts", Key: testHome + "/keys/other.key", Checkpoint: 1000}
			},
		},
		{
			name: "dotted keys and inline tables",
			file: string(readTestdata(t, "dotted.toml")),
			want: func(c *Config) {
				c.Security.Autonomy = AutonomyReadonly
				c.Sandbox.PidsMax = 10
				c.Sandbox.HTTPPorts = []int{443}
			},
		},
		{
			name: "empty arrays replace the defaults",
			file: "[security]\nforbidden_paths = []\npassphrase_for = []\n",
			want: func(c *Config) {
				c.Security.ForbiddenPaths = []string{}
				c.Security.PassphraseFor = []string{}
			},
		},
		{
			name: "dollar escape and braces",
			file: "workspace_dir = \"/srv/a$$b/${WS}x\"\n",
			want: func(c *Config) { c.WorkspaceDir = "/srv/a$b/srv/spacex" },
		},
		{
			name: "paths are cleaned",
			file: "workspace_dir = \"~/a/../b//c/\"\n",
			want: func(c *Config) { c.WorkspaceDir = "/home/u/b/c" },
		},
		{
			name: "byte order mark and CRLF",
			file: "\xef\xbb\xbfdefault_model = \"m\"\r\n",
			want: func(c *Config) { c.DefaultModel = "m" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.file), "config.toml", testHome)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if err := c.Expand(testEnv); err != nil {
				t.Fatalf("Expand: %v", err)
			}
			want := Default(testHome)
			if err := want.Expand(testEnv); err != nil {
				t.Fatal(err)
			}
			want.Path = "config.toml"
			tt.want(want)
			if d := cmp.Diff(want, c, ignoreInternal); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{
			name: "syntax error, one is enough",
			file: string(readTestdata(t, "syntax.toml")),
			want: []string{`config.toml:2:17: syntax error: basic strings cannot have new lines`},
		},
		{
			name: "duplicate key",
			file: "default_model = \"a\"\ndefault_model = \"b\"\n",
			want: []string{"config.toml:2:1: syntax error: key default_model is already defined"},
		},
		{
			name: "invalid enum names the allowed values",
			file: "[security]\n\n\nautonomy = \"godmode\"\n",
			want: []string{`config.toml:4:12: security.autonomy: "godmode" is not one of readonly, supervised, full`},
		},
		{
			name: "credentials in a base_url are not echoed",
			file: "[providers.x]\nkind = \"openai\"\nbase_url = \"https://bob:hunter2secret@api.example.com/v1\"\n",
			want: []string{`config.toml:3:12: providers.x.base_url: "https://[REDACTED]@api.example.com/v1" is not an http(s) URL without credentials`},
		},
		{
			name: "autonomous bounds and intervals",
			file: "[autonomous]\nmax_turns = 0\nworking = \"0s\"\nresting = \"48h\"\nmax_tokens = -1\n",
			want: []string{
				`config.toml:2:13: autonomous.max_turns: must be at least 1, got 0`,
				`config.toml:3:11: autonomous.working: must be positive, got 0s`,
				`config.toml:4:11: autonomous.resting: must be at most 24h0m0s, got 48h0m0s`,
				`config.toml:5:14: autonomous.max_tokens: must not be negative, got -1`,
			},
		},
		{
			name: "channel allows an unknown tool",
			file: "[channels.cli]\ntools_allow = [\"time\", \"rm\"]\n",
			want: []string{`config.toml:2:15: channels.cli.tools_allow: "rm" is not a tool; the tools are ask_user, delegate, edit_file, file_list, file_read, file_write, http, memory_search, plugin, shell, time`},
		},
		{
			name: "channel keys that do not apply, and bad values",
			file: "[channels.cli]\ndir = \"/x\"\n[channels.bridge]\nlisten = \"0.0.0.0:80\"\ndir = \"/y\"\nsessions = [\"ok\", \"no way\"]\nautonomy = \"godmode\"\n[channels.planckclaw]\ntoken_env = \"X\"\n[channels.discord]\nallowed_user_ids = [\"12a\"]\n",
			want: []string{
				`config.toml:2:1: channels.cli.dir: dir does not apply to [channels.cli] (its keys: tools_allow)`,
				`config.toml:4:10: channels.bridge.listen: "0.0.0.0:80" is not a loopback host:port, like "127.0.0.1:18801"; the bridge only listens on this machine`,
				`config.toml:5:1: channels.bridge.dir: dir does not apply to [channels.bridge] (its keys: tools_allow, autonomy, approver_ids, listen, token_env, sessions, buffer, sources)`,
				`config.toml:6:19: channels.bridge.sessions[1]: "no way" is not a session id (letters, digits and . _ : -, at most 128)`,
				`config.toml:7:12: channels.bridge.autonomy: "godmode" is not one of readonly, supervised, full`,
				`config.toml:8:11: channels.planckclaw: [channels.planckclaw] needs dir, the directory of the FIFOs`,
				`config.toml:9:1: channels.planckclaw.token_env: token_env does not apply to [channels.planckclaw] (its keys: tools_allow, autonomy, approver_ids, dir)`,
				`config.toml:11:21: channels.discord.allowed_user_ids[0]: "12a" is not a Discord id (digits)`,
			},
		},
		{
			name: "bridge sources name a listed session and a Discord channel",
			file: "[channels.bridge]\nlisten = \"127.0.0.1:0\"\nsessions = [\"s1\", \"s2\"]\n[channels.bridge.sources]\ns1 = \"discord:200000000000000001\"\ns2 = \"slack:C01\"\ns3 = \"discord:1\"\n",
			want: []string{
				`config.toml:5:6: channels.bridge.sources.s1: "discord:200000000000000001" needs a [channels.discord] section to ask in`,
				`config.toml:6:6: channels.bridge.sources.s2: "slack:C01" is not a source like "discord:CHANNEL_ID"`,
				`config.toml:7:1: channels.bridge.sources.s3: "s3" is not one of [channels.bridge] sessions`,
				`config.toml:7:6: channels.bridge.sources.s3: "discord:1" needs a [channels.discord] section to ask in`,
			},
		},
		{
			name: "sources apply to the bridge only",
			file: "[channels.discord]\ntoken_env = \"T\"\nsources = { s1 = \"discord:2\" }\n",
			want: []string{
				`config.toml:3:1: channels.discord.sources: sources does not apply to [channels.discord] (its keys: tools_allow, autonomy, approver_ids, token_env, allowed_user_ids, allowed_channel_ids)`,
			},
		},
		{
			name: "unknown keys with suggestions",
			file: "worksapce_dir = \"/w\"\nautonomy = \"full\"\nfrobnicate = 1\n[security]\nforbiden_paths = []\n[secutiry]\nx = 1\n[sandbox]\nworkspace_dir = \"/x\"\n",
			want: []string{
				`config.toml:1:1: worksapce_dir: unknown key (did you mean "workspace_dir"?)`,
				`config.toml:2:1: autonomy: unknown key (did you mean "autonomy" under [security]?)`,
				`config.toml:3:1: frobnicate: unknown key`,
				`config.toml:5:1: security.forbiden_paths: unknown key (did you mean "forbidden_paths"?)`,
				`config.toml:6:2: secutiry: unknown key (did you mean "security"?)`,
				`config.toml:9:1: sandbox.workspace_dir: unknown key (did you mean "workspace_dir", at the top level before any [table]?)`,
			},
		},
		{
			name: "wrong types",
			file: string(readTestdata(t, "types.toml")),
			want: []string{
				`config.toml:1:17: default_model: expected a string, got an integer`,
				`config.toml:3:18: security.workspace_only: expected a boolean (true or false), got a string`,
				`config.toml:4:19: security.forbidden_paths: expected an array, got a string`,
				`config.toml:5:23: security.read_paths[1]: expected a string, got an integer`,
				`config.toml:7:11: sandbox.timeout: expected a duration string like "250ms" or "15s", got an integer`,
				`config.toml:8:12: sandbox.pids_max: expected an integer, got a float`,
			},
		},
		{
			name: "a table written as a value, and an array of tables",
			file: "security = \"x\"\n[[receipts]]\ndir = \"/r\"\n",
			want: []string{
				`config.toml:1:12: security: expected a table, got a string`,
				`config.toml:2:3: receipts: expected a table, got an array`,
			},
		},
		{
			name: "several errors at once",
			file: string(readTestdata(t, "many_errors.toml")),
			want: []string{
				`config.toml:1:17: workspace_dir: "ws" is a relative path; write an absolute path, ~/… or $VAR/…`,
				`config.toml:2:1: autonomy: unknown key (did you mean "autonomy" under [security]?)`,
				`config.toml:4:12: security.autonomy: "godmode" is not one of readonly, supervised, full`,
				`config.toml:5:20: security.allowed_domains[0]: "https://example.com" has a scheme; write the host name only, like "example.com"`,
				`config.toml:5:55: security.allowed_domains[2]: "api.example.com:443" has a port or is an IPv6 address; write the host name only (ports are sandbox.http_ports)`,
				`config.toml:5:78: security.allowed_domains[3]: expected a string, got an integer`,
				`config.toml:6:19: security.passphrase_for[0]: "hgh" is neither a risk level (low, medium, high, critical) nor a rule id (like "cmd.rm.workspace")`,
				`config.toml:7:16: security.gate_timeout: invalid duration "soon": use a number with a unit, like "250ms" or "15s"`,
				`config.toml:9:12: sandbox.pids_max: must not be negative, got -1`,
			},
		},
		{
			name: "domains",
			file: `[security]
allowed_domains = ["example.com/x", "*example.com", "a.*.com", "user@host", "host.", "-bad.com", "a..b", ""]
`,
			want: []string{
				`config.toml:2:20: security.allowed_domains[0]: "example.com/x" has a path; write the host name only, like "example.com"`,
				`config.toml:2:37: security.allowed_domains[1]: "*example.com" has a wildcard in the wrong place; write "*", "example.com" or "*.example.com"`,
				`config.toml:2:53: security.allowed_domains[2]: "a.*.com" has a wildcard in the wrong place; write "*", "example.com" or "*.example.com"`,
				`config.toml:2:64: security.allowed_domains[3]: "user@host" has user information; write the host name only`,
				`config.toml:2:77: security.allowed_domains[4]: "host." ends with a dot; write the host name without it`,
				`config.toml:2:86: security.allowed_domains[5]: "-bad.com" is not a valid host name (labels of letters, digits and inner hyphens, separated by dots)`,
				`config.toml:2:98: security.allowed_domains[6]: "a..b" is not a valid host name (labels of letters, digits and inner hyphens, separated by dots)`,
				`config.toml:2:106: security.allowed_domains[7]: "" is empty; write a host name like "example.com"`,
			},
		},
		{
			name: "private cidrs",
			file: `[security]
allow_private_cidrs = ["127.0.0.0/8", "10.1.2.3/8", "0.0.0.0/0", "localhost", "::ffff:0:0/96", "fd00::1"]
`,
			want: []string{
				`config.toml:2:39: security.allow_private_cidrs[1]: "10.1.2.3/8" has bits set after the prefix length; write "10.0.0.0/8"`,
				`config.toml:2:53: security.allow_private_cidrs[2]: "0.0.0.0/0" opens every address; list the private ranges you need`,
				`config.toml:2:66: security.allow_private_cidrs[3]: "localhost" is not a CIDR prefix like "10.0.0.0/8" or an address`,
				`config.toml:2:79: security.allow_private_cidrs[4]: "::ffff:0:0/96" is an IPv4-mapped prefix; write the IPv4 prefix`,
			},
		},
		{
			name: "workspace exec allow",
			file: `[security]
workspace_exec_allow = [".vscode/settings.json", "/etc/x", "../x", "a/../../b", "", ".", "./.envrc", ".vscode/*", "~/.envrc", ".envrc"]
`,
			want: []string{
				`config.toml:2:50: security.workspace_exec_allow[1]: "/etc/x" is not relative to the workspace; write a path like ".vscode/settings.json"`,
				`config.toml:2:60: security.workspace_exec_allow[2]: "../x" leaves the workspace with ..`,
				`config.toml:2:68: security.workspace_exec_allow[3]: "a/../../b" leaves the workspace with ..`,
				`config.toml:2:81: security.workspace_exec_allow[4]: must not be empty`,
				`config.toml:2:85: security.workspace_exec_allow[5]: "." names the whole workspace; list the files that may run code outside the sandbox`,
				`config.toml:2:90: security.workspace_exec_allow[6]: "./.envrc" is not a clean path; write ".envrc"`,
				`config.toml:2:102: security.workspace_exec_allow[7]: ".vscode/*" is a pattern; list each path literally (a directory covers what is under it)`,
				`config.toml:2:115: security.workspace_exec_allow[8]: "~/.envrc" is not relative to the workspace; write a path like ".vscode/settings.json"`,
			},
		},
		{
			name: "paths",
			file: `workspace_dir = ""
[security]
forbidden_paths = ["etc", "~bob/.ssh", "**/ok", "/ok"]
read_paths = ["**/no"]
[receipts]
dir = "./r"
[sandbox]
path = ["/usr/local/go/bin", "node_modules/.bin"]
`,
			want: []string{
				`config.toml:1:17: workspace_dir: must not be empty`,
				`config.toml:3:20: security.forbidden_paths[0]: "etc" is a relative path; write an absolute path, ~/…, $VAR/… or a **/ pattern`,
				`config.toml:3:27: security.forbidden_paths[1]: "~bob/.ssh" uses ~user, which is not supported; write ~/… or an absolute path`,
				`config.toml:4:15: security.read_paths[0]: "**/no" is a relative path; write an absolute path, ~/… or $VAR/…`,
				`config.toml:6:7: receipts.dir: "./r" is a relative path; write an absolute path, ~/… or $VAR/…`,
				`config.toml:8:30: sandbox.path[1]: "node_modules/.bin" is a relative path; write an absolute path, ~/… or $VAR/…`,
			},
		},
		{
			name: "numbers and sizes",
			file: `[security]
gate_timeout = "-1s"
[sandbox]
min_landlock_abi = 0
timeout = "48h"
memory_max = "1GB"
pids_max = 0
http_ports = [0, 65536, 443]
[receipts]
checkpoint_every = -5
`,
			want: []string{
				`config.toml:2:16: security.gate_timeout: must be positive, got -1s`,
				`config.toml:4:20: sandbox.min_landlock_abi: must be at least 1, got 0`,
				`config.toml:5:11: sandbox.timeout: must be at most 24h0m0s, got 48h0m0s`,
				`config.toml:6:14: sandbox.memory_max: "1GB" is not a size: write bytes with an optional K, M, G or T suffix, like "512M"`,
				`config.toml:7:12: sandbox.pids_max: must be at least 1, got 0`,
				`config.toml:8:15: sandbox.http_ports[0]: must be at least 1, got 0`,
				`config.toml:8:18: sandbox.http_ports[1]: must be at most 65535, got 65536`,
				`config.toml:10:20: receipts.checkpoint_every: must not be negative, got -5`,
			},
		},
		{
			name: "commands, names and users",
			file: `default_provider = ""
[security]
allowed_commands = ["/bin/ls", "", "a b"]
[sandbox]
run_as = "Root!"
`,
			want: []string{
				`config.toml:1:20: default_provider: must not be empty`,
				`config.toml:3:21: security.allowed_commands[0]: "/bin/ls" is a path; write the command name only, like "git"`,
				`config.toml:3:32: security.allowed_commands[1]: must not be empty`,
				`config.toml:3:36: security.allowed_commands[2]: "a b" is not a command name (letters, digits, and . _ + - @ :)`,
				`config.toml:5:10: sandbox.run_as: "Root!" is not a user name or uid ("" stays the current user)`,
			},
		},
		{
			name: "providers, agent and serve",
			file: `default_provider = "nope"
[providers.x]
kind = "gpt"
api_key_env = "sk-abcdefghijklmnopqrstuvwxyz012345"
base_url = "ftp://h/"
headers = { Authorization = "Bearer 1" }
[providers.r]
kind = "reliable"
fallbacks = ["x", "ghost"]
[providers.k]
model = "m"
[agent]
max_tool_rounds = 0
tool_timeout = "-1s"
[serve]
listen = "localhost"
max_body_bytes = 10
`,
			want: []string{
				`config.toml:1:20: default_provider: "nope" names no [providers.nope] section (defined: k, local, r, x)`,
				`config.toml:3:8: providers.x.kind: "gpt" is not one of mock, openai-compatible, openai, anthropic, reliable, router`,
				`config.toml:4:15: providers.x.api_key_env: must name an environment variable (like "OPENAI_API_KEY"), not hold the key itself`,
				`config.toml:5:12: providers.x.base_url: "ftp://h/" is not an http(s) URL without credentials`,
				`config.toml:6:13: providers.x.headers.Authorization: ` + credentialHeaderMsg,
				`config.toml:9:19: providers.r.fallbacks[1]: "ghost" names no [providers.ghost] section (defined: k, local, r, x)`,
				`config.toml:10:12: providers.k: provider k has no kind; set kind to one of mock, openai-compatible, openai, anthropic, reliable, router`,
				`config.toml:13:19: agent.max_tool_rounds: must be at least 1, got 0`,
				`config.toml:14:16: agent.tool_timeout: must be positive, got -1s`,
				`config.toml:16:10: serve.listen: "localhost" is not host:port, like "127.0.0.1:8787"`,
				`config.toml:17:18: serve.max_body_bytes: must be at least 1024, got 10`,
			},
		},
		{
			name: "credential headers, every one in one pass",
			file: `[providers.azure]
kind = "openai-compatible"
headers = { api-key = "azurePLANTEDhdr9876", "X-Title" = "claw" }
[providers.b]
kind = "anthropic"
headers.Proxy-Authorization = "Basic Ym9iOmh1bnRlcjI="
headers."x.session" = "s1"
timeout = "soon"
`,
			want: []string{
				`config.toml:3:13: providers.azure.headers.api-key: ` + credentialHeaderMsg,
				`config.toml:6:9: providers.b.headers.Proxy-Authorization: ` + credentialHeaderMsg,
				`config.toml:7:9: providers.b.headers."x.session": ` + credentialHeaderMsg,
				`config.toml:8:11: providers.b.timeout: invalid duration "soon": use a number with a unit, like "250ms" or "15s"`,
			},
		},
		{
			name: "passphrase hash is never echoed",
			file: "[security]\npassphrase_hash = \"$argon2i$v=19$m=1,t=1,p=1$x$y\"\n",
			want: []string{
				`config.toml:2:19: security.passphrase_hash: is not an argon2id hash in PHC form ($argon2id$v=19$m=…,t=…,p=…$SALT$HASH); set it with 'claw passphrase set'`,
			},
		},
		{
			name: "external agents",
			file: "[delegate]\nmax_tokens = -1\n[delegate.external.cc]\ncommand = [\"claude\"]\nsettings_flag = \"--settings\"\nautonomy = \"root\"\ntools_allow = [\"sudo\"]\nhosts = [\"api.anthropic.com\"]\nsecrets = [\"sk-ant-0123\"]\ntrust_tools = [\"mcp__fs__write\"]\n[delegate.external.bare]\nmax_output = 10\n",
			want: []string{
				`config.toml:2:14: delegate.max_tokens: must not be negative, got -1`,
				`config.toml:6:12: delegate.external.cc.autonomy: "root" is not one of readonly, supervised, full`,
				`config.toml:7:16: delegate.external.cc.tools_allow[0]: "sudo" is not a claw tool (ask_user, delegate, edit_file, file_list, file_read, file_write, http, memory_search, plugin, shell, time)`,
				`config.toml:8:10: delegate.external.cc.hosts[0]: "api.anthropic.com" is not host:port, like "api.anthropic.com:443"`,
				`config.toml:9:12: delegate.external.cc.secrets[0]: must name an environment variable (like "ANTHROPIC_API_KEY"), not hold the key itself`,
				`config.toml:10:16: delegate.external.cc.trust_tools[0]: "mcp__fs__write": name an agent tool claw has no equivalent for, like "TodoWrite" (MCP tools are judged by the gate)`,
				`config.toml:11:20: delegate.external.bare: external agent bare has no command; set command = ["claude", "-p", "--output-format", "json"]`,
				`config.toml:11:20: delegate.external.bare: external agent bare needs settings_flag, the flag that passes the hook's settings file (Claude Code: "--settings")`,
				`config.toml:12:14: delegate.external.bare.max_output: must be at least 1024, got 10`,
			},
		},
		{
			name: "invalid UTF-8",
			file: "default_model = \"a\xffb\"\n",
			want: []string{`config.toml:1:19: file is not valid UTF-8`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.file), "config.toml", testHome)
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			if d := cmp.Diff(tt.want, errorLines(t, err)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

func TestErrorsUnwrapAndJSON(t *testing.T) {
	_, err := Parse(readTestdata(t, "many_errors.toml"), "c.toml", testHome)
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("not *Errors: %v", err)
	}
	var one *Error
	if !errors.As(err, &one) || one.Line != 1 || one.Key != "workspace_dir" {
		t.Errorf("errors.As(*Error) = %+v", one)
	}
	if got := len(errs.Unwrap()); got != len(errs.List) {
		t.Errorf("Unwrap has %d errors, List %d", got, len(errs.List))
	}
	b, err := json.Marshal(errs.List[3])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"file":"c.toml","line":5,"col":20,"key":"security.allowed_domains[0]","message":"\"https://example.com\" has a scheme; write the host name only, like \"example.com\""}`
	if string(b) != want {
		t.Errorf("JSON:\n got %s\nwant %s", b, want)
	}
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    string // workspace_dir after expansion
		wantErr []string
	}{
		{name: "tilde", file: `workspace_dir = "~"`, env: map[string]string{"HOME": "/home/u"}, want: "/home/u"},
		{name: "tilde slash", file: `workspace_dir = "~/ws"`, env: map[string]string{"HOME": "/home/u"}, want: "/home/u/ws"},
		{name: "var", file: `workspace_dir = "$WS/x"`, env: map[string]string{"WS": "/w"}, want: "/w/x"},
		{name: "braced var", file: `workspace_dir = "${WS}x"`, env: map[string]string{"WS": "/w"}, want: "/wx"},
		{name: "literal dollar", file: `workspace_dir = "/a$$b"`, want: "/a$b"},
		{name: "home is not expanded again", file: `workspace_dir = "~/x"`, env: map[string]string{"HOME": "/h$WS"}, want: "/h$WS/x"},
		{
			name:    "missing var",
			file:    `workspace_dir = "$NOPE/x"`,
			wantErr: []string{`config.toml:1:17: workspace_dir: uses $NOPE, which is not set`},
		},
		{
			name:    "missing HOME",
			file:    "workspace_dir = \"/ok\"\n[security]\nforbidden_paths = []\nread_paths = [\"/usr\", \"~/x\"]\n",
			env:     map[string]string{"HOME": ""},
			wantErr: []string{`config.toml:4:23: security.read_paths[1]: uses ~ but $HOME is not set`},
		},
		{
			name:    "relative after expansion",
			file:    `workspace_dir = "$WS/x"`,
			env:     map[string]string{"WS": "rel"},
			wantErr: []string{`config.toml:1:17: workspace_dir: expands to a relative path; the result must be absolute`},
		},
		{
			name:    "unclosed brace",
			file:    `workspace_dir = "${WS"`,
			wantErr: []string{`config.toml:1:17: workspace_dir: has ${ without a closing }`},
		},
		{
			name:    "lone dollar",
			file:    `workspace_dir = "/a$"`,
			wantErr: []string{`config.toml:1:17: workspace_dir: ends with a lone $ (write $$ for a literal dollar sign)`},
		},
		{
			name:    "dollar before a non-name",
			file:    `workspace_dir = "/a$-b"`,
			wantErr: []string{`config.toml:1:17: workspace_dir: has a $ that does not start a variable (write $$ for a literal dollar sign)`},
		},
		{
			name:    "bad name in braces",
			file:    `workspace_dir = "/${A-B}"`,
			wantErr: []string{`config.toml:1:17: workspace_dir: has a ${…} that is not a variable name`},
		},
		{
			name:    "default value without HOME",
			file:    `default_model = "m"`,
			env:     map[string]string{"HOME": ""},
			wantErr: []string{`config.toml: workspace_dir: uses ~ but $HOME is not set (default value)`, `config.toml: security.forbidden_paths[3]: uses ~ but $HOME is not set (default value)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.file), "config.toml", testHome)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			before := c.WorkspaceDir
			err = c.Expand(func(k string) string {
				if v, ok := tt.env[k]; ok {
					return v
				}
				if k == "HOME" {
					return "/home/u"
				}
				return ""
			})
			if d := cmp.Diff(tt.wantErr, errorLines(t, err)); d != "" {
				t.Fatalf("errors (-want +got):\n%s", d)
			}
			if err != nil {
				if c.WorkspaceDir != before {
					t.Errorf("failed Expand changed workspace_dir to %q", c.WorkspaceDir)
				}
				return
			}
			if c.WorkspaceDir != tt.want {
				t.Errorf("workspace_dir = %q, want %q", c.WorkspaceDir, tt.want)
			}
			// A second Expand is a no-op, even for a literal "$".
			if err := c.Expand(func(string) string { return "" }); err != nil || c.WorkspaceDir != tt.want {
				t.Errorf("second Expand: %v, %q", err, c.WorkspaceDir)
			}
		})
	}
}

func TestDefaultEscapesHome(t *testing.T) {
	c := Default("/srv/my$home")
	if err := c.Expand(testEnv); err != nil {
		t.Fatal(err)
	}
	if want := "/srv/my$home/receipts"; c.Receipts.Dir != want {
		t.Errorf("receipts.dir = %q, want %q", c.Receipts.Dir, want)
	}
}

const (
	fakeHash  = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHRzb21lc2FsdA$AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
	fakeToken = "sk-live-9fJ3kL0qPzX7vB2nR8tY4wE6uI1oA5sD"
)

func TestMasked(t *testing.T) {
	file := "default_model = \"" + fakeToken + "\"\n[security]\npassphrase_hash = \"" + fakeHash + "\"\npassphrase_for = [\"high\"]\n"
	c, err := Parse([]byte(file), "config.toml", testHome)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Masked()
	if m.Security.PassphraseHash != Mask || m.DefaultModel != Mask {
		t.Errorf("not masked: hash %q, model %q", m.Security.PassphraseHash, m.DefaultModel)
	}
	if c.Security.PassphraseHash != fakeHash || c.DefaultModel != fakeToken {
		t.Errorf("Masked changed the original")
	}
	if d := cmp.Diff([]string{"high"}, m.Security.PassphraseFor); d != "" {
		t.Errorf("passphrase_for was masked: %s", d)
	}
	m.Security.ForbiddenPaths[0] = "/changed"
	if c.Security.ForbiddenPaths[0] == "/changed" {
		t.Errorf("Masked shares slices with the original")
	}

	var toml, js bytes.Buffer
	if err := m.WriteTOML(&toml); err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(&js).Encode(m); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"toml": toml.String(), "json": js.String()} {
		if strings.Contains(out, fakeHash) || strings.Contains(out, fakeToken) || strings.Contains(out, "c29tZXNhbHRz") {
			t.Errorf("%s output leaks a secret:\n%s", name, out)
		}
		if !strings.Contains(out, Mask) {
			t.Errorf("%s output has no mask:\n%s", name, out)
		}
	}

	// Shown output fed back as a config is rejected: the mask is not a hash.
	if _, err := Parse(toml.Bytes(), "shown.toml", testHome); err == nil {
		t.Errorf("masked hash parsed as a valid argon2id hash")
	}

	// An empty hash stays empty: "no passphrase" must stay visible.
	if got := Default(testHome).Masked().Security.PassphraseHash; got != "" {
		t.Errorf("empty hash masked as %q", got)
	}
}

const credentialHeaderMsg = "a header named like a credential does not belong in the config; " +
	"put the key in an environment variable and name the variable in api_key_env"

// plantedHeader is a header value with no credential format: only its
// header's name says it is a key.
const plantedHeader = "azurePLANTEDhdr9876"

func TestProviderHeaders(t *testing.T) {
	tests := []struct {
		name    string
		header  string // the header name, as a TOML key
		refused bool
	}{
		{name: "azure api-key", header: "api-key", refused: true},
		{name: "authorization", header: "Authorization", refused: true},
		{name: "authorization in lower case", header: "authorization", refused: true},
		{name: "proxy-authorization", header: "Proxy-Authorization", refused: true},
		{name: "x-api-key", header: "X-API-KEY", refused: true},
		{name: "api_key with underscore", header: "api_key", refused: true},
		{name: "google api key", header: "x-goog-api-key", refused: true},
		{name: "azure subscription key", header: "Ocp-Apim-Subscription-Key", refused: true},
		{name: "auth token", header: "X-Auth-Token", refused: true},
		{name: "aws session token", header: "X-Amz-Security-Token", refused: true},
		{name: "client secret", header: "Client_Secret", refused: true},
		{name: "password", header: "X-Password", refused: true},
		{name: "cookie", header: "Cookie", refused: true},
		{name: "session", header: "X-Session-Id", refused: true},
		{name: "quoted name with dots", header: `"x.api.key"`, refused: true},
		{name: "anthropic-version", header: "anthropic-version"},
		{name: "anthropic-beta", header: "anthropic-beta"},
		{name: "openai-organization", header: "OpenAI-Organization"},
		{name: "openai-project", header: "OpenAI-Project"},
		{name: "x-request-id", header: "x-request-id"},
		{name: "user-agent", header: "User-Agent"},
		{name: "accept", header: "accept"},
		{name: "content-type", header: "Content-Type"},
		{name: "openrouter title", header: `"X-Title"`},
		{name: "openrouter referer", header: "HTTP-Referer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := "[providers.x]\nkind = \"openai-compatible\"\nheaders = { " + tt.header + " = \"" + plantedHeader + "\" }\n"
			c, err := Parse([]byte(file), "config.toml", testHome)
			if !tt.refused {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(c.Providers["x"].Headers) != 1 {
					t.Errorf("headers = %v", c.Providers["x"].Headers)
				}
				return
			}
			want := []string{"config.toml:3:13: " + joinKey("providers.x.headers", strings.Trim(tt.header, `"`)) + ": " + credentialHeaderMsg}
			if d := cmp.Diff(want, errorLines(t, err)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if strings.Contains(err.Error(), plantedHeader) {
				t.Errorf("error echoes the header value: %v", err)
			}
		})
	}
}

// TestMaskedHeaders holds that a config accepted before credential headers
// were refused still never prints one.
func TestMaskedHeaders(t *testing.T) {
	c := Default(testHome)
	c.Providers["azure"] = Provider{
		Kind: "openai-compatible",
		Headers: map[string]string{
			"api-key":             plantedHeader,
			"Authorization":       "Bearer " + plantedHeader,
			"Proxy-Authorization": plantedHeader,
			"X-Title":             "claw",
			"anthropic-version":   "2023-06-01",
			"X-Empty-Token":       "",
		},
	}
	m := c.Masked()
	want := map[string]string{
		"api-key": Mask, "Authorization": Mask, "Proxy-Authorization": Mask,
		"X-Title": "claw", "anthropic-version": "2023-06-01", "X-Empty-Token": "",
	}
	if d := cmp.Diff(want, m.Providers["azure"].Headers); d != "" {
		t.Errorf("masked headers (-want +got):\n%s", d)
	}
	if c.Providers["azure"].Headers["api-key"] != plantedHeader {
		t.Errorf("Masked changed the original")
	}

	var toml, js bytes.Buffer
	if err := m.WriteTOML(&toml); err != nil {
		t.Fatal(err)
	}
	if err := json.NewEncoder(&js).Encode(m); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"toml": toml.String(), "json": js.String()} {
		if strings.Contains(out, plantedHeader) || strings.Contains(out, "PLANTED") {
			t.Errorf("%s output leaks a header value:\n%s", name, out)
		}
		if !strings.Contains(out, "claw") {
			t.Errorf("%s output lost a harmless header:\n%s", name, out)
		}
	}
}

func TestCredentialHeader(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"authorization", true}, {"Authorization", true}, {"proxy-authorization", true},
		{"x-api-key", true}, {"X_Api_Key", true}, {"api-key", true}, {"API-KEY", true}, {"apikey", true},
		{"x-goog-api-key", true}, {"ocp-apim-subscription-key", true}, {"x-auth-token", true},
		{"x-amz-security-token", true}, {"client-secret", true}, {"x-password", true}, {"passwd", true},
		{"x-passphrase", true}, {"cookie", true}, {"set-cookie", true}, {"x-session-id", true},
		{"session", true}, {"x-credentials", true}, {"pass", true}, {"PWD", true}, {"auth", true},
		{"x.api.key", true}, {"Api Key", true},
		{"anthropic-version", false}, {"anthropic-beta", false}, {"openai-organization", false},
		{"openai-project", false}, {"x-request-id", false}, {"user-agent", false}, {"accept", false},
		{"accept-encoding", false}, {"content-type", false}, {"x-title", false}, {"http-referer", false},
		{"x-stainless-os", false}, {"keep-alive", false}, {"compass", false}, {"", false},
	}
	for _, tt := range tests {
		if got := credentialHeader(tt.name); got != tt.want {
			t.Errorf("credentialHeader(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSecretsNotInErrors(t *testing.T) {
	for _, file := range []string{
		"[security]\npassphrase_hash = \"" + fakeToken + "\"\n",
		"[security]\nautonomy = \"" + fakeToken + "\"\n",
		"[security]\nallowed_domains = [\"" + fakeToken + "/x\"]\n",
		"[security]\npassphrase_for = [\"" + fakeToken + "\"]\n",
		fakeToken + " = 1\n",
		"x = " + fakeToken + "\n",
		"workspace_dir = \"" + fakeToken + "\"\n",
	} {
		_, err := Parse([]byte(file), "config.toml", testHome)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", file)
			continue
		}
		if strings.Contains(err.Error(), fakeToken) || strings.Contains(err.Error(), "9fJ3kL0q") {
			t.Errorf("error leaks the secret: %v", err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", "/home/u")
	t.Setenv("CLAW_HOME", "")

	_, err := Load(filepath.Join(dir, "missing.toml"), dir)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	c, missing, err := LoadOrDefault(filepath.Join(dir, "missing.toml"), dir)
	if err != nil || !missing || c.Receipts.Dir != filepath.Join(dir, "receipts") || c.WorkspaceDir != "/home/u/claw-workspace" {
		t.Errorf("LoadOrDefault = %+v, %v, %v", c, missing, err)
	}

	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), MaxSize/10+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, dir); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}

	if _, err := Load(dir, dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}

	good := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(good, []byte("[receipts]\nkey = \"$CLAW_HOME/k\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load(good, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != good || c.Home != dir || c.Receipts.Key != filepath.Join(dir, "k") {
		t.Errorf("Load: path %q home %q key %q", c.Path, c.Home, c.Receipts.Key)
	}

	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, readTestdata(t, "many_errors.toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad, dir)
	if lines := errorLines(t, err); len(lines) != 9 || !strings.HasPrefix(lines[0], bad+":1:17: ") {
		t.Errorf("Load(bad) = %q", lines)
	}
}

func TestHomeDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("CLAW_HOME", "")
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, flag, env, want string
	}{
		{name: "default", want: "/home/u/.claw"},
		{name: "env", env: "/srv/claw", want: "/srv/claw"},
		{name: "flag beats env", flag: "/opt/c", env: "/srv/claw", want: "/opt/c"},
		{name: "relative flag", flag: "rel", want: filepath.Join(cwd, "rel")},
		{name: "tilde flag", flag: "~/c", want: "/home/u/c"},
		{name: "cleaned", env: "/srv//claw/", want: "/srv/claw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CLAW_HOME", tt.env)
			got, err := HomeDir(tt.flag)
			if err != nil || got != tt.want {
				t.Errorf("HomeDir(%q) = %q, %v; want %q", tt.flag, got, err, tt.want)
			}
		})
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || d.Duration != 90*time.Second {
		t.Errorf("UnmarshalText = %v, %v", d, err)
	}
	if err := d.UnmarshalText([]byte("90")); err == nil {
		t.Errorf("UnmarshalText(90) succeeded")
	}
	b, _ := Duration{250 * time.Millisecond}.MarshalText()
	if string(b) != "250ms" {
		t.Errorf("MarshalText = %q", b)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "1K": 1024, "512M": 512 << 20, "1G": 1 << 30, "2T": 2 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0G", "1g", "1GB", "-1", "1.5G", "99999999999T", "99999999999999999999"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

func TestSuggest(t *testing.T) {
	if got := suggest("security", "alowed_commands"); got != ` (did you mean "allowed_commands"?)` {
		t.Errorf("suggest = %q", got)
	}
	if got := suggest("", "zzzzzzzz"); got != "" {
		t.Errorf("suggest for nonsense = %q", got)
	}
}

func TestWriteTOMLRoundTrip(t *testing.T) {
	c, err := Parse(readTestdata(t, "full.toml"), "full.toml", "/srv/ho$me")
	if err != nil {
		t.Fatal(err)
	}
	c.WorkspaceDir = "/srv/a$$b"
	if err := c.Expand(testEnv); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteTOML(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(buf.Bytes(), "shown.toml", "/elsewhere")
	if err != nil {
		t.Fatalf("Parse(WriteTOML()): %v\n%s", err, buf.Bytes())
	}
	if err := back.Expand(func(string) string { return "" }); err != nil {
		t.Fatalf("Expand: %v\n%s", err, buf.Bytes())
	}
	back.Path, back.Home = c.Path, c.Home
	if d := cmp.Diff(c, back, ignoreInternal); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// TestDeprecatedKey: a key claw no longer reads still loads, whatever its
// value, with a warning at its position; the same name elsewhere is an
// unknown key.
func TestDeprecatedKey(t *testing.T) {
	for _, v := range []string{"true", "false", `"yes"`} {
		c, err := Parse([]byte("[security]\nautonomy = \"full\"\naudit_log = "+v+"\n"), "config.toml", testHome)
		if err != nil {
			t.Fatalf("audit_log = %s: %v", v, err)
		}
		if c.Security.Autonomy != "full" {
			t.Errorf("audit_log = %s: the rest of the file was not read: %+v", v, c.Security)
		}
		want := `config.toml:3:1: security.audit_log: deprecated and ignored: every decision and outcome is always recorded in the receipt log; remove the key`
		if len(c.Warnings) != 1 || c.Warnings[0].Error() != want {
			t.Errorf("audit_log = %s: warnings %q, want [%q]", v, c.Warnings, want)
		}
	}
	if c, err := Parse([]byte("[security]\nautonomy = \"full\"\n"), "config.toml", testHome); err != nil {
		t.Error(err)
	} else if len(c.Warnings) != 0 {
		t.Errorf("no deprecated key: warnings %q", c.Warnings)
	}
	_, err := Parse([]byte("audit_log = true\n"), "config.toml", testHome)
	if err == nil || !strings.Contains(err.Error(), "audit_log: unknown key") {
		t.Errorf("top-level audit_log: err %v, want an unknown key", err)
	}
}
