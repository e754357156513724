package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawsec/claw/executor/internal/child"
	"github.com/clawsec/claw/executor/internal/egress"
	"github.com/clawsec/claw/internal/toolkind"
)

// Tools a Spec can run.
const (
	ToolShell     = toolkind.Shell
	ToolFileRead  = child.ToolFileRead
	ToolFileWrite = child.ToolFileWrite
	ToolEditFile  = child.ToolEditFile
	ToolFileList  = child.ToolFileList
	ToolHTTP      = child.ToolHTTP
)

// DefaultMinLandlockABI is the minimum Landlock ABI claw requires unless
// configured otherwise: 6 brings TCP rules (4) and the abstract unix socket
// and signal scopes (6).
const DefaultMinLandlockABI = 6

// Defaults of a Spec's zero fields.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 1 << 20 // bytes kept per stream
	DefaultCPU       = 120     // seconds
	DefaultFileSize  = 1 << 30
	DefaultOpenFiles = 1024
	DefaultMemory    = 4 << 30 // RLIMIT_DATA, and memory.max with cgroups
	DefaultProcesses = 512
	MaxSpecBytes     = 32 << 20
	maxToolOutput    = 24 << 20
)

// Spec is one action to run in a sandbox made for it. It is plain data so
// it can be logged, hashed and sent over a pipe.
type Spec struct {
	// Tool is "shell" (run Argv) or an in-sandbox tool (Args). Empty means
	// shell.
	Tool toolkind.Kind `json:"tool,omitempty"`
	// Argv is the command for shell; the integrator passes
	// ["bash", "-c", command]. It is looked up in the sandbox's PATH.
	Argv []string `json:"argv,omitempty"`
	// Args are the tool's JSON arguments.
	Args json.RawMessage `json:"args,omitempty"`
	// Stdin is the command's standard input (nil: /dev/null).
	Stdin []byte `json:"stdin,omitempty"`
	// Cwd is the working directory (absolute); default the first Write
	// path, else the sandbox's private home.
	Cwd string `json:"cwd,omitempty"`
	// Read and Write are absolute paths the action may read (and execute),
	// or read and modify. Nothing else outside the system directories can
	// be read or listed (a path's metadata can: see the package doc's
	// Limits). Missing paths grant nothing.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Protect lists paths below Write that stay read-only (git hooks and
	// configuration, editor and agent settings: files that run code
	// outside the sandbox later). Those that exist are bind-mounted
	// read-only in the action's mount namespace; Landlock cannot carve
	// them out of a granted tree.
	Protect []string `json:"protect,omitempty"`
	// Net is the network grant; the zero value is no network.
	Net Net `json:"net,omitempty"`
	// Env adds variables to the built-in allowlist: "NAME" passes the
	// parent's value through, "NAME=value" sets one. Names that look like
	// secrets are refused.
	Env []string `json:"env,omitempty"`
	// Secrets are "NAME=value" credentials the integrator hands this
	// action by name (an MCP server's token, an external agent's API key):
	// set in the child's environment although their names look like
	// secrets. Never recorded; the integrator keeps them out of receipts
	// and logs.
	Secrets []string `json:"secrets,omitempty"`
	// Timeout is the wall-clock limit (default 60s); the whole process tree
	// is killed when it expires.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxOutput is the number of bytes kept of each of stdout and stderr
	// (default 1 MiB; head and tail are kept, the middle is dropped).
	MaxOutput int64 `json:"max_output,omitempty"`
	// Limits are resource limits; zero fields take the defaults.
	Limits Limits `json:"limits,omitempty"`
	// RunAs is a user name or numeric uid to run as when claw runs as root;
	// empty keeps the current uid (with every capability dropped).
	RunAs string `json:"run_as,omitempty"`
	// MinLandlockABI is the Landlock ABI required (default 6).
	MinLandlockABI int `json:"min_landlock_abi,omitempty"`
	// Degraded runs with whatever confinement the kernel offers instead of
	// refusing. It is an explicit, loud opt-in, reported in the Result.
	Degraded bool `json:"degraded,omitempty"`
}

// Net is a network grant. With no ports and no egress the sandbox has no
// network at all.
type Net struct {
	// Ports are the TCP ports the action may connect to, directly, in the
	// host's network namespace (the http tool).
	Ports []uint16 `json:"ports,omitempty"`
	// Egress gives the action network only through claw's egress proxy:
	// in a network namespace of its own whose one way out is the proxy's
	// port on 127.0.0.1. It excludes Ports.
	Egress *Egress `json:"egress,omitempty"`
}

// On reports whether direct network is granted (Ports).
func (n Net) On() bool { return len(n.Ports) > 0 }

