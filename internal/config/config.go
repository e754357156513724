package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MaxSize is the largest config file Load reads.
const MaxSize = 1 << 20

// Config is the whole claw configuration. The zero value is not useful: start
// from [Default], [Parse] or [Load].
type Config struct {
	WorkspaceDir    string   `toml:"workspace_dir" json:"workspace_dir"`
	DefaultProvider string   `toml:"default_provider" json:"default_provider"`
	DefaultModel    string   `toml:"default_model" json:"default_model"`
	Security        Security `toml:"security" json:"security"`
	Sandbox         Sandbox  `toml:"sandbox" json:"sandbox"`
	Receipts        Receipts `toml:"receipts" json:"receipts"`
	Agent           Agent    `toml:"agent" json:"agent"`
	// Providers are the [providers.NAME] sections.
	Providers map[string]Provider `toml:"providers" json:"providers"`
	Serve     Serve               `toml:"serve" json:"serve"`
	// Autonomous is the [autonomous] table (claw agent --autonomous).
	Autonomous Autonomous `toml:"autonomous" json:"autonomous"`
	// Delegate is the [delegate] table (the delegate tool).
	Delegate Delegate `toml:"delegate" json:"delegate"`
	// Channels are the [channels.NAME] sections: per-channel settings
	// ("cli", "serve", "mcp").
	Channels map[string]Channel `toml:"channels" json:"channels,omitempty"`

	// Path is the file the config was loaded from ("" for defaults).
	Path string `toml:"-" json:"-"`
	// Home is the claw home directory the defaults were derived from.
	Home string `toml:"-" json:"-"`
	// Warnings are problems that do not stop the file from loading: keys
	// claw no longer reads (see deprecatedKeys).
	Warnings []*Error `toml:"-" json:"-"`

	src      *source // positions of the keys in the file, nil for defaults
	expanded bool
}

// Security is the [security] table: what the gate allows.
type Security struct {
	Autonomy                 string   `toml:"autonomy" json:"autonomy"`
	WorkspaceOnly            bool     `toml:"workspace_only" json:"workspace_only"`
	ForbiddenPaths           []string `toml:"forbidden_paths" json:"forbidden_paths"`
	ReadPaths                []string `toml:"read_paths" json:"read_paths"`
	ForbiddenCommands        []string `toml:"forbidden_commands" json:"forbidden_commands"`
	AllowedCommands          []string `toml:"allowed_commands" json:"allowed_commands"`
	AllowedDomains           []string `toml:"allowed_domains" json:"allowed_domains"`
	AllowedRegistries        []string `toml:"allowed_registries" json:"allowed_registries"`     // package managers' default registries, for those managers only
	AllowPrivateCIDRs        []string `toml:"allow_private_cidrs" json:"allow_private_cidrs"`   // non-public ranges the egress proxy may reach
	WorkspaceExecAllow       []string `toml:"workspace_exec_allow" json:"workspace_exec_allow"` // workspace files that run code outside the sandbox the agent may still write
	PassphraseHash           string   `toml:"passphrase_hash" json:"passphrase_hash"`
	PassphraseFor            []string `toml:"passphrase_for" json:"passphrase_for"`
	AllowPrivilegeEscalation bool     `toml:"allow_privilege_escalation" json:"allow_privilege_escalation"`
	// GateTimeout bounds the CPU time of one decision (see gate.Options).
	GateTimeout Duration `toml:"gate_timeout" json:"gate_timeout"`
	// ApprovalTimeout bounds how long an approval may wait; no answer in
	// time is recorded as a timeout, never as a rejection.
	ApprovalTimeout Duration `toml:"approval_timeout" json:"approval_timeout"`
	// GrantExpiry is how long a grant lasts when none is given (an
	// approver's "yes for this family" and `claw grant add`);
	// GrantMaxExpiry is the longest any grant may last.
	GrantExpiry    Duration `toml:"grant_expiry" json:"grant_expiry"`
	GrantMaxExpiry Duration `toml:"grant_max_expiry" json:"grant_max_expiry"`
	// PassphraseMaxFailures wrong passphrases in a row lock the
	// passphrase gate for PassphraseLockout.
	PassphraseMaxFailures int      `toml:"passphrase_max_failures" json:"passphrase_max_failures"`
	PassphraseLockout     Duration `toml:"passphrase_lockout" json:"passphrase_lockout"`
}

