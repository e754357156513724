package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/mcpgate"
	"github.com/clawsec/claw/internal/toolkind"
)

// MCPIO is where an MCP command speaks the protocol (In, Out), logs and
// warns; Version is claw's, told to the client.
type MCPIO struct {
	In      io.Reader
	Out     io.Writer
	Log     io.Writer
	Version string
	Warn    func(format string, args ...any)
}

// MCPServe offers claw's tools to an MCP client on o's input and output
// until it leaves: every call through the broker, on the channel "mcp",
// asking approver (nil: an action the policy asks about is refused).
func MCPServe(ctx context.Context, s Setup, approver broker.Approver, o MCPIO) error {
	b, closeLog, err := OpenBroker(ctx, s, func(cfg *broker.Config, _ *Env) {
		cfg.Channel = "mcp"
		cfg.Approver = approver
		if cfg.InProcess == nil {
			cfg.InProcess = map[toolkind.Kind]broker.ToolFunc{}
		}
		cfg.InProcess[toolkind.Time] = mcpgate.TimeTool
	})
	if err != nil {
		return err
	}
	defer closeLog()
	executor.Prestart() // a long-lived server: keep a sandbox child ready
	defer executor.StopPrestart()
	srv := mcpgate.NewServer(b, mcpgate.Options{Version: o.Version, Logger: logx.FromEnv(o.Log), Conversation: mcpConversation("serve")})
	return runMCP(ctx, o, srv)
}

// Upstream is a third-party MCP server claw mcp proxy runs in the sandbox:
// its name (the prefix of its tools), command line, reach, CPU time and
// user, and the file of its tools' pinned definitions.
type Upstream struct {
	Server                  string
	Argv                    []string
	Read, Write, Env, Hosts []string
	CPU                     uint64
	RunAs                   string
	Pins                    string
	// Secrets names variables of claw's environment handed to the
	// server under the same names (--secret): never recorded or logged,
	// and hidden in the server's output claw shows.
	Secrets []string
}

// MCPProxy runs u in the sandbox and offers its tools, gated, pinned and
// receipted, on o's input and output until the client leaves.
func MCPProxy(ctx context.Context, s Setup, approver broker.Approver, u Upstream, o MCPIO) error {
	pins, err := mcpgate.OpenPins(u.Pins)
	if err != nil {
		return WithCode(ExitError, err)
	}
	log := logx.FromEnv(o.Log)

	var (
		p  *mcpgate.Proxy // made once the upstream runs
		sb broker.Sandbox
		ws string
	)
	b, closeLog, err := OpenBroker(ctx, s, func(cfg *broker.Config, _ *Env) {
		cfg.Channel = "mcp"
		cfg.Approver = approver
		forward := func(ctx context.Context, a map[string]any) (json.RawMessage, error) { return p.Forward(ctx, a) }
		cfg.InProcess = map[toolkind.Kind]broker.ToolFunc{toolkind.MCP: forward, toolkind.Time: mcpgate.TimeTool}
		sb, ws = cfg.Sandbox, cfg.Workspace
	})
	if err != nil {
		return err
	}
	defer closeLog()
	spec := upstreamSpec(u.Argv, sb, ws, u.Read, u.Write, u.Env, u.Hosts, u.CPU)
	if spec.Secrets, err = secretEnv(u.Secrets); err != nil {
		return WithCode(ExitUsage, err)
	}
	spec.RunAs = u.RunAs
	upCtx, stopUp := context.WithCancel(ctx)
	defer stopUp()
	proc, err := executor.Start(upCtx, spec)
	if err != nil {
		return upstreamError(u.Argv[0], executor.Result{}, err)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "claw-proxy", Version: o.Version}, &mcp.ClientOptions{Logger: log})
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	up, err := cl.Connect(cctx, &mcp.IOTransport{Reader: proc.Stdout, Writer: proc.Stdin}, nil)
	cancel()
	if err != nil {
		stopUp()
		res, werr := proc.Wait()
		o.Log.Write(hideSecrets(res.Stderr, spec.Secrets))
		if werr == nil {
			werr = fmt.Errorf("no MCP session (exit status %d): %w", res.ExitCode, err)
		}
		return upstreamError(u.Argv[0], res, werr)
	}
	var closing atomic.Bool
	exited := make(chan struct{})
	defer func() {
		closing.Store(true)
		up.Close() // end of input: the server may exit by itself
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			stopUp()
			<-exited
		}
	}()
	go func() {
		// The upstream's death is logged; calls then fail as tool errors.
		defer close(exited)
		res, err := proc.Wait()
		if ctx.Err() == nil && !closing.Load() {
			o.Log.Write(hideSecrets(res.Stderr, spec.Secrets))
			o.Warn("mcp proxy: the upstream server %s exited (status %d%s); its tools now fail", u.Server, res.ExitCode, errSuffix(err))
		}
	}()

	p = mcpgate.NewProxy(u.Server, up, pins)
	p.Refuser = b
	srv, err := p.Server(ctx, b, mcpgate.Options{Version: o.Version, Logger: log, Conversation: mcpConversation(u.Server)})
	if err != nil {
		return WithCode(ExitError, err)
	}
	return runMCP(ctx, o, srv)
}