// Egress is a grant of network through the egress proxy: the
// destinations the proxy admits for the action and its limits.
type Egress struct {
	// Hosts are the destinations, "host:port" ("[v6]:port" for an IPv6
	// address); a name is matched after lower-casing and dropping one
	// trailing dot, never as a pattern.
	Hosts []string `json:"hosts"`
	// AllowPrivate are CIDR prefixes of non-public addresses the proxy
	// may connect to (the [security] allow_private_cidrs of the config).
	AllowPrivate []string `json:"allow_private,omitempty"`
	// MaxBytes caps the bytes of all connections, both ways (default
	// 1 GiB); IdleTimeout closes a connection idle that long (default
	// 60s); MaxConns caps the connections open at once (default 32).
	MaxBytes    int64         `json:"max_bytes,omitempty"`
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	MaxConns    int           `json:"max_conns,omitempty"`
}

// EgressReport is every connection an action made through the egress
// proxy; EgressConn is one of them.
type (
	EgressReport = egress.Report
	EgressConn   = egress.Record
)

// Limits are resource limits of the sandboxed process tree.
type Limits struct {
	CPUSeconds    uint64 `json:"cpu_seconds,omitempty"`     // RLIMIT_CPU
	FileSizeBytes uint64 `json:"file_size_bytes,omitempty"` // RLIMIT_FSIZE, per file
	OpenFiles     uint64 `json:"open_files,omitempty"`      // RLIMIT_NOFILE
	MemoryBytes   uint64 `json:"memory_bytes,omitempty"`    // RLIMIT_DATA; memory.max with cgroups
	Processes     uint64 `json:"processes,omitempty"`       // RLIMIT_NPROC; pids.max with cgroups
}

// Result is the outcome of one Run.
type Result struct {
	ExitCode        int           `json:"exit_code"`
	Signal          string        `json:"signal,omitempty"`
	TimedOut        bool          `json:"timed_out,omitempty"`
	Stdout          []byte        `json:"stdout,omitempty"`
	Stderr          []byte        `json:"stderr,omitempty"`
	StdoutTruncated bool          `json:"stdout_truncated,omitempty"`
	StderrTruncated bool          `json:"stderr_truncated,omitempty"`
	StdoutBytes     int64         `json:"stdout_bytes"` // total produced
	StderrBytes     int64         `json:"stderr_bytes"`
	Duration        time.Duration `json:"duration"`
	// StdoutSHA256 and StderrSHA256 are hex SHA-256 digests of the whole
	// streams as produced (not just the kept part); OutputSHA256 is the
	// SHA-256 of the two digests' bytes concatenated.
	StdoutSHA256 string `json:"stdout_sha256"`
	StderrSHA256 string `json:"stderr_sha256"`
	OutputSHA256 string `json:"output_sha256"`
	// Sandbox is what was enforced.
	Sandbox Applied `json:"sandbox"`
	// Tool is the in-sandbox tool's outcome (nil for shell).
	Tool *ToolResult `json:"tool,omitempty"`
	// Egress is what the action did through the egress proxy (nil
	// without an egress grant).
	Egress *EgressReport `json:"egress,omitempty"`
	// SetupError says why the sandbox could not be set up (exit 126) or the
	// command could not be found (127); nothing ran.
	SetupError string `json:"setup_error,omitempty"`
}

