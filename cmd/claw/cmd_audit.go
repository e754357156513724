package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/receipts"
)

func newAuditCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "audit",
		Short: "Verify, summarise and export the receipt log",
		Long: `Verify, summarise and export the signed, hash-chained receipt log
(HOME/receipts, or the directory given as an argument).

EXIT STATUS
  0 verified or ok, 1 error, 2 usage, 4 verification failed (tamper-evident).`,
	}
	c.AddCommand(newAuditVerifyCommand(g, "verify"), newAuditReportCommand(g), newAuditExportCommand(g), newAuditCheckpointCommand(g))
	return c
}

// logDirArg is DIR if given, else HOME/receipts.
func logDirArg(g *globals, args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	return receiptDir(g)
}

// parseRange reads the times of a --since (or --from) and an --until flag
// (see [audit.ParseFilter]); a bad one is a usage error.
func parseRange(since, until string) (audit.Filter, error) {
	f, err := audit.ParseFilter(since, until, time.Now())
	if err != nil {
		return audit.Filter{}, usageErrorf("%v", err)
	}
	return f, nil
}

func newAuditVerifyCommand(g *globals, use string) *cobra.Command {
	var (
		keyFiles    []string
		anchorFiles []string
		from, until string
		asJSON      bool
		fast        bool
	)
	c := &cobra.Command{
		Use:   use + " [DIR]",
		Short: "Verify the receipt log: signatures, hash chain, checkpoints, anchors",
		Long: `Stream the receipt log and check every receipt: the hash chain, gap-free
sequence numbers, signatures, timestamps, the signed checkpoints and their
Merkle roots, anchors kept elsewhere, and that every action that ran was
allowed or approved first. It keeps going after a problem and reports every
one with its place (seq, file:line), ending in VERIFIED or TAMPER-EVIDENT.

Without --key it trusts the public keys in HOME/keys, which an attacker on
the host could replace: an auditor should pass a copy kept elsewhere. Without
--anchor, truncation or rewriting after the last checkpoint that left the
host cannot be detected.

EXIT STATUS
  0 verified, 1 error, 2 usage, 4 tamper-evident.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			var opts audit.Options
			r, err := parseRange(from, until)
			if err != nil {
				return err
			}
			opts.From, opts.Until = r.Since, r.Until
			opts.Fast = fast
			opts.Keys, err = runtime.VerifyKeys(keyFiles, func() (string, error) { return receiptKeyDir(g) })
			if errors.Is(err, runtime.ErrNoVerifyKeys) {
				return withCode(exitError, err, "pass --key FILE with the receipt public key")
			}
			if err != nil {
				return err
			}
			if opts.Anchors, err = runtime.VerifyAnchors(anchorFiles); err != nil {
				return withCode(exitError, err)
			}
			rep, err := audit.Verify(c.Context(), dir, opts)
			if err != nil {
				return withCode(exitError, err)
			}
			if asJSON {
				err = rep.WriteJSON(g.stdout)
			} else {
				err = rep.WriteText(g.stdout)
			}
			if err != nil {
				return withCode(exitError, err)
			}
			if !rep.Verified {
				return withCode(exitVerify, fmt.Errorf("receipt log is tamper-evident: %d problem(s)", rep.ProblemCount))
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&keyFiles, "key", nil, "trusted public key PEM file (repeatable; default HOME/keys/*.pub)")
	c.Flags().StringArrayVar(&anchorFiles, "anchor", nil, "signed checkpoint kept elsewhere (repeatable)")
	c.Flags().StringVar(&from, "from", "", "count and check signatures from this time (RFC 3339, YYYY-MM-DD or 24h)")
	c.Flags().StringVar(&until, "until", "", "until this time")
	addOutputFlag(c, &asJSON)
	c.Flags().BoolVar(&fast, "fast", false, "skip per-receipt signatures (checkpoint signatures and the chain are still checked)")
	return c
}

func newAuditReportCommand(g *globals) *cobra.Command {
	var (
		since, until string
		asJSON       bool
	)
	c := &cobra.Command{
		Use:   "report [DIR]",
		Short: "Summarise who did what and when: denials, approvals, asked actions",
		Long: `Summarise the receipt log: decisions and outcomes, denials by rule,
approvals and rejections by approver, the most asked actions. It reads the
log without verifying it; run 'claw audit verify' for that.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			f, err := parseRange(since, until)
			if err != nil {
				return err
			}
			if _, err := os.Stat(dir); err != nil {
				return withCode(exitError, fmt.Errorf("no receipt log at %s", dir))
			}
			s, err := audit.Summarize(c.Context(), dir, f)
			if err != nil {
				return withCode(exitError, err)
			}
			if asJSON {
				return s.WriteJSON(g.stdout)
			}
			return s.WriteText(g.stdout)
		},
	}
	c.Flags().StringVar(&since, "since", "", "from this time (RFC 3339, YYYY-MM-DD or 24h)")
	c.Flags().StringVar(&until, "until", "", "until this time")
	addOutputFlag(c, &asJSON)
	return c
}

