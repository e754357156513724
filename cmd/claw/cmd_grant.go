package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

const grantLong = `Grants are scoped, expiring approvals kept as policy data in
HOME/grants.json (mode 0600). While a grant is active, an action its scope
covers that the policies would ask about is allowed instead, with reason
grant.applied naming the grant. A grant never changes a deny or a
passphrase decision.

An approver creates grants at an approval prompt; 'claw grant add' creates
them for scripted setups, with the same scope syntax:

  tool=shell cmd=go:test args=any path=/home/u/ws autonomy=supervised

tool (required); cmd=PROGRAM[:SUBCOMMAND], repeated: every command a
shell action runs must be one of them; args=any|none: whether more
arguments may follow; path=PREFIX, repeated: every path the action touches
lies under one (none given: no path at all); host=NAME and method=M,
repeated: the http host and method; autonomy= and conversation=: only
there. Every grant expires (security.grant_expiry by default, at most
security.grant_max_expiry). Adding and revoking write grant_added and
grant_revoked receipts; expired and revoked grants are ignored, and listed
as such.`

func newGrantCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "grant",
		Short: "List, show, add and revoke grants",
		Long:  grantLong,
	}
	c.AddCommand(newGrantListCommand(g), newGrantShowCommand(g), newGrantAddCommand(g), newGrantRevokeCommand(g))
	return c
}

func checkOutput(o string) error {
	if o != "text" && o != "json" {
		return usageErrorf("--output must be text or json, not %q", o)
	}
	return nil
}

func newGrantListCommand(g *globals) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "list [-o json]",
		Short: "List grants: active, expired and revoked",
		Long: `List every grant with its state (active, expired or revoked), expiry and scope.

EXIT STATUS
  0 listed, 1 error (an unreadable or malformed grant file), 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			home, err := receiptHome(g)
			if err != nil {
				return err
			}
			views, err := runtime.Grants(home, time.Now())
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(g.stdout, map[string]any{"grants": views})
			}
			if len(views) == 0 {
				fmt.Fprintln(g.stdout, "no grants")
				return nil
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tEXPIRES\tBY\tSCOPE")
			for _, v := range views {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.ID, v.State, v.Expires.UTC().Format(time.RFC3339), sanitize(v.By), sanitize(v.ScopeText))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return c
}

func newGrantShowCommand(g *globals) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "show ID [-o json]",
		Short: "Show one grant, its scope in words and its state",
		Long: `Show one grant: who granted it, through which channel, when, until when, its
state, and its scope in the grant syntax and in words.

EXIT STATUS
  0 shown, 1 error or no such grant, 2 usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			home, err := receiptHome(g)
			if err != nil {
				return err
			}
			v, err := runtime.FindGrant(home, args[0], time.Now())
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(g.stdout, v)
			}
			writeGrant(g.stdout, v)
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return c
}

func writeGrant(w io.Writer, v runtime.GrantView) {
	fmt.Fprintf(w, "id:       %s\n", v.ID)
	fmt.Fprintf(w, "state:    %s\n", v.State)
	fmt.Fprintf(w, "by:       %s (channel %s)\n", sanitize(v.By), sanitize(v.Channel))
	fmt.Fprintf(w, "created:  %s\n", v.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "expires:  %s\n", v.Expires.UTC().Format(time.RFC3339))
	if !v.Revoked.IsZero() {
		fmt.Fprintf(w, "revoked:  %s\n", v.Revoked.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "scope:    %s\n", sanitize(v.ScopeText))
	fmt.Fprintf(w, "covers:   %s\n", sanitize(v.Words))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func newGrantAddCommand(g *globals) *cobra.Command {
	var (
		expires time.Duration
		output  string
		keys    keyOptions
	)
	c := &cobra.Command{
		Use:   "add [--expires DURATION] SCOPE…",
		Short: "Add a grant (for scripted setups)",
		Long: `Add a grant with the scope given in the grant syntax (see 'claw grant --help').
The grant_added receipt is written first; the grant is stored only once it
is durable. --expires is its lifetime (default security.grant_expiry, at
most security.grant_max_expiry). It prints the new grant.

EXIT STATUS
  0 added, 1 error (nothing added), 2 usage or a malformed scope, 6 the
  receipt key needs a passphrase and there is no terminal (nothing added).`,
		Example: `  claw grant add --expires 2h tool=shell cmd=go:test path=/home/u/ws
  claw grant add tool=http host=api.github.com method=GET`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			sc, err := runtime.ParseGrantScope(args)
			if err != nil {
				return err
			}
			v, err := runtime.AddGrant(c.Context(), g.runtimeEnv, sc, expires, estopBy(), time.Now(), receiptLog(g, &keys))
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(g.stdout, v)
			}
			writeGrant(g.stdout, v)
			return nil
		},
	}
	c.Flags().DurationVar(&expires, "expires", 0, "lifetime of the grant (default security.grant_expiry)")
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	keys.addFlags(c)
	return c
}

func newGrantRevokeCommand(g *globals) *cobra.Command {
	var keys keyOptions
	c := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a grant",
		Long: `Revoke a grant: it stops applying at once (a running claw serve or claw agent
sees it at its next action) and a grant_revoked receipt is written.

EXIT STATUS
  0 revoked, 1 error or no such grant, 2 usage, 6 the receipt key needs
  a passphrase and there is no terminal (nothing revoked).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			home, err := receiptHome(g)
			if err != nil {
				return err
			}
			gr, err := runtime.RevokeGrant(c.Context(), home, args[0], estopBy(), receiptLog(g, &keys))
			if err != nil {
				return err
			}
			infof(g.stderr, "grant %s revoked", gr.ID)
			return nil
		},
	}
	keys.addFlags(c)
	return c
}

// receiptLog is withReceiptLog with the key flags o, as the runtime
// takes it.
func receiptLog(g *globals, o *keyOptions) runtime.WithLog {
	return func(fn func(*runtime.ReceiptLog) error) error { return withReceiptLog(g, o, fn) }
}

// applyGrants gives eng the active grants of the claw home, so a dry run
// decides as the broker would. An unreadable store is a warning: no grant
// applies.
func applyGrants(g *globals, e *env, eng *runtime.Engine) {
	if err := runtime.ApplyGrants(e.home, eng); err != nil {
		warnf(g.stderr, "grants not applied: %v", err)
	}
}
