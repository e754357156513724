package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

type gateReplayOptions struct {
	since, until string
	policies     string
	grants       string
	receipts     string
	output       string
}

const gateReplayLong = `Re-decide every action recorded in the receipt log under a candidate policy
set, and report each action whose decision changes (before -> after, with
the rule ids), the counts by change, and the actions that could not be
re-decided, with why.

The candidate is the built-in policies, the user policies in --policies DIR
(default HOME/policies), the [security] settings of the config (--config
FILE, default HOME/config.toml) and the grants of --grants FILE (default
HOME/grants.json; those active now apply). Each action is decided at the
autonomy, channel and conversation its receipt recorded, in the workspace
of the config. --since and --until take an RFC 3339 time, a date
(YYYY-MM-DD) or a duration back from now (24h, 7d).

Decision receipts keep the canonical action with secrets redacted (body
version 2). Older receipts, actions whose arguments were too large to keep
and actions a secret was redacted from are counted and listed as not
re-decided.

EXIT STATUS
  0 no action changed between allow and deny, 1 some did (or an error),
  2 usage.`

func newGateReplayCommand(g *globals) *cobra.Command {
	o := &gateReplayOptions{}
	c := &cobra.Command{
		Use:   "replay [--since T] [--until T] [--policies DIR] [--grants FILE] [-o json]",
		Short: "Re-decide the recorded actions under a candidate policy set",
		Long:  gateReplayLong,
		Example: `  claw gate replay --policies ./candidate-policies
  claw gate replay --since 24h -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runGateReplay(c.Context(), g, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.since, "since", "", "only actions recorded at or after T (RFC 3339, YYYY-MM-DD or 24h)")
	f.StringVar(&o.until, "until", "", "only actions recorded at or before T (RFC 3339, YYYY-MM-DD or 24h)")
	f.StringVar(&o.policies, "policies", "", "directory of candidate user policies (default HOME/policies)")
	f.StringVar(&o.grants, "grants", "", "grant file to apply (default HOME/grants.json)")
	f.StringVar(&o.receipts, "receipts", "", "receipt log directory (default from the config)")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	return c
}

func runGateReplay(ctx context.Context, g *globals, o *gateReplayOptions) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	now := time.Now()
	r, err := parseRange(o.since, o.until)
	if err != nil {
		return err
	}
	e, err := g.runtimeEnv()
	if err != nil {
		return err
	}
	rep, err := runtime.ReplayLog(ctx, e, runtime.ReplayInput{PolicyDir: o.policies, GrantFile: o.grants,
		LogDir: o.receipts, ReceiptDir: func() (string, error) { return receiptDir(g) },
		Since: r.Since, Until: r.Until, Now: now})
	if err != nil {
		return err
	}
	if o.output == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteText(g.stdout); err != nil {
		return err
	}
	if b := runtime.ReplayBreaking(rep); b != "" {
		return withCode(exitError, fmt.Errorf("the candidate policies change %s", b))
	}
	return nil
}
