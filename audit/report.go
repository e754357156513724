package audit

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawsec/claw/receipts"
)

// Filter selects receipts by time (zero = unbounded). It does not verify
// anything: run Verify first when the answer matters.
type Filter struct {
	Since, Until time.Time
}

func (f Filter) match(b *receipts.Body) bool {
	t, err := b.Time()
	if err != nil {
		return false
	}
	return (f.Since.IsZero() || !t.Before(f.Since)) && (f.Until.IsZero() || !t.After(f.Until))
}

// Count is a label and how often it occurred.
type Count struct {
	Key   string `json:"key"`
	Count int    `json:"count"`
}

// Summary answers who did what when, for people reading a log.
type Summary struct {
	Dir             string    `json:"dir"`
	From            time.Time `json:"from,omitzero"`
	To              time.Time `json:"to,omitzero"`
	Receipts        int       `json:"receipts"`
	Malformed       int       `json:"malformed"`
	Actions         int       `json:"actions"`
	ByDecision      []Count   `json:"by_decision"`
	ByOutcome       []Count   `json:"by_outcome"`
	ByTool          []Count   `json:"by_tool"`
	DenialsByRule   []Count   `json:"denials_by_rule"`
	ApprovalsBy     []Count   `json:"approvals_by"`
	RejectionsBy    []Count   `json:"rejections_by"`
	ApprovalTimeout int       `json:"approval_timeouts"`
	TopAsked        []Count   `json:"top_asked"`
	Estops          int       `json:"estops"`
	PolicyLoads     int       `json:"policy_loads"`
	GrantsAdded     int       `json:"grants_added"`
	GrantsRevoked   int       `json:"grants_revoked"`
	// GrantsApplied counts the allows a grant gave, by grant id.
	GrantsApplied []Count `json:"grants_applied"`
}

// MaxTop bounds the "top" lists of a Summary.
const MaxTop = 10