// Sandbox is the [sandbox] table: limits of the sandboxed child.
type Sandbox struct {
	MinLandlockABI int      `toml:"min_landlock_abi" json:"min_landlock_abi"`
	RunAs          string   `toml:"run_as" json:"run_as"`
	Timeout        Duration `toml:"timeout" json:"timeout"`
	MemoryMax      string   `toml:"memory_max" json:"memory_max"`
	PidsMax        int      `toml:"pids_max" json:"pids_max"`
	HTTPPorts      []int    `toml:"http_ports" json:"http_ports"`
	// Path is the PATH of sandboxed shell actions before filtering;
	// empty: the PATH claw was started with.
	Path []string `toml:"path" json:"path"`
}

// Receipts is the [receipts] table: where the receipt log and its key live.
type Receipts struct {
	Dir        string `toml:"dir" json:"dir"`
	Key        string `toml:"key" json:"key"`
	Checkpoint int    `toml:"checkpoint_every" json:"checkpoint_every"`
}

// Autonomy levels, the allowed values of security.autonomy.
const (
	AutonomyReadonly   = "readonly"
	AutonomySupervised = "supervised"
	AutonomyFull       = "full"
)

// Autonomies lists the autonomy levels from least to most permissive.
var Autonomies = []string{AutonomyReadonly, AutonomySupervised, AutonomyFull}

// RiskLevels lists the risk levels a passphrase_for entry may name.
var RiskLevels = []string{"low", "medium", "high", "critical"}

// Duration is a time.Duration written as a string in TOML and JSON ("15s",
// "250ms").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: use a number with a unit, like \"250ms\" or \"15s\"", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration the way time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Agent is the [agent] table: the limits of the agent loop.
type Agent struct {
	MaxToolRounds    int      `toml:"max_tool_rounds" json:"max_tool_rounds"`
	MaxResponseBytes int      `toml:"max_response_bytes" json:"max_response_bytes"`
	ToolTimeout      Duration `toml:"tool_timeout" json:"tool_timeout"`
	ShellTimeout     Duration `toml:"shell_timeout" json:"shell_timeout"`
	HTTPTimeout      Duration `toml:"http_timeout" json:"http_timeout"`
	HistoryMessages  int      `toml:"history_messages" json:"history_messages"`
	// HistoryBudget is the size in bytes of the history sent to the
	// model before older turns are compacted into the summary.
	HistoryBudget int `toml:"history_budget" json:"history_budget"`
	// Soul is the identity file injected into the system prompt.
	Soul     string `toml:"soul" json:"soul"`
	MemoryDB string `toml:"memory_db" json:"memory_db"`
}

