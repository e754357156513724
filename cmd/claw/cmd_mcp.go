package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawsec/claw/internal/runtime"
)

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

// approver is the approvals client of --approvals-from; nil without it
// (an action that needs approval is then refused).
func (o *mcpOptions) approver(g *globals) (runtime.Approver, error) {
	return runtime.DaemonApproverIf(g.runtimeEnv, o.approvalsFrom, o.tokenFile, "mcp")
}

// daemonApprover is runtime.DaemonApprover with the config of g.
func daemonApprover(g *globals, target, tokenFile, requester string) (*runtime.ApprovalsClient, error) {
	return runtime.DaemonApprover(g.runtimeEnv, target, tokenFile, requester)
}

// quiet returns globals whose standard output is standard error: in the
// MCP commands standard output is the protocol, and nothing else may be
// written there.
func quiet(g *globals) *globals {
	q := *g
	q.stdout = g.stderr
	return &q
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
			q := quiet(g)
			ap, err := o.approver(q)
			if err != nil {
				return err
			}
			return runtime.MCPServe(c.Context(), ttySetup(q, &o.actionOptions, new(*env)), ap, mcpIO(g))
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
		secrets           []string
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
environment is the sandbox's allowlist plus --env, and the credentials
--secret names (a token the server needs), taken from claw's environment
and never written to receipts, logs or config. A kernel that cannot
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
			q := quiet(g)
			server, err := runtime.MCPServerName(name, args[0], c.Flags().Changed("name"))
			if err != nil {
				return err
			}
			ap, err := o.approver(q)
			if err != nil {
				return err
			}
			home, _, err := configPaths(q)
			if err != nil {
				return err
			}
			u := runtime.Upstream{Server: server, Argv: args, Read: abs(read), Write: abs(write), Env: envs, Hosts: hosts, CPU: cpu,
				RunAs: runAs, Pins: runtime.MCPPinsPath(home), Secrets: secrets}
			if !c.Flags().Changed("run-as") {
				u.RunAs = ownerRunAs(g, u.Write)
			}
			return runtime.MCPProxy(c.Context(), ttySetup(q, &o.actionOptions, new(*env)), ap, u, mcpIO(g))
		},
	}
	o.addFlags(c)
	f := c.Flags()
	f.StringVar(&name, "name", "", "server name, the prefix of the exported tools (default the command's base name)")
	f.StringArrayVar(&read, "read", nil, "let the server read (and execute) `PATH` (repeatable; the workspace always)")
	f.StringArrayVar(&write, "write", nil, "let the server read and write `PATH` (repeatable; default nothing but its private home)")
	f.StringArrayVar(&envs, "env", nil, "pass `NAME` from the environment to the server, or set NAME=VALUE (secret-looking names are refused)")
	f.StringArrayVar(&secrets, "secret", nil, "pass the credential in claw's environment variable `NAME` to the server under the same name (its token; never recorded or logged)")
	f.StringArrayVar(&hosts, "allow-host", nil, "let the server connect to `HOST:PORT` through claw's egress proxy (repeatable; default no network)")
	f.Uint64Var(&cpu, "cpu", 3600, "CPU `SECONDS` the server may use over the whole session")
	f.StringVar(&runAs, "run-as", "", "when root, run the server as this `USER` or uid (default: [sandbox] run_as when it owns every --write path, else uid 0 without capabilities)")
	return c
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
			path, server := runtime.MCPPinsPath(home), args[0]
			if len(args) == 1 {
				return listPins(g, path, server, asJSON)
			}
			tool := args[1]
			ch, err := runtime.MCPPinChange(path, server, tool)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s %s changed (seen %s)\n", server, tool, ch.Seen.Format(time.RFC3339))
			fmt.Fprintf(g.stdout, "--- pinned %s\n+++ new    %s\n", ch.Old, ch.New)
			for _, l := range ch.Diff {
				fmt.Fprintln(g.stdout, l)
			}
			if !yes {
				ok, err := confirm(c.Context(), g, "Pin the new definition? [y/N] ")
				if err != nil {
					return err
				}
				if !ok {
					return withCode(exitDenied, errors.New("not pinned"))
				}
			}
			old, now, err := runtime.ApproveMCPPin(path, server, tool, ch.New)
			if err != nil {
				return err
			}
			infof(g.stderr, "mcp: pinned %s %s: %s -> %s (restart the proxy to offer it)", server, tool, old, now)
			return nil
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "pin without asking")
	addOutputFlag(c, &asJSON)
	return c
}

func listPins(g *globals, path, server string, asJSON bool) error {
	rows, err := runtime.MCPPinRows(path, server)
	if err != nil {
		return err
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

// mcpIO is the protocol's standard input and output, and where the MCP
// commands log.
func mcpIO(g *globals) runtime.MCPIO {
	return runtime.MCPIO{In: g.stdin, Out: g.stdout, Log: g.stderr, Version: version,
		Warn: func(format string, args ...any) { warnf(g.stderr, format, args...) }}
}
