package main

import (
	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
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

// parseRange reads the times of a --since (or --from) and an --until flag.
var parseRange = runtime.ParseRange

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
			rep, err := runtime.VerifyLog(c.Context(), dir, runtime.LogVerify{
				KeyFiles: keyFiles, AnchorFiles: anchorFiles, KeyDir: func() (string, error) { return receiptKeyDir(g) },
				From: from, Until: until, Fast: fast,
			})
			if err != nil {
				return err
			}
			if asJSON {
				err = rep.WriteJSON(g.stdout)
			} else {
				err = rep.WriteText(g.stdout)
			}
			if err != nil {
				return withCode(exitError, err)
			}
			return runtime.Tampered(rep)
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
			s, err := runtime.SummarizeLog(c.Context(), dir, since, until)
			if err != nil {
				return err
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
			if err := runtime.ExportFormat(format); err != nil {
				return err
			}
			dir, err := logDirArg(g, args)
			if err != nil {
				return err
			}
			skipped, err := runtime.ExportLog(c.Context(), dir, g.stdout, format, since, until)
			if err != nil {
				return err
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
			b, err := runtime.LatestCheckpoint(c.Context(), dir, create, signerOf(g, &o))
			if err != nil {
				return err
			}
			_, err = g.stdout.Write(b)
			return err
		},
	}
	o.addFlags(c)
	c.Flags().BoolVar(&create, "new", false, "write a new checkpoint first (needs the signing key)")
	return c
}