func newAuditExportCommand(g *globals) *cobra.Command {
	var (
		since, until, format string
	)
	c := &cobra.Command{
		Use:   "export [DIR]",
		Short: "Export receipts as JSON lines or CSV for a SIEM",
		Long: `Export receipts to standard output. jsonl writes each receipt body's exact
(signed) bytes on its own line; csv writes one row per receipt with fixed
columns, and prefixes cells that start with = + - @ with a single quote so
spreadsheets do not run them. Nothing is verified; run 'claw audit verify'.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if format != audit.FormatJSONL && format != audit.FormatCSV {
				return usageErrorf("--format must be jsonl or csv")
			}
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			f, err := parseRange(since, until)
			if err != nil {
				return err
			}
			if _, err := os.Stat(dir); err != nil {
				return withCode(exitError, fmt.Errorf("no receipt log at %s", dir))
			}
			skipped, err := audit.Export(c.Context(), dir, g.stdout, format, f)
			if err != nil {
				return withCode(exitError, err)
			}
			if skipped > 0 {
				warnf(g.stderr, "skipped %d malformed line(s); run 'claw audit verify'", skipped)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "jsonl", "jsonl or csv")
	c.Flags().StringVar(&since, "since", "", "from this time (RFC 3339, YYYY-MM-DD or 24h)")
	c.Flags().StringVar(&until, "until", "", "until this time")
	return c
}

func newAuditCheckpointCommand(g *globals) *cobra.Command {
	var (
		o      keyOptions
		create bool
	)
	c := &cobra.Command{
		Use:   "checkpoint [DIR]",
		Short: "Print the latest signed checkpoint, to ship off the host",
		Long: `Print the latest signed checkpoint of the receipt log (a C2SP signed note
over the RFC 6962 Merkle root of the receipts). Keep copies somewhere the
host cannot rewrite (another machine, object storage with a retention lock,
a ticket) and check the log against one later with
'claw audit verify --anchor FILE'. With --new, write a fresh checkpoint
first (needs the signing key).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			if create {
				s, err := loadReceiptSigner(g, &o)
				if err != nil {
					return err
				}
				if err := runtime.WriteCheckpoint(c.Context(), dir, s); err != nil {
					return withCode(exitError, err)
				}
			}
			b, err := receipts.LatestCheckpoint(dir)
			if errors.Is(err, os.ErrNotExist) {
				return withCode(exitError, fmt.Errorf("no checkpoint in %s yet", dir), "write one with 'claw audit checkpoint --new'")
			}
			if err != nil {
				return withCode(exitError, err)
			}
			_, err = g.stdout.Write(b)
			return err
		},
	}
	o.addFlags(c)
	c.Flags().BoolVar(&create, "new", false, "write a new checkpoint first (needs the signing key)")
	return c
}
