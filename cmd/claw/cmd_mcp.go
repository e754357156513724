package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/logx"
	"github.com/clawsec/claw/internal/mcpgate"
	"github.com/clawsec/claw/internal/serve"
	"github.com/clawsec/claw/receipts"
)

func init() {
	doctorChecks = append(doctorChecks, doctorCheck{Name: "mcp pins", Run: checkMCPPins})
}

// checkMCPPins checks the pins file of claw mcp proxy: private, readable,
// and no tool disabled by a changed definition.
func checkMCPPins(g *globals) doctorResult {
	home, _, err := configPaths(g)
	if err != nil {
		return doctorResult{Skipped: true, Detail: err.Error()}
	}
	path := filepath.Join(home, "mcp-pins.json")
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return doctorResult{Skipped: true, Detail: "no MCP server proxied yet"}
	}
	if err != nil {
		return doctorResult{Detail: err.Error()}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return doctorResult{Detail: fmt.Sprintf("%s has mode %04o", path, fi.Mode().Perm()), Fix: "chmod 600 " + path}
	}
	pins, err := mcpgate.OpenPins(path)
	if err != nil {
		return doctorResult{Detail: err.Error(), Fix: "fix or remove " + path + " (every tool is then pinned again at first sight)"}
	}
	changed, err := pins.Changed()
	if err != nil {
		return doctorResult{Detail: err.Error()}
	}
	if len(changed) > 0 {
		return doctorResult{Detail: fmt.Sprintf("%d proxied tools are disabled because their definitions changed: %s", len(changed), strings.Join(changed, ", ")),
			Fix: "review each with 'claw mcp pin " + changed[0] + "'"}
	}
	return doctorResult{OK: true, Detail: path}
}

func newMCPCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Gated tools over MCP, and a gate in front of third-party MCP servers",
	}
	c.AddCommand(newMCPServeCommand(g), newMCPProxyCommand(g), newMCPPinCommand(g))
	return c
}

// mcpOptions are the flags shared by claw mcp serve and claw mcp proxy.
type mcpOptions struct {
	actionOptions
	approvalsFrom string
	tokenFile     string
}

func (o *mcpOptions) addFlags(c *cobra.Command) {
	o.actionOptions.addFlags(c.Flags())
	o.keys.addFlags(c)
	c.Flags().StringVar(&o.approvalsFrom, "approvals-from", "", "ask for approvals through a running 'claw serve': unix:/path/claw.sock or http://127.0.0.1:PORT")
	c.Flags().StringVar(&o.tokenFile, "token-file", "", "the daemon's bearer token file (default [serve].token_file)")
}