// Provider is one [providers.NAME] table (see the provider package).
type Provider struct {
	Kind             string            `toml:"kind" json:"kind"`
	BaseURL          string            `toml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv        string            `toml:"api_key_env" json:"api_key_env,omitempty"`
	Model            string            `toml:"model" json:"model,omitempty"`
	Timeout          Duration          `toml:"timeout" json:"timeout"`
	MaxResponseBytes int               `toml:"max_response_bytes" json:"max_response_bytes,omitempty"`
	Script           string            `toml:"script" json:"script,omitempty"`
	Headers          map[string]string `toml:"headers,omitempty" json:"headers,omitempty"`
	Fallbacks        []string          `toml:"fallbacks,omitempty" json:"fallbacks,omitempty"`
	Routes           map[string]string `toml:"routes,omitempty" json:"routes,omitempty"`
	Default          string            `toml:"default" json:"default,omitempty"`
}

// Provider kinds.
var ProviderKinds = []string{"mock", "openai-compatible", "openai", "anthropic", "reliable", "router"}

// Channel is a [channels.NAME] table. Every channel takes tools_allow;
// the channels claw serve starts (bridge, planckclaw, discord) take the
// keys [ChannelKeys] lists for them, and a key written under a channel it
// does not apply to is an error.
type Channel struct {
	// ToolsAllow lists the tools the agent offers the model on this
	// channel, and the only tools a channel's caller may call; absent
	// means every tool.
	ToolsAllow []string `toml:"tools_allow" json:"tools_allow"`
	// Autonomy overrides security.autonomy for this channel.
	Autonomy string `toml:"autonomy,omitempty" json:"autonomy,omitempty"`
	// ApproverIDs are who may answer this channel's approval requests,
	// as approvers are recorded ("cli:alice", "discord:1234"; for
	// discord, bare user ids). Empty: nobody, so what needs approval on
	// the channel does not run.
	ApproverIDs []string `toml:"approver_ids,omitempty" json:"approver_ids,omitempty"`
	// Listen is the bridge's loopback address ("127.0.0.1:18801").
	Listen string `toml:"listen,omitempty" json:"listen,omitempty"`
	// TokenEnv names the environment variable holding the channel's
	// secret (the bridge's shared token, the Discord bot token); the
	// secret itself is never in the file.
	TokenEnv string `toml:"token_env,omitempty" json:"token_env,omitempty"`
	// Sessions are the session ids a bridge client may bind with hello;
	// empty: none.
	Sessions []string `toml:"sessions,omitempty" json:"sessions,omitempty"`
	// Buffer is how many inbound messages the bridge keeps per session
	// while its client is away (the oldest is dropped beyond it).
	Buffer int `toml:"buffer,omitempty" json:"buffer,omitempty"`
	// Sources maps a bridge session to the channel its permission
	// requests (and approvals) are asked in: "discord:CHANNEL_ID". A
	// session not listed asks through the approvals queue.
	Sources map[string]string `toml:"sources,omitempty" json:"sources,omitempty"`
	// Dir is the directory of PlanckClaw's FIFOs (made 0700).
	Dir string `toml:"dir,omitempty" json:"dir,omitempty"`
	// AllowedUserIDs and AllowedChannelIDs are who may talk to the
	// Discord bot and where; empty: nobody, nowhere.
	AllowedUserIDs    []string `toml:"allowed_user_ids,omitempty" json:"allowed_user_ids,omitempty"`
	AllowedChannelIDs []string `toml:"allowed_channel_ids,omitempty" json:"allowed_channel_ids,omitempty"`
}

// The channels claw serve starts when their section is present.
const (
	ChannelBridge     = "bridge"
	ChannelPlanckClaw = "planckclaw"
	ChannelDiscord    = "discord"
)

// DefaultBridgeTokenEnv is [channels.bridge] token_env when absent.
const DefaultBridgeTokenEnv = "SYNTHESIS_BRIDGE_TOKEN"

// DefaultBridgeBuffer is [channels.bridge] buffer when absent.
const DefaultBridgeBuffer = 100

// ChannelKeys lists the keys each channel claw serve starts takes; any
// other channel takes tools_allow only.
var ChannelKeys = map[string][]string{
	ChannelBridge:     {"tools_allow", "autonomy", "approver_ids", "listen", "token_env", "sessions", "buffer", "sources"},
	ChannelPlanckClaw: {"tools_allow", "autonomy", "approver_ids", "dir"},
	ChannelDiscord:    {"tools_allow", "autonomy", "approver_ids", "token_env", "allowed_user_ids", "allowed_channel_ids"},
}

// ToolNames are the tools a channel may allow.
var ToolNames = []string{"ask_user", "delegate", "edit_file", "file_list", "file_read", "file_write", "http", "memory_search", "plugin", "shell", "time"}

// Serve is the [serve] table: the daemon.
type Serve struct {
	Socket            string   `toml:"socket" json:"socket"`
	Listen            string   `toml:"listen" json:"listen"`
	TokenFile         string   `toml:"token_file" json:"token_file"`
	MaxBodyBytes      int      `toml:"max_body_bytes" json:"max_body_bytes"`
	ReadHeaderTimeout Duration `toml:"read_header_timeout" json:"read_header_timeout"`
	RequestTimeout    Duration `toml:"request_timeout" json:"request_timeout"`
}

// Default returns the configuration used for every absent key. Paths are not
// yet expanded: call [Config.Expand]. home must be absolute; a "$" in it is
// escaped so that expansion leaves it alone.
func Default(home string) *Config {
	h := strings.ReplaceAll(home, "$", "$$")
	return &Config{
		WorkspaceDir:    "~/claw-workspace",
		DefaultProvider: "local",
		DefaultModel:    "mock",
		Security: Security{
			Autonomy:          AutonomySupervised,
			WorkspaceOnly:     true,
			ForbiddenPaths:    []string{"/etc", "/sys", "/boot", "~/.ssh"},
			ReadPaths:         []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"},
			ForbiddenCommands: []string{"rm", "shutdown", "reboot", "mkfs", "dd"},
			AllowedCommands: []string{"ls", "cat", "grep", "find", "head", "tail", "wc", "pwd",
				"echo", "git", "go", "make", "npm", "python3"},
			AllowedDomains: []string{},
			AllowedRegistries: []string{"proxy.golang.org", "sum.golang.org", "registry.npmjs.org", "registry.yarnpkg.com", "pypi.org",
				"files.pythonhosted.org", "index.crates.io", "static.crates.io", "crates.io", "rubygems.org", "index.rubygems.org"},
			PassphraseHash:           "",
			PassphraseFor:            []string{"high"},
			AllowPrivateCIDRs:        []string{},
			WorkspaceExecAllow:       []string{},
			AllowPrivilegeEscalation: false,
			GateTimeout:              Duration{250 * time.Millisecond},
			ApprovalTimeout:          Duration{120 * time.Second},
			GrantExpiry:              Duration{8 * time.Hour},
			GrantMaxExpiry:           Duration{30 * 24 * time.Hour},
			PassphraseMaxFailures:    5,
			PassphraseLockout:        Duration{15 * time.Minute},
		},
		Sandbox: Sandbox{
			MinLandlockABI: 6,
			RunAs:          "nobody",
			Timeout:        Duration{15 * time.Second},
			MemoryMax:      "1G",
			PidsMax:        256,
			HTTPPorts:      []int{80, 443},
			Path:           []string{},
		},
		Receipts: Receipts{
			Dir:        filepath.Join(h, "receipts"),
			Key:        filepath.Join(h, "keys", "receipt.key"),
			Checkpoint: 256,
		},
		Agent: Agent{
			MaxToolRounds:    5,
			MaxResponseBytes: 1 << 20,
			ToolTimeout:      Duration{30 * time.Second},
			ShellTimeout:     Duration{15 * time.Second},
			HTTPTimeout:      Duration{20 * time.Second},
			HistoryMessages:  40,
			HistoryBudget:    32 << 10,
			Soul:             filepath.Join(h, "soul.md"),
			MemoryDB:         filepath.Join(h, "memory.sqlite"),
		},
		Providers: map[string]Provider{
			"local": {Kind: "mock"},
		},
		Autonomous: defaultAutonomous(),
		Serve: Serve{
			Socket:            DefaultSocket(h),
			TokenFile:         DefaultTokenFile(h),
			MaxBodyBytes:      1 << 20,
			ReadHeaderTimeout: Duration{5 * time.Second},
			RequestTimeout:    Duration{120 * time.Second},
		},
		Home: home,
	}
}

// DefaultSocket and DefaultTokenFile are claw serve's socket and token
// file in the claw home when the config names none.
func DefaultSocket(home string) string    { return filepath.Join(home, "run", "claw.sock") }
func DefaultTokenFile(home string) string { return filepath.Join(home, "token") }

// HomeDir returns the claw home: flagHome when set, else $CLAW_HOME, else
// ~/.claw. The result is absolute and cleaned; a leading ~ is expanded.
func HomeDir(flagHome string) (string, error) {
	h := flagHome
	if h == "" {
		h = os.Getenv("CLAW_HOME")
	}
	if h == "" {
		uh, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the claw home: set $CLAW_HOME or --home: %w", err)
		}
		return filepath.Join(uh, ".claw"), nil
	}
	if h == "~" || strings.HasPrefix(h, "~/") {
		uh, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand %q: %w", h, err)
		}
		h = filepath.Join(uh, h[1:])
	}
	abs, err := filepath.Abs(h)
	if err != nil {
		return "", fmt.Errorf("cannot make claw home %q absolute: %w", h, err)
	}
	return abs, nil
}

// Load reads the config file at path (at most [MaxSize] bytes), parses it
// strictly, applies defaults for absent keys, expands paths with the process
// environment (plus $CLAW_HOME = home when it is not set) and validates the
// result. A missing file is an error for which errors.Is(err, fs.ErrNotExist)
// holds; problems in the file are reported together as an [*Errors].
func Load(path, home string) (*Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return FromSource(data, path, home, EnvWithHome(home))
}

// LoadOrDefault is [Load], except that a missing file yields the expanded
// defaults and missing = true.
func LoadOrDefault(path, home string) (c *Config, missing bool, err error) {
	c, err = Load(path, home)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return c, false, err
	}
	c, err = FromSource(nil, "", home, EnvWithHome(home))
	return c, true, err
}

// FromSource is the config [Load] makes of the file content data read
// from path, with getenv for the environment ([EnvWithHome]); nil data
// is no file: the expanded defaults. It reads nothing else: the result
// is a function of data, home and what getenv answers.
func FromSource(data []byte, path, home string, getenv func(string) string) (*Config, error) {
	c := Default(home)
	if data != nil {
		var err error
		if c, err = Parse(data, path, home); err != nil {
			return nil, err
		}
		c.Path = path
	}
	if err := c.Expand(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadFile reads the config file at path as [Load] does: a regular file
// of at most [MaxSize] bytes. A missing file is an error for which
// errors.Is(err, fs.ErrNotExist) holds.
func ReadFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read config: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("config %q is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read config: %w", err)
	}
	defer f.Close()
	// Room for the size stat saw and one byte more, so that a file of
	// that size is one read and the end of file the next (a hook reads
	// the config on every call); a file that grew meanwhile still reads.
	data := make([]byte, 0, min(max(st.Size(), 0), MaxSize)+1)
	for len(data) <= MaxSize {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read config %q: %w", path, err)
		}
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("config %q is larger than %d bytes", path, MaxSize)
	}
	return data, nil
}

// EnvWithHome is os.Getenv, with CLAW_HOME defaulting to home: the
// environment [Load] expands paths with.
func EnvWithHome(home string) func(string) string {
	return func(k string) string {
		v := os.Getenv(k)
		if v == "" && k == "CLAW_HOME" {
			return home
		}
		return v
	}
}

// Parse parses a config document strictly and applies defaults for absent
// keys. name is the file name used in error positions. Paths are checked
// for form but not expanded: call [Config.Expand]. Every problem is reported
// at once as an [*Errors].
func Parse(data []byte, name, home string) (*Config, error) {
	c := Default(home)
	c.Path = name
	if len(data) > MaxSize {
		return nil, &Errors{List: []*Error{{File: name, Line: 1, Col: 1,
			Msg: fmt.Sprintf("config is larger than %d bytes", MaxSize)}}}
	}
	// A byte order mark is not TOML, but editors write it.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s, err := parseSource(data, name)
	if err != nil {
		return nil, err
	}
	c.src = s
	s.decode(c)
	c.Warnings = s.warns
	s.validate(c)
	if err := s.errs.err(); err != nil {
		return nil, err
	}
	return c, nil
}
