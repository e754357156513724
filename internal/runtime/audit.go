package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/receipts"
)

// ParseRange reads the times of a --since (or --from) and an --until flag
// (see [audit.ParseFilter]); a bad one is a usage error.
func ParseRange(since, until string) (audit.Filter, error) {
	f, err := audit.ParseFilter(since, until, time.Now())
	if err != nil {
		return audit.Filter{}, Usagef("%v", err)
	}
	return f, nil
}

// logRange is the time range since..until over the receipt log in dir;
// a bad time is a usage error, a missing log an error.
func logRange(dir, since, until string) (audit.Filter, error) {
	f, err := ParseRange(since, until)
	if err != nil {
		return f, err
	}
	if _, err := os.Stat(dir); err != nil {
		return f, WithCode(ExitError, fmt.Errorf("no receipt log at %s", dir))
	}
	return f, nil
}

// ListFilter is the filter of claw receipt list for the log in dir: the
// time range since..until and the tool and decision of the actions.
func ListFilter(dir, since, until, tool, decision string) (ReceiptFilter, error) {
	r, err := logRange(dir, since, until)
	if err != nil {
		return ReceiptFilter{}, err
	}
	return ReceiptFilter{From: r.Since, To: r.Until, Tool: tool, Decision: decision}, nil
}

// LogVerify is what claw audit verify checks a log against: the trusted
// public keys (KeyFiles, or when there are none the keys of the keys
// directory KeyDir names), anchors kept elsewhere, the time range
// From..Until, and with Fast only the checkpoints' signatures.
type LogVerify struct {
	KeyFiles, AnchorFiles []string
	KeyDir                func() (string, error)
	From, Until           string
	Fast                  bool
}

// VerifyLog verifies the receipt log in dir as v says. A log that does
// not verify is a report, not an error; see [Tampered].
func VerifyLog(ctx context.Context, dir string, v LogVerify) (*audit.Report, error) {
	var opts audit.Options
	r, err := ParseRange(v.From, v.Until)
	if err != nil {
		return nil, err
	}
	opts.From, opts.Until = r.Since, r.Until
	opts.Fast = v.Fast
	opts.Keys, err = VerifyKeys(v.KeyFiles, v.KeyDir)
	if errors.Is(err, ErrNoVerifyKeys) {
		return nil, WithCode(ExitError, err, "pass --key FILE with the receipt public key")
	}
	if err != nil {
		return nil, err
	}
	if opts.Anchors, err = VerifyAnchors(v.AnchorFiles); err != nil {
		return nil, WithCode(ExitError, err)
	}
	rep, err := audit.Verify(ctx, dir, opts)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	return rep, nil
}

// Tampered is the error (exit status 4) of a report that did not verify,
// nil for one that did.
func Tampered(rep *audit.Report) error {
	if !rep.Verified {
		return WithCode(ExitVerify, fmt.Errorf("receipt log is tamper-evident: %d problem(s)", rep.ProblemCount))
	}
	return nil
}

// SummarizeLog summarises the receipt log in dir over since..until.
func SummarizeLog(ctx context.Context, dir, since, until string) (*audit.Summary, error) {
	f, err := logRange(dir, since, until)
	if err != nil {
		return nil, err
	}
	s, err := audit.Summarize(ctx, dir, f)
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	return s, nil
}

// ExportFormat checks the --format of claw audit export.
func ExportFormat(format string) error {
	if format != audit.FormatJSONL && format != audit.FormatCSV {
		return Usagef("--format must be jsonl or csv")
	}
	return nil
}

// ExportLog writes the receipts of the log in dir over since..until to w
// in format (jsonl or csv) and says how many malformed lines it skipped.
func ExportLog(ctx context.Context, dir string, w io.Writer, format, since, until string) (skipped int, err error) {
	f, err := logRange(dir, since, until)
	if err != nil {
		return 0, err
	}
	skipped, err = audit.Export(ctx, dir, w, format, f)
	if err != nil {
		return skipped, WithCode(ExitError, err)
	}
	return skipped, nil
}

// LatestCheckpoint is the latest signed checkpoint of the log in dir.
// With create, a fresh one is written first, signed by what signer
// returns (called only then).
func LatestCheckpoint(ctx context.Context, dir string, create bool, signer func() (*receipts.Signer, error)) ([]byte, error) {
	if create {
		s, err := signer()
		if err != nil {
			return nil, err
		}
		if err := WriteCheckpoint(ctx, dir, s); err != nil {
			return nil, WithCode(ExitError, err)
		}
	}
	b, err := receipts.LatestCheckpoint(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, WithCode(ExitError, fmt.Errorf("no checkpoint in %s yet", dir), "write one with 'claw audit checkpoint --new'")
	}
	if err != nil {
		return nil, WithCode(ExitError, err)
	}
	return b, nil
}