// stdioTransport is the MCP transport over the command's standard input
// and output.
func stdioTransport(o MCPIO) mcp.Transport {
	return &mcp.IOTransport{Reader: io.NopCloser(o.In), Writer: nopWriteCloser{o.Out}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// runMCP serves s on standard input and output until the client leaves.
func runMCP(ctx context.Context, o MCPIO, s *mcp.Server) error {
	err := s.Run(ctx, stdioTransport(o))
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return WithCode(ExitError, fmt.Errorf("mcp: %w", err))
}

// upstreamSpec is the sandbox of a proxied MCP server: the broker's PATH
// and limits, read access to the workspace, to the command's own file and
// to read, write access to write, network only to hosts through the
// egress proxy, and no wall-clock limit (the session ends it).
func upstreamSpec(argv []string, sb broker.Sandbox, ws string, read, write, env, hosts []string, cpu uint64) executor.Spec {
	s := executor.Spec{
		Argv:           argv,
		Cwd:            ws,
		Read:           slices.Concat([]string{ws}, sb.PathRead, read),
		Write:          write,
		Limits:         sb.Limits,
		MinLandlockABI: sb.MinLandlockABI,
	}
	s.Limits.CPUSeconds = cpu
	path := executor.DefaultPath
	if len(sb.Path) > 0 {
		path = strings.Join(sb.Path, ":")
	}
	s.Env = append([]string{"PATH=" + path}, env...)
	if exe, err := executor.LookPath(argv[0], path); err == nil {
		s.Read = append(s.Read, exe)
	}
	if len(hosts) > 0 {
		s.Net.Egress = &executor.Egress{Hosts: hosts}
	}
	return s
}

// secretEnv is NAME=value for each name, from claw's environment: what
// --secret hands the upstream. A name that is not set is an error.
func secretEnv(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		v, ok := os.LookupEnv(n)
		if !ok || v == "" {
			return nil, fmt.Errorf("--secret %s: %s is not set in claw's environment", n, n)
		}
		out = append(out, n+"="+v)
	}
	return out, nil
}

// hideSecrets replaces the values of secrets (NAME=value) in b: the
// upstream's own output is shown, its credentials are not.
func hideSecrets(b []byte, secrets []string) []byte {
	for _, s := range secrets {
		if _, v, _ := strings.Cut(s, "="); v != "" {
			b = bytes.ReplaceAll(b, []byte(v), []byte("[REDACTED]"))
		}
	}
	return b
}

// upstreamError maps a failure to start the proxied server to claw's exit
// status: 5 no sandbox, 2 a bad grant, 126 the sandbox could not be set
// up, 127 not found, else 1.
func upstreamError(cmd string, res executor.Result, err error) error {
	var se *executor.SetupError
	switch {
	case errors.Is(err, executor.ErrUnavailable):
		return WithCode(ExitSandbox, fmt.Errorf("the MCP server %q was not started: %w", cmd, err), "run 'claw doctor' to see what this kernel supports")
	case errors.Is(err, executor.ErrInvalidSpec):
		return WithCode(ExitUsage, err)
	case errors.As(err, &se):
		return WithCode(ExitSetupFailed, fmt.Errorf("the MCP server %q was not started: %w", cmd, err))
	case errors.Is(err, executor.ErrNotFound):
		return WithCode(ExitNotFound, fmt.Errorf("the MCP server was not started: %w", err), "grant its directory with --read, or give its absolute path")
	}
	return WithCode(ExitError, fmt.Errorf("failed to start the MCP server %q: %w", cmd, err), "check the command and its reach (--read, --write); its own messages are above")
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// mcpConversation names the receipts of one MCP session, so that an audit
// can group them: mcp:NAME:START-PID.
func mcpConversation(name string) string {
	return fmt.Sprintf("mcp:%s:%s-%d", name, time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
}