// approver returns the approvals client when --approvals-from is given;
// nil otherwise (an action that needs approval is then refused).
func (o *mcpOptions) approver(g *globals) (broker.Approver, error) {
	if o.approvalsFrom == "" {
		return nil, nil
	}
	cl, err := daemonApprover(g, o.approvalsFrom, o.tokenFile, "mcp")
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// daemonApprover is the approvals client of the daemon at target
// (unix:/path/claw.sock or http://127.0.0.1:PORT), with the token read
// from tokenFile (default [serve].token_file), asking as requester.
func daemonApprover(g *globals, target, tokenFile, requester string) (*approvals.Client, error) {
	// A malformed or non-loopback target is a usage error, before any file.
	if _, err := approvals.NewClient(target, "-"); err != nil {
		return nil, withCode(exitUsage, err)
	}
	path := tokenFile
	if path == "" {
		e, err := loadEnv(g)
		if err != nil {
			return nil, err
		}
		path = e.cfg.Serve.TokenFile
	}
	token, err := serve.LoadToken(path)
	if err != nil {
		return nil, withCode(exitError, err, "run 'claw init' to create the token file, or pass --token-file")
	}
	cl, err := approvals.NewClient(target, token)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	cl.Requester = requester
	return cl, nil
}

// quiet returns globals whose standard output is standard error: in the
// MCP commands standard output is the protocol, and nothing else may be
// written there.
func quiet(g *globals) *globals {
	q := *g
	q.stdout = g.stderr
	return &q
}

// stdioTransport is the MCP transport over the command's standard input
// and output.
func stdioTransport(g *globals) mcp.Transport {
	return &mcp.IOTransport{Reader: io.NopCloser(g.stdin), Writer: nopWriteCloser{g.stdout}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// runMCP serves s on standard input and output until the client leaves.
func runMCP(ctx context.Context, g *globals, s *mcp.Server) error {
	err := s.Run(ctx, stdioTransport(g))
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return withCode(exitError, fmt.Errorf("mcp: %w", err))
}

func newMCPServeCommand(g *globals) *cobra.Command {
	var o mcpOptions
	c := &cobra.Command{
		Use:   "serve",
		Short: "Offer claw's tools to an MCP client over standard input and output",
		Long: `Offer claw's tools (shell, file_read, file_write, edit_file, file_list, http,
time) to an MCP client over standard input and output. Every call goes
through the gate, the receipts and the sandbox, on the channel "mcp". A
denial, a rejection, a timeout or a tool failure is a tool result with
isError set and the reasons; standard output carries only the protocol.

An action the policy asks about is refused, unless --approvals-from names a
running 'claw serve', whose approvals queue then asks a human:

  claw mcp serve --approvals-from unix:$HOME/.claw/run/claw.sock

EXIT STATUS
  0 the client closed the connection, 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			q := quiet(g)
			ap, err := o.approver(q)
			if err != nil {
				return err
			}
			b, closeLog, err := openBroker(ctx, q, &o.actionOptions, func(cfg *broker.Config, _ *env) {
				cfg.Channel = "mcp"
				cfg.Approver = ap
				if cfg.InProcess == nil {
					cfg.InProcess = map[string]broker.ToolFunc{}
				}
				cfg.InProcess["time"] = mcpgate.TimeTool
			})
			if err != nil {
				return err
			}
			defer closeLog()
			executor.Prestart() // a long-lived server: keep a sandbox child ready
			defer executor.StopPrestart()
			s := mcpgate.NewServer(b, mcpgate.Options{Version: version, Logger: logx.FromEnv(g.stderr), Conversation: mcpConversation("serve")})
			return runMCP(ctx, g, s)
		},
	}
	o.addFlags(c)
	return c
}

func newMCPProxyCommand(g *globals) *cobra.Command {
	var (
		o                 mcpOptions
		name, runAs       string
		read, write, envs []string
		hosts             []string
		cpu               uint64
	)
	c := &cobra.Command{
		Use:   "proxy [--name N] [--read P] [--write P] -- COMMAND [ARG...]",
		Short: "Put claw's gate and sandbox around a third-party MCP server",
		Long: `Start the MCP server COMMAND in claw's sandbox, list its tools and offer
each one as N__TOOL over standard input and output. Every call is a claw
action of kind "tool" with arguments {server: N, name: TOOL, args: {...}}:
gate, receipts and approval first, then the call is forwarded. Results are
rebuilt from their content only (no upstream _meta), bounded in size.

The server runs for the whole session under Landlock, seccomp and
namespaces, like every sandboxed action: it reads the system directories,
the workspace, COMMAND's own file and the --read paths; it writes only the
--write paths and a private home and TMPDIR; it has no network unless
--allow-host names destinations, reached through claw's egress proxy. Its
environment is the sandbox's allowlist plus --env. A kernel that cannot
confine it means it does not start (exit 5). Its standard error is shown
when it exits.

Each tool's description and input schema are pinned by hash in
$CLAW_HOME/mcp-pins.json the first time they are seen. A tool whose
definition changes is disabled until 'claw mcp pin N TOOL' approves it.

  claw mcp proxy --name notes --read ~/notes -- node server.mjs ~/notes

EXIT STATUS
  0 the client closed the connection, 1 error (e.g. the server did not
  start), 2 usage, 5 the sandbox is unavailable, 126 the sandbox could not
  be set up, 127 COMMAND not found.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if c.ArgsLenAtDash() != 0 {
				return usageErrorf("put the upstream command after --: claw mcp proxy -- COMMAND ARGS")
			}
			ctx := c.Context()
			q := quiet(g)
			if name == "" {
				name = filepath.Base(args[0])
			}
			server := mcpgate.SanitizeName(name)
			if server != name && c.Flags().Changed("name") {
				return usageErrorf("--name %q: use lowercase letters, digits, '-' and '_' (e.g. %q)", name, server)
			}
			ap, err := o.approver(q)
			if err != nil {
				return err
			}
			home, _, err := configPaths(q)
			if err != nil {
				return err
			}
			pins, err := mcpgate.OpenPins(filepath.Join(home, "mcp-pins.json"))
			if err != nil {
				return withCode(exitError, err)
			}
			log := logx.FromEnv(g.stderr)

			var (
				p    *mcpgate.Proxy // made once the upstream runs
				sb   broker.Sandbox
				ws   string
				rlog *receipts.Log
			)
			b, closeLog, err := openBroker(ctx, q, &o.actionOptions, func(cfg *broker.Config, _ *env) {
				cfg.Channel = "mcp"
				cfg.Approver = ap
				forward := func(ctx context.Context, a map[string]any) (json.RawMessage, error) { return p.Forward(ctx, a) }
				cfg.InProcess = map[string]broker.ToolFunc{"tool": forward, "time": mcpgate.TimeTool}
				sb, ws, rlog = cfg.Sandbox, cfg.Workspace, cfg.Log
			})
			if err != nil {
				return err
			}
			defer closeLog()
			spec := upstreamSpec(args, sb, ws, abs(read), abs(write), envs, hosts, cpu)
			spec.RunAs = runAs
			if !c.Flags().Changed("run-as") {
				spec.RunAs = ownerRunAs(g, spec.Write)
			}
			upCtx, stopUp := context.WithCancel(ctx)
			defer stopUp()
			proc, err := executor.Start(upCtx, spec)
			if err != nil {
				return upstreamError(args[0], executor.Result{}, err)
			}
			cl := mcp.NewClient(&mcp.Implementation{Name: "claw-proxy", Version: version}, &mcp.ClientOptions{Logger: log})
			cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			up, err := cl.Connect(cctx, &mcp.IOTransport{Reader: proc.Stdout, Writer: proc.Stdin}, nil)
			cancel()
			if err != nil {
				stopUp()
				res, werr := proc.Wait()
				g.stderr.Write(res.Stderr)
				if werr == nil {
					werr = fmt.Errorf("no MCP session (exit status %d): %w", res.ExitCode, err)
				}
				return upstreamError(args[0], res, werr)
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
					g.stderr.Write(res.Stderr)
					warnf(g.stderr, "mcp proxy: the upstream server %s exited (status %d%s); its tools now fail", server, res.ExitCode, errSuffix(err))
				}
			}()

			p = mcpgate.NewProxy(server, up, pins)
			p.Log, p.Channel = rlog, "mcp"
			s, err := p.Server(ctx, b, mcpgate.Options{Version: version, Logger: log, Conversation: mcpConversation(server)})
			if err != nil {
				return withCode(exitError, err)
			}
			return runMCP(ctx, g, s)
		},
	}
	o.addFlags(c)
	f := c.Flags()
	f.StringVar(&name, "name", "", "server name, the prefix of the exported tools (default the command's base name)")
	f.StringArrayVar(&read, "read", nil, "let the server read (and execute) `PATH` (repeatable; the workspace always)")
	f.StringArrayVar(&write, "write", nil, "let the server read and write `PATH` (repeatable; default nothing but its private home)")
	f.StringArrayVar(&envs, "env", nil, "pass `NAME` from the environment to the server, or set NAME=VALUE (secret-looking names are refused)")
	f.StringArrayVar(&hosts, "allow-host", nil, "let the server connect to `HOST:PORT` through claw's egress proxy (repeatable; default no network)")
	f.Uint64Var(&cpu, "cpu", 3600, "CPU `SECONDS` the server may use over the whole session")
	f.StringVar(&runAs, "run-as", "", "when root, run the server as this `USER` or uid (default: [sandbox] run_as when it owns every --write path, else uid 0 without capabilities)")
	return c
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
	if exe, err := lookPathIn(argv[0], path); err == nil {
		s.Read = append(s.Read, exe)
	}
	if len(hosts) > 0 {
		s.Net.Egress = &executor.Egress{Hosts: hosts}
	}
	return s
}

// lookPathIn resolves cmd as the sandbox will, in the directories of path,
// to its canonical file.
func lookPathIn(cmd, path string) (string, error) {
	if !strings.Contains(cmd, "/") {
		for _, d := range filepath.SplitList(path) {
			if fi, err := os.Stat(filepath.Join(d, cmd)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				cmd = filepath.Join(d, cmd)
				break
			}
		}
	}
	if !filepath.IsAbs(cmd) {
		return "", fmt.Errorf("%s: not found", cmd)
	}
	return filepath.EvalSymlinks(cmd)
}

// upstreamError maps a failure to start the proxied server to claw's exit
// status: 5 no sandbox, 2 a bad grant, 126 the sandbox could not be set
// up, 127 not found, else 1.
func upstreamError(cmd string, res executor.Result, err error) error {
	var se *executor.SetupError
	switch {
	case errors.Is(err, executor.ErrUnavailable):
		return withCode(exitSandbox, fmt.Errorf("the MCP server %q was not started: %w", cmd, err), "run 'claw doctor' to see what this kernel supports")
	case errors.Is(err, executor.ErrInvalidSpec):
		return withCode(exitUsage, err)
	case errors.As(err, &se):
		return withCode(exitSetupFailed, fmt.Errorf("the MCP server %q was not started: %w", cmd, err))
	case errors.Is(err, executor.ErrNotFound):
		return withCode(exitNotFound, fmt.Errorf("the MCP server was not started: %w", err), "grant its directory with --read, or give its absolute path")
	}
	return withCode(exitError, fmt.Errorf("failed to start the MCP server %q: %w", cmd, err), "check the command and its reach (--read, --write); its own messages are above")
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

func newMCPPinCommand(g *globals) *cobra.Command {
	var (
		yes    bool
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "pin SERVER [TOOL]",
		Short: "Show and approve the pinned definitions of proxied MCP tools",
		Long: `Without TOOL, list the pinned tools of SERVER and which of them changed.
With TOOL, show how its description and input schema changed since they
were pinned and, once confirmed on the terminal (or with --yes), pin the
new definition so 'claw mcp proxy' offers the tool again.

  claw mcp pin fs
  claw mcp pin fs read_file

EXIT STATUS
  0 listed or pinned, 1 error (no such pin, nothing changed), 3 declined,
  6 confirmation needed and there is no terminal (use --yes).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			home, _, err := configPaths(g)
			if err != nil {
				return err
			}
			pins, err := mcpgate.OpenPins(filepath.Join(home, "mcp-pins.json"))
			if err != nil {
				return withCode(exitError, err)
			}
			server := args[0]
			if len(args) == 1 {
				return listPins(g, pins, server, asJSON)
			}
			tool := args[1]
			pin, ok, err := pins.Get(server, tool)
			if err != nil {
				return withCode(exitError, err)
			}
			if !ok {
				return withCode(exitError, fmt.Errorf("no pin for %s %s", server, tool), "see the pinned tools with 'claw mcp pin "+server+"'")
			}
			if pin.Pending == nil {
				return withCode(exitError, fmt.Errorf("%s %s has not changed since it was pinned (%s)", server, tool, pin.Digest))
			}
			fmt.Fprintf(g.stdout, "%s %s changed (seen %s)\n", server, tool, pin.Pending.Seen.Format(time.RFC3339))
			fmt.Fprintf(g.stdout, "--- pinned %s\n+++ new    %s\n", pin.Digest, pin.Pending.Digest)
			writeDiff(g.stdout, definitionLines(pin.Definition), definitionLines(*pin.Pending))
			if !yes {
				ok, err := confirm(c.Context(), g, "Pin the new definition? [y/N] ")
				if err != nil {
					return err
				}
				if !ok {
					return withCode(exitDenied, errors.New("not pinned"))
				}
			}
			old, now, err := pins.Approve(server, tool, pin.Pending.Digest)
			if err != nil {
				return withCode(exitError, err)
			}
			infof(g.stderr, "mcp: pinned %s %s: %s -> %s (restart the proxy to offer it)", server, tool, old.Digest, now.Digest)
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "pin without asking")
	addOutputFlag(c, &asJSON)
	return c
}

func listPins(g *globals, pins *mcpgate.Pins, server string, asJSON bool) error {
	names, err := pins.Tools(server)
	if err != nil {
		return withCode(exitError, err)
	}
	type row struct {
		Tool    string `json:"tool"`
		Digest  string `json:"digest"`
		Changed bool   `json:"changed"`
		Pending string `json:"pending,omitempty"`
	}
	rows := []row{}
	for _, n := range names {
		p, _, err := pins.Get(server, n)
		if err != nil {
			return withCode(exitError, err)
		}
		r := row{Tool: n, Digest: p.Digest}
		if p.Pending != nil {
			r.Changed, r.Pending = true, p.Pending.Digest
		}
		rows = append(rows, r)
	}
	if asJSON {
		return json.NewEncoder(g.stdout).Encode(rows)
	}
	if len(rows) == 0 {
		infof(g.stderr, "no pinned tools for %s", server)
		return nil
	}
	for _, r := range rows {
		state := "pinned"
		if r.Changed {
			state = "CHANGED (disabled; approve with 'claw mcp pin " + server + " " + r.Tool + "')"
		}
		fmt.Fprintf(g.stdout, "%-24s %s %s\n", r.Tool, r.Digest[:min(len(r.Digest), 19)], state)
	}
	return nil
}

// definitionLines renders a pinned definition for a line diff.
func definitionLines(d mcpgate.Definition) []string {
	var lines []string
	if d.Title != "" {
		lines = append(lines, "title: "+sanitize(d.Title))
	}
	for _, l := range strings.Split(d.Description, "\n") {
		lines = append(lines, "description: "+sanitize(l))
	}
	var schema any
	if json.Unmarshal(d.InputSchema, &schema) == nil {
		b, _ := json.MarshalIndent(schema, "", "  ")
		for _, l := range strings.Split(string(b), "\n") {
			lines = append(lines, "schema: "+sanitize(l))
		}
	}
	return lines
}

// writeDiff writes a line diff of a and b (longest common subsequence).
func writeDiff(w io.Writer, a, b []string) {
	n, m := len(a), len(b)
	if n*m > 4<<20 {
		for _, l := range a {
			fmt.Fprintln(w, "- "+l)
		}
		for _, l := range b {
			fmt.Fprintln(w, "+ "+l)
		}
		return
	}
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			fmt.Fprintln(w, "  "+a[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintln(w, "- "+a[i])
			i++
		default:
			fmt.Fprintln(w, "+ "+b[j])
			j++
		}
	}
}

// confirm asks a yes/no question on the terminal. Without a terminal it
// fails with exit status 6: piped input never confirms.
func confirm(ctx context.Context, g *globals, prompt string) (bool, error) {
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, withCode(exitNeedsHuman, errors.New("confirmation needed and standard input is not a terminal"), "run it from a terminal, or pass --yes")
	}
	fmt.Fprint(g.stderr, prompt)
	ch := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(io.LimitReader(f, 1<<10)).ReadString('\n')
		ch <- s
	}()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case s := <-ch:
		s = strings.ToLower(strings.TrimSpace(s))
		return s == "y" || s == "yes", nil
	}
}
