package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"
)

// clean makes a string from the log safe to print on a terminal: control
// characters (newlines too, so a crafted field cannot forge a report line)
// become U+FFFD.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func cleanArgs(a []any) []any {
	out := make([]any, len(a))
	for i, v := range a {
		switch v := v.(type) {
		case string:
			out[i] = clean(v)
		case fmt.Stringer:
			out[i] = clean(v.String())
		default:
			out[i] = v
		}
	}
	return out
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func fmtTime(t time.Time, zero string) string {
	if t.IsZero() {
		return zero
	}
	return t.UTC().Format(time.RFC3339)
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", clean(k), m[k])
	}
	return strings.Join(parts, ", ")
}

func (p Problem) where() string {
	var parts []string
	if p.Seq != 0 {
		parts = append(parts, fmt.Sprintf("seq %d", p.Seq))
	}
	if p.File != "" {
		parts = append(parts, fmt.Sprintf("%s:%d", p.File, p.Line))
	}
	if len(parts) == 0 {
		return ""
	}
	return " at " + strings.Join(parts, " ")
}

// String formats a problem on one line.
func (p Problem) String() string {
	s := p.Kind + p.where() + ": " + p.Msg
	if p.Expected != "" {
		s += fmt.Sprintf(" (expected %s, found %s)", orNone(p.Expected), orNone(p.Found))
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// WriteText writes the report for people, CloudTrail validate-logs style,
// ending in VERIFIED or TAMPER-EVIDENT.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	pf := func(format string, a ...any) { fmt.Fprintf(&b, format, cleanArgs(a)...) }
	pf("Receipt log:  %s (%d segment(s))\n", r.Dir, r.Segments)
	pf("Log id:       %s\n", orNone(strings.Join(r.LogIDs, ", ")))
	for i, k := range r.Keys {
		label := "Keys:        "
		if i > 0 {
			label = "             "
		}
		pf("%s %s (trusted: %s, %d receipts)\n", label, k.KID, k.Trusted, k.Receipts)
	}
	pf("Requested:    %s to %s\n", fmtTime(r.Requested.From, "beginning"), fmtTime(r.Requested.To, "end"))
	pf("Covered:      %s to %s\n", fmtTime(r.Covered.From, "-"), fmtTime(r.Covered.To, "-"))
	pf("Receipts:     %d read, %d in range, seq %d-%d\n", r.Receipts, r.Counted, r.FirstSeq, r.LastSeq)
	if r.Fast {
		pf("Signatures:   skipped (--fast); checkpoint signatures checked\n")
	} else {
		pf("Signatures:   %d verified\n", r.SignaturesOK)
	}
	pf("By type:      %s\n", counts(r.ByType))
	pf("By decision:  %s\n", counts(r.ByDecision))
	pf("By outcome:   %s\n", counts(r.ByOutcome))
	if len(r.PolicyDigests) > 0 {
		pf("Policies:     %s\n", strings.Join(r.PolicyDigests, ", "))
	}
	pf("Merkle tree:  size %d root %s\n", r.TreeSize, r.TreeRoot)
	c := r.Checkpoints
	if c.Verified+c.Failed == 0 {
		pf("Checkpoints:  none in the log\n")
	} else {
		pf("Checkpoints:  %d verified, %d failed; latest at seq %d covers %d receipts, root %s\n", c.Verified, c.Failed, c.LatestSeq, c.LatestSize, c.LatestRoot)
	}
	for _, a := range r.Anchors {
		pf("Anchor:       %s: size %d: %s", a.Source, a.Size, strings.ToUpper(a.Result))
		if a.Detail != "" {
			pf(" (%s)", a.Detail)
		}
		pf("\n")
	}
	if !r.ExternalAnchor {
		pf("Anchor:       NO EXTERNAL ANCHOR: truncation or rewriting after the last checkpoint that left the host cannot be detected\n")
	}
	if r.FirstBrokenLink != nil {
		p := r.FirstBrokenLink
		pf("First broken link:%s (expected %s, found %s)\n", p.where(), p.Expected, p.Found)
	}
	if len(r.Missing) > 0 {
		parts := make([]string, len(r.Missing))
		for i, m := range r.Missing {
			if m.From == m.To {
				parts[i] = fmt.Sprint(m.From)
			} else {
				parts[i] = fmt.Sprintf("%d-%d", m.From, m.To)
			}
		}
		pf("Missing seq:  %s\n", strings.Join(parts, ", "))
	}
	if r.ProblemCount > 0 {
		pf("Problems (%d):\n", r.ProblemCount)
		for _, p := range r.Problems {
			pf("  INVALID: %s\n", p)
		}
		if len(r.Problems) < r.ProblemCount {
			pf("  … %d more\n", r.ProblemCount-len(r.Problems))
		}
	}
	if r.WarningCount > 0 {
		pf("Warnings (%d):\n", r.WarningCount)
		for _, p := range r.Warnings {
			pf("  WARNING: %s\n", p)
		}
		if len(r.Warnings) < r.WarningCount {
			pf("  … %d more\n", r.WarningCount-len(r.Warnings))
		}
	}
	pf("%s\n", r.Verdict)
	_, err := io.WriteString(w, b.String())
	return err
}
