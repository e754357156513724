package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/internal/textesc"
)

func newReceiptCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "receipt",
		Short: "List and verify receipts",
		Long: `List and verify the receipts claw writes for every attempted action.

EXIT STATUS
  0 ok or verified, 1 error, 2 usage, 4 verification failed (tamper-evident).`,
	}
	c.AddCommand(newReceiptListCommand(g), newAuditVerifyCommand(g, "verify"), newReceiptAppendCommand(g))
	return c
}

func newReceiptListCommand(g *globals) *cobra.Command {
	var (
		since, until, tool, decision string
		asJSON                       bool
	)
	c := &cobra.Command{
		Use:   "list [DIR]",
		Short: "List receipts, optionally filtered by time, tool or decision",
		Long: `List receipts one per line (with -o json, each body's exact bytes, one per
line). --tool and --decision select actions by their decision receipt and
show all receipts of those actions. Listing does not verify; run
'claw receipt verify'.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			filter, err := runtime.ListFilter(dir, since, until, tool, decision)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			if !asJSON {
				fmt.Fprintln(tw, "SEQ\tTIME\tTYPE\tACTION\tDETAIL")
			}
			bad, err := runtime.WalkReceipts(c.Context(), dir, filter, func(r runtime.ReceiptRecord) error {
				b := &r.Line.Decoded
				if asJSON {
					if _, err := g.stdout.Write(r.Line.Body); err != nil {
						return err
					}
					_, err := io.WriteString(g.stdout, "\n")
					return err
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", b.Seq, b.TS, b.Type, orDash(oneLine(b.ActionID, 40)), receiptDetail(b))
				return nil
			})
			if !asJSON {
				tw.Flush()
			}
			if err != nil {
				return withCode(exitError, err)
			}
			if bad > 0 {
				warnf(g.stderr, "skipped %d malformed line(s); run 'claw receipt verify'", bad)
			}
			return nil
		},
	}
	c.Flags().StringVar(&since, "since", "", "from this time (RFC 3339, YYYY-MM-DD or 24h)")
	c.Flags().StringVar(&until, "until", "", "until this time")
	c.Flags().StringVar(&tool, "tool", "", "only actions of this tool")
	c.Flags().StringVar(&decision, "decision", "", "only actions with this decision (allow, ask, passphrase, deny)")
	addOutputFlag(c, &asJSON)
	return c
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine squeezes s onto one line for a table, cut to n bytes (see
// textesc.Cut); control characters (an agent could put terminal escapes
// in a summary) become U+FFFD.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' && r != '\n' {
			return '\uFFFD'
		}
		return r
	}, s)
	return textesc.Cut(strings.Join(strings.Fields(s), " "), n, "…")
}

func receiptDetail(b *runtime.ReceiptBody) string {
	switch b.Type {
	case runtime.ReceiptDecision:
		var parts []string
		if d := b.Decision; d != nil {
			parts = append(parts, d.Result)
			if d.Risk != "" {
				parts = append(parts, "risk="+d.Risk)
			}
		}
		if a := b.Action; a != nil {
			parts = append(parts, a.Tool+":", oneLine(a.Summary, 60))
		}
		if d := b.Decision; d != nil && len(d.Reasons) > 0 {
			parts = append(parts, "["+strings.Join(d.Reasons, ",")+"]")
		}
		return strings.Join(parts, " ")
	case runtime.ReceiptApproval:
		if a := b.Approval; a != nil {
			return a.Result + " by " + oneLine(a.By, 40)
		}
	case runtime.ReceiptOutcome:
		if o := b.Outcome; o != nil {
			s := o.Status
			if o.Exit != nil {
				s += fmt.Sprintf(" exit=%d", *o.Exit)
			}
			return s + fmt.Sprintf(" %dms", o.MS)
		}
	case runtime.ReceiptCheckpoint:
		if c := b.Checkpoint; c != nil {
			return fmt.Sprintf("size=%d root=%s", c.Size, c.Root)
		}
	case runtime.ReceiptKeyRotated:
		if k := b.Key; k != nil {
			return k.OldKID + " -> " + k.NewKID
		}
	case runtime.ReceiptRecovery:
		if r := b.Recovery; r != nil {
			return fmt.Sprintf("removed %d torn bytes at %s:%d", r.Bytes, r.Segment, r.Offset)
		}
	case runtime.ReceiptEstop:
		if e := b.Estop; e != nil {
			if e.Active {
				return "engaged " + oneLine(e.Reason, 60)
			}
			return "cleared"
		}
	case runtime.ReceiptPolicyLoaded:
		if p := b.Policy; p != nil {
			return p.Digest
		}
	case runtime.ReceiptGrantAdded, runtime.ReceiptGrantRevoked:
		if g := b.Grant; g != nil {
			return oneLine(g.ID, 20) + " by " + oneLine(g.By, 40) + " until " + g.Expires + " " + oneLine(g.Scope, 80)
		}
	}
	return ""
}

// newReceiptAppendCommand is a hidden diagnostic and test aid: it appends
// one receipt with the local signing key. The broker writes receipts in
// normal operation.
func newReceiptAppendCommand(g *globals) *cobra.Command {
	var (
		o       keyOptions
		typ     string
		body    string
		every   int
		asJSON  bool
		repeats int
	)
	c := &cobra.Command{
		Use:    "__append [DIR]",
		Short:  "Append a receipt (diagnostics and tests only)",
		Hidden: true,
		Args:   cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			b, err := runtime.FixtureBody(typ, body)
			if err != nil {
				return err
			}
			s, err := loadReceiptSigner(g, &o)
			if err != nil {
				return err
			}
			last, err := runtime.AppendReceipts(c.Context(), dir, s, b, every, repeats)
			if err != nil {
				return withCode(exitError, err)
			}
			if asJSON {
				return writeJSON(g.stdout, map[string]any{"seq": last.Seq, "hash": last.Hash.String()})
			}
			fmt.Fprintf(g.stdout, "seq %d\n", last.Seq)
			return nil
		},
	}
	o.addFlags(c)
	c.Flags().StringVar(&typ, "type", "", "receipt type")
	c.Flags().StringVar(&body, "json", "", "receipt body fields as JSON")
	c.Flags().IntVar(&every, "checkpoint-every", 0, "receipts between checkpoints")
	c.Flags().IntVar(&repeats, "n", 1, "append the receipt this many times")
	c.Flags().BoolVar(&asJSON, "print-json", false, "print the result as JSON")
	return c
}