// Summarize reads the log in dir and tallies it (without verifying it).
func Summarize(ctx context.Context, dir string, f Filter) (*Summary, error) {
	s := &Summary{Dir: dir}
	dec, out, tool, rule, appr, rej, asked := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	applied := map[string]int{}
	err := receipts.Walk(ctx, dir, func(r receipts.Record) error {
		if r.Err != nil {
			if !r.Torn {
				s.Malformed++
			}
			return nil
		}
		b := &r.Line.Decoded
		if !f.match(b) {
			return nil
		}
		s.Receipts++
		t, _ := b.Time()
		if s.From.IsZero() || t.Before(s.From) {
			s.From = t
		}
		if t.After(s.To) {
			s.To = t
		}
		switch b.Type {
		case receipts.TypeDecision:
			s.Actions++
			if b.Decision != nil {
				dec[b.Decision.Result]++
				if b.Decision.Result == "deny" {
					if len(b.Decision.Reasons) == 0 {
						rule["(no rule id)"]++
					}
					for _, id := range b.Decision.Reasons {
						rule[id]++
					}
				}
				if b.Decision.Result == "ask" || b.Decision.Result == "passphrase" {
					asked[actionLabel(b.Action)]++
				}
				if b.Decision.Grant != "" {
					applied[b.Decision.Grant]++
				}
			}
			if b.Action != nil {
				tool[b.Action.Tool]++
			}
		case receipts.TypeApproval:
			if a := b.Approval; a != nil {
				switch a.Result {
				case "approved":
					appr[a.By]++
				case "rejected":
					rej[a.By]++
				case "timeout":
					s.ApprovalTimeout++
				}
			}
		case receipts.TypeOutcome:
			if b.Outcome != nil {
				out[b.Outcome.Status]++
			}
		case receipts.TypeEstop:
			s.Estops++
		case receipts.TypePolicyLoaded:
			s.PolicyLoads++
		case receipts.TypeGrantAdded:
			s.GrantsAdded++
		case receipts.TypeGrantRevoked:
			s.GrantsRevoked++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.ByDecision, s.ByOutcome, s.ByTool = top(dec, 0), top(out, 0), top(tool, 0)
	s.DenialsByRule, s.ApprovalsBy, s.RejectionsBy, s.TopAsked = top(rule, 0), top(appr, 0), top(rej, 0), top(asked, MaxTop)
	s.GrantsApplied = top(applied, 0)
	return s, nil
}

func actionLabel(a *receipts.Action) string {
	if a == nil {
		return "(unknown)"
	}
	if a.Summary == "" {
		return a.Tool
	}
	return a.Tool + ": " + a.Summary
}

func top(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// WriteText writes the summary for people.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	pf := func(format string, a ...any) { fmt.Fprintf(&b, format, cleanArgs(a)...) }
	pf("Receipt log: %s\n", s.Dir)
	pf("Period:      %s to %s\n", fmtTime(s.From, "-"), fmtTime(s.To, "-"))
	pf("Receipts:    %d (%d actions)", s.Receipts, s.Actions)
	if s.Malformed > 0 {
		pf(", %d malformed lines (run claw audit verify)", s.Malformed)
	}
	pf("\n")
	list := func(title string, cs []Count) {
		pf("%s\n", title)
		if len(cs) == 0 {
			pf("  none\n")
		}
		for _, c := range cs {
			pf("  %6d  %s\n", c.Count, c.Key)
		}
	}
	list("Decisions:", s.ByDecision)
	list("Outcomes:", s.ByOutcome)
	list("Tools:", s.ByTool)
	list("Denials by rule:", s.DenialsByRule)
	list("Approvals by approver:", s.ApprovalsBy)
	list("Rejections by approver:", s.RejectionsBy)
	pf("Approval timeouts: %d\n", s.ApprovalTimeout)
	list("Top asked actions:", s.TopAsked)
	pf("Emergency stops: %d; policy loads: %d\n", s.Estops, s.PolicyLoads)
	pf("Grants added: %d; revoked: %d\n", s.GrantsAdded, s.GrantsRevoked)
	list("Allows by grant:", s.GrantsApplied)
	_, err := io.WriteString(w, b.String())
	return err
}

// Export formats.
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
)

// CSVColumns are the columns of a CSV export, in order.
var CSVColumns = []string{"seq", "ts", "type", "log", "action_id", "conversation", "channel", "user",
	"tool", "summary", "args_sha256", "action_sha256", "decision", "risk", "reasons", "autonomy",
	"policy_digest", "approval_by", "approval_result", "outcome_status", "exit", "ms",
	"output_sha256", "landlock_abi", "seccomp", "kid", "entry_hash"}

// Export writes the receipts matching f to w for SIEM ingestion: "jsonl"
// writes each body's exact bytes on its own line (plus nothing else, so
// every line is the signed object); "csv" writes CSVColumns, with cells
// that a spreadsheet would run as a formula prefixed by a single quote.
// Malformed lines are skipped and counted in the returned number.
func Export(ctx context.Context, dir string, w io.Writer, format string, f Filter) (skipped int, err error) {
	switch format {
	case FormatJSONL:
		err = receipts.Walk(ctx, dir, func(r receipts.Record) error {
			if r.Err != nil {
				skipped++
				return nil
			}
			if !f.match(&r.Line.Decoded) {
				return nil
			}
			if _, err := w.Write(r.Line.Body); err != nil {
				return err
			}
			_, err := io.WriteString(w, "\n")
			return err
		})
		return skipped, err
	case FormatCSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(CSVColumns); err != nil {
			return 0, err
		}
		err = receipts.Walk(ctx, dir, func(r receipts.Record) error {
			if r.Err != nil {
				skipped++
				return nil
			}
			if !f.match(&r.Line.Decoded) {
				return nil
			}
			return cw.Write(csvRow(r.Line))
		})
		cw.Flush()
		if err == nil {
			err = cw.Error()
		}
		return skipped, err
	}
	return 0, fmt.Errorf("unknown export format %q (want jsonl or csv)", format)
}

func csvRow(l *receipts.Line) []string {
	b := &l.Decoded
	row := make([]string, len(CSVColumns))
	set := func(col, v string) {
		for i, c := range CSVColumns {
			if c == col {
				row[i] = v
				return
			}
		}
	}
	set("seq", strconv.FormatUint(b.Seq, 10))
	set("ts", b.TS)
	set("type", string(b.Type))
	set("log", b.Log)
	set("action_id", b.ActionID)
	set("conversation", b.Conversation)
	set("channel", b.Channel)
	set("user", b.User)
	if a := b.Action; a != nil {
		set("tool", a.Tool)
		set("summary", a.Summary)
		set("args_sha256", a.ArgsSHA256)
		set("action_sha256", a.ActionSHA256)
	}
	if d := b.Decision; d != nil {
		set("decision", d.Result)
		set("risk", d.Risk)
		set("reasons", strings.Join(d.Reasons, ";"))
		set("autonomy", d.Autonomy)
		set("policy_digest", d.PolicyDigest)
	}
	if a := b.Approval; a != nil {
		set("approval_by", a.By)
		set("approval_result", a.Result)
		if a.ActionSHA256 != "" {
			set("action_sha256", a.ActionSHA256)
		}
	}
	if o := b.Outcome; o != nil {
		set("outcome_status", o.Status)
		if o.Exit != nil {
			set("exit", strconv.Itoa(*o.Exit))
		}
		set("ms", strconv.FormatInt(o.MS, 10))
		set("output_sha256", o.OutputSHA256)
		if s := o.Sandbox; s != nil {
			set("landlock_abi", strconv.Itoa(s.LandlockABI))
			set("seccomp", strconv.FormatBool(s.Seccomp))
		}
	}
	set("kid", l.KID)
	set("entry_hash", receipts.EntryHash(l.Body).String())
	for i, v := range row {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			row[i] = "'" + v
		}
	}
	return row
}