// Applied describes the confinement a Run had.
type Applied struct {
	LandlockABI int      `json:"landlock_abi"`
	Seccomp     bool     `json:"seccomp"`
	Namespaces  []string `json:"namespaces,omitempty"`
	NoNewPrivs  bool     `json:"no_new_privs"`
	CapsDropped bool     `json:"caps_dropped"`
	ReadOnlyFS  bool     `json:"read_only_fs"` // everything but the write grants remounted read-only
	FreshProc   bool     `json:"fresh_proc"`
	Cgroup      string   `json:"cgroup,omitempty"` // "v1", "v2" or empty
	UID         int      `json:"uid"`
	// ToolInProcess: the tool ran in the sandbox's init process, every
	// thread of which was confined and checked, instead of a second
	// program it started.
	ToolInProcess bool     `json:"tool_in_process,omitempty"`
	Degraded      bool     `json:"degraded,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// ToolResult is the outcome of an in-sandbox tool.
type ToolResult struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// httpPolicyArgs are the http tool's arguments that carry policy, not the
// request: only [HTTPArgs]'s caller sets them.
var httpPolicyArgs = []string{"allow_hosts", "allow_schemes", "allow_private"}

// HTTPArgs returns the http tool's Args for a request (url, method,
// headers, body, max_bytes, timeout_ms) with the host allowlist set to
// allowHosts, in the forms of the gate's allowed_domains ("example.com",
// "*.example.com", "*"). Every initial URL and redirect target is checked
// against it, and every address against the public ones. The policy
// arguments (allow_hosts, allow_schemes, allow_private) are dropped from
// request in every spelling the tool's decoder would accept, so that
// whoever wrote the request cannot widen them. An empty allowHosts is an
// error: the tool would take it for no limit.
func HTTPArgs(request map[string]any, allowHosts []string) (json.RawMessage, error) {
	if len(allowHosts) == 0 {
		return nil, fmt.Errorf("%w: http tool without a host allowlist", ErrInvalidSpec)
	}
	args := make(map[string]any, len(request)+1)
	for k, v := range request {
		if !slices.ContainsFunc(httpPolicyArgs, func(p string) bool { return strings.EqualFold(k, p) }) {
			args[k] = v
		}
	}
	args["allow_hosts"] = allowHosts
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%w: http args: %v", ErrInvalidSpec, err)
	}
	return raw, nil
}

// ErrInvalidSpec is returned (wrapped) for a Spec that cannot be run.
var ErrInvalidSpec = errors.New("invalid sandbox spec")

// DecodeSpec reads one Spec as JSON: bounded, unknown fields rejected, no
// trailing data, validated.
func DecodeSpec(r io.Reader) (Spec, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSpecBytes+1))
	if err != nil {
		return Spec{}, fmt.Errorf("failed to read spec: %w", err)
	}
	if len(data) > MaxSpecBytes {
		return Spec{}, fmt.Errorf("%w: larger than %d bytes", ErrInvalidSpec, MaxSpecBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Spec{}, fmt.Errorf("%w: trailing data", ErrInvalidSpec)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// Validate checks a Spec without touching the system.
func (s *Spec) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, a...))
	}
	switch s.Tool {
	case "", ToolShell:
		if len(s.Argv) == 0 || s.Argv[0] == "" {
			return bad("empty command")
		}
		if len(s.Args) != 0 {
			return bad("shell takes argv, not args")
		}
	case ToolFileRead, ToolFileWrite, ToolEditFile, ToolFileList, ToolHTTP:
		if len(s.Argv) != 0 {
			return bad("tool %s takes args, not argv", s.Tool)
		}
		if len(s.Args) == 0 || !json.Valid(s.Args) {
			return bad("tool %s needs JSON args", s.Tool)
		}
		if len(s.Stdin) != 0 {
			return bad("tool %s takes no stdin", s.Tool)
		}
	default:
		return bad("unknown tool %q", s.Tool)
	}
	for _, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return bad("argument contains a NUL byte")
		}
	}
	for _, set := range [][]string{s.Read, s.Write} {
		for _, p := range set {
			if err := checkAbs(p); err != nil {
				return bad("%v", err)
			}
		}
	}
	if s.Cwd != "" {
		if err := checkAbs(s.Cwd); err != nil {
			return bad("cwd: %v", err)
		}
	}
	for _, p := range s.Net.Ports {
		if p == 0 {
			return bad("port 0")
		}
	}
	if err := s.Net.Egress.validate(len(s.Net.Ports) > 0); err != nil {
		return bad("%v", err)
	}
	for _, e := range s.Env {
		name, _, _ := strings.Cut(e, "=")
		if !validEnvName(name) {
			return bad("bad environment variable name %q", name)
		}
		if secretName(name) {
			return bad("environment variable %s looks like a secret and is never passed to the sandbox", name)
		}
	}
	for _, e := range s.Secrets {
		if name, _, ok := strings.Cut(e, "="); !ok || !validEnvName(name) {
			return bad("bad secret variable %q: want NAME=value", name)
		}
	}
	if s.Timeout < 0 || s.MaxOutput < 0 || s.MinLandlockABI < 0 {
		return bad("negative limit")
	}
	if s.MaxOutput > 256<<20 {
		return bad("max_output above 256 MiB")
	}
	return nil
}

func (e *Egress) validate(direct bool) error {
	if e == nil {
		return nil
	}
	if direct {
		return errors.New("egress and direct ports exclude each other")
	}
	if len(e.Hosts) == 0 {
		return errors.New("egress without hosts")
	}
	for _, h := range e.Hosts {
		if _, err := egress.CanonicalHostPort(h); err != nil {
			return err
		}
	}
	if _, err := egress.ParseCIDRs(e.AllowPrivate); err != nil {
		return fmt.Errorf("egress: %w", err)
	}
	if e.MaxBytes < 0 || e.IdleTimeout < 0 || e.MaxConns < 0 {
		return errors.New("egress: negative limit")
	}
	return nil
}

func checkAbs(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("path %q contains a NUL byte", p)
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("path %q is not absolute", p)
	}
	return nil
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// secretName reports whether an environment variable name looks like it
// carries a credential.
func secretName(n string) bool {
	u := strings.ToUpper(n)
	for _, s := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	for _, p := range []string{"AWS_", "AZURE_", "GOOGLE_", "GCP_", "GH_", "GITHUB_", "GITLAB_", "OPENAI_", "ANTHROPIC_", "SSH_", "GPG_", "DOCKER_", "KUBECONFIG", "VAULT_", "NPM_CONFIG_", "CLAW_"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}
