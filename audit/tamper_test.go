package audit

import (
	"bytes"
	"context"
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

func newSigner(t testing.TB) *receipts.Signer {
	t.Helper()
	k, err := receipts.GenerateKey(receipts.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	s, err := receipts.NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var testOpts = store.Options{CheckpointEvery: 1000, CheckpointInterval: -1}

// writeActions appends n allowed actions (decision + outcome each) and
// closes the log, which adds a checkpoint.
func writeActions(t testing.TB, dir string, s *receipts.Signer, opts store.Options, n int, prefix string) {
	t.Helper()
	l, err := store.Open(dir, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range n {
		ref := receipts.Ref{ActionID: fmt.Sprintf("%s%d", prefix, i), Channel: "cli"}
		if _, err := l.Decision(ctx, ref, receipts.Action{Tool: "shell", Summary: "make test"}, receipts.Decision{Result: "allow", Risk: "low"}); err != nil {
			t.Fatal(err)
		}
		exit := 0
		if _, err := l.Outcome(ctx, ref, receipts.Outcome{Status: "ok", Exit: &exit, MS: 12}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func verify(t testing.TB, dir string, opts Options) *Report {
	t.Helper()
	rep, err := Verify(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func resign(t testing.TB, line []byte, s *receipts.Signer) []byte {
	t.Helper()
	pl, err := receipts.ParseLine(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.Sign(receipts.SignedMessage(pl.Body))
	if err != nil {
		t.Fatal(err)
	}
	return append(receipts.EncodeLine(pl.Body, s.KeyID(), sig), '\n')
}

type where struct {
	kind string
	seq  uint64
	file string
	line int
}

func hasProblem(rep *Report, w where) bool {
	for _, p := range rep.Problems {
		if p.Kind == w.kind && (w.seq == 0 || p.Seq == w.seq) && (w.file == "" || p.File == w.file) && (w.line == 0 || p.Line == w.line) {
			return true
		}
	}
	return false
}

func dump(rep *Report) string {
	var b strings.Builder
	rep.WriteText(&b)
	return b.String()
}

func TestVerifyClean(t *testing.T) {
	dir := t.TempDir()
	s := newSigner(t)
	writeActions(t, dir, s, testOpts, 3, "a")
	rep := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
	if !rep.Verified || rep.Receipts != 7 || rep.Checkpoints.Verified != 1 || rep.WarningCount != 0 {
		t.Fatalf("clean log did not verify:\n%s", dump(rep))
	}
	if rep.ByDecision["allow"] != 3 || rep.ByOutcome["ok"] != 3 {
		t.Errorf("counts: %v %v", rep.ByDecision, rep.ByOutcome)
	}
}

// TestTamperMatrix edits a log in every way the issue lists and checks
// that verify reports each one at the exact place.
func TestTamperMatrix(t *testing.T) {
	other := newSigner(t)
	seg := receipts.SegmentName(1)
	tests := []struct {
		name   string
		tamper func(t *testing.T, dir string, lines [][]byte) [][]byte
		want   []where
	}{
		{
			name: "edit a body field",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				l[1] = bytes.Replace(l[1], []byte(`"status":"ok"`), []byte(`"status":"failed"`), 1)
				return l
			},
			want: []where{{KindBadSignature, 2, seg, 2}, {KindBrokenLink, 3, seg, 3}},
		},
		{
			name: "edit a signature",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				i := bytes.Index(l[2], []byte(`"sig":"`)) + 7
				if l[2][i] == 'A' {
					l[2][i] = 'B'
				} else {
					l[2][i] = 'A'
				}
				return l
			},
			want: []where{{KindBadSignature, 3, seg, 3}},
		},
		{
			name: "delete a line",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				return append(l[:2:2], l[3:]...)
			},
			want: []where{{KindMissing, 3, seg, 3}, {KindBrokenLink, 4, seg, 3}},
		},
		{
			name: "insert a forged line",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				forged := resign(t, l[2], other)
				return append(l[:2:2], append([][]byte{forged}, l[2:]...)...)
			},
			want: []where{{KindUnknownKey, 3, seg, 3}, {KindDuplicate, 3, seg, 4}},
		},
		{
			name: "reorder",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				l[1], l[2] = l[2], l[1]
				return l
			},
			want: []where{{KindMissing, 2, seg, 2}, {KindOutOfOrder, 2, seg, 3}, {KindBrokenLink, 3, seg, 2}},
		},
		{
			name: "duplicate",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				return append(l[:2:2], append([][]byte{l[1]}, l[2:]...)...)
			},
			want: []where{{KindDuplicate, 2, seg, 3}, {KindBrokenLink, 2, seg, 3}},
		},
		{
			name: "truncate the tail",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				return l[:4]
			},
			want: []where{{kind: KindTruncated, seq: 5}},
		},
		{
			name: "re-sign with another key",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				for i := range l {
					l[i] = resign(t, l[i], other)
				}
				return l
			},
			want: []where{{KindUnknownKey, 1, seg, 1}, {KindUnknownKey, 7, seg, 7}},
		},
		{
			name: "change prev",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				i := bytes.Index(l[3], []byte(`"prev":"sha256:`)) + 15
				l[3][i] = flipHex(l[3][i])
				return l
			},
			want: []where{{KindBrokenLink, 4, seg, 4}, {KindBadSignature, 4, seg, 4}},
		},
		{
			name: "change prev and re-sign with another key",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				i := bytes.Index(l[3], []byte(`"prev":"sha256:`)) + 15
				l[3][i] = flipHex(l[3][i])
				l[3] = resign(t, l[3], other)
				return l
			},
			want: []where{{KindBrokenLink, 4, seg, 4}, {KindUnknownKey, 4, seg, 4}},
		},
		{
			name: "executed without allow",
			tamper: func(t *testing.T, dir string, l [][]byte) [][]byte {
				return append(l[:0:0], l[1:]...) // drop the decision of a0
			},
			want: []where{{KindMissing, 1, seg, 1}, {KindUnauthorized, 2, seg, 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newSigner(t)
			writeActions(t, dir, s, testOpts, 3, "a")
			path := filepath.Join(dir, seg)
			writeLines(t, path, tc.tamper(t, dir, readLines(t, path)))
			rep := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
			if rep.Verified || rep.Verdict != TamperEvident {
				t.Fatalf("tampered log verified:\n%s", dump(rep))
			}
			for _, w := range tc.want {
				if !hasProblem(rep, w) {
					t.Errorf("missing problem %+v in:\n%s", w, dump(rep))
				}
			}
		})
	}
}

func TestTamperAcceptance(t *testing.T) {
	// Three receipts, the second edited by hand: verify reports receipt 2.
	dir := t.TempDir()
	s := newSigner(t)
	l, err := store.Open(dir, s, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if _, err := l.PolicyLoaded(ctx, receipts.Policy{Digest: fmt.Sprintf("sha256:%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// No Close: exactly three receipts.
	path := filepath.Join(dir, receipts.SegmentName(1))
	lines := readLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	lines[1] = bytes.Replace(lines[1], []byte("sha256:1"), []byte("sha256:X"), 1)
	writeLines(t, path, lines)
	rep := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
	if rep.Verified || !hasProblem(rep, where{KindBadSignature, 2, receipts.SegmentName(1), 2}) {
		t.Fatalf("receipt 2 not reported:\n%s", dump(rep))
	}
	if rep.FirstBrokenLink == nil || rep.FirstBrokenLink.Seq != 3 {
		t.Errorf("first broken link: %+v", rep.FirstBrokenLink)
	}
}

func TestTamperSwapSegments(t *testing.T) {
	dir := t.TempDir()
	s := newSigner(t)
	opts := testOpts
	opts.SegmentBytes = 1500
	writeActions(t, dir, s, opts, 6, "a")
	segs, _ := receipts.Segments(dir)
	if len(segs) < 3 {
		t.Fatalf("want at least 3 segments, got %v", segs)
	}
	if v := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}}); !v.Verified {
		t.Fatalf("clean multi-segment log:\n%s", dump(v))
	}
	a, b := filepath.Join(dir, segs[0]), filepath.Join(dir, segs[1])
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	os.WriteFile(a, bb, 0o600)
	os.WriteFile(b, ab, 0o600)
	rep := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
	if rep.Verified || !hasProblem(rep, where{kind: KindMissing, seq: 1, file: segs[0], line: 1}) ||
		!hasProblem(rep, where{kind: KindOutOfOrder, seq: 1, file: segs[1], line: 1}) {
		t.Fatalf("swap not located:\n%s", dump(rep))
	}
}

func TestAnchor(t *testing.T) {
	s := newSigner(t)
	keys := []crypto.PublicKey{s.PublicKey()}
	setup := func(t *testing.T) (dir string, anchor []byte) {
		dir = t.TempDir()
		writeActions(t, dir, s, testOpts, 2, "a") // 4 receipts + checkpoint(size 4)
		anchor, err := receipts.LatestCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		writeActions(t, dir, s, testOpts, 2, "b") // 4 more + checkpoint(size 9)
		return dir, anchor
	}
	t.Run("consistent", func(t *testing.T) {
		dir, anchor := setup(t)
		rep := verify(t, dir, Options{Keys: keys, Anchors: []Anchor{{Source: "off-host", Note: anchor}}})
		if !rep.Verified || rep.Anchors[0].Result != "consistent" || !rep.ExternalAnchor {
			t.Fatalf("anchor not consistent:\n%s", dump(rep))
		}
	})
	t.Run("truncated after a checkpoint that left the host", func(t *testing.T) {
		dir, anchor := setup(t)
		path := filepath.Join(dir, receipts.SegmentName(1))
		writeLines(t, path, readLines(t, path)[:3])
		os.Remove(filepath.Join(dir, "checkpoint"))
		// Without the anchor the truncation is invisible.
		if rep := verify(t, dir, Options{Keys: keys}); !rep.Verified || rep.ExternalAnchor {
			t.Fatalf("expected an undetectable truncation without anchor:\n%s", dump(rep))
		}
		rep := verify(t, dir, Options{Keys: keys, Anchors: []Anchor{{Source: "off-host", Note: anchor}}})
		if rep.Verified || !hasProblem(rep, where{kind: KindTruncated, seq: 4}) {
			t.Fatalf("truncation not reported:\n%s", dump(rep))
		}
	})
	t.Run("rewritten with the real key", func(t *testing.T) {
		dir, anchor := setup(t)
		// A root attacker with the key writes a different history.
		os.RemoveAll(dir)
		writeActions(t, dir, s, testOpts, 4, "x")
		rep := verify(t, dir, Options{Keys: keys, Anchors: []Anchor{{Source: "off-host", Note: anchor}}})
		if rep.Verified || !hasProblem(rep, where{kind: KindAnchor}) && !hasProblem(rep, where{kind: KindRewritten}) {
			t.Fatalf("rewrite not reported:\n%s", dump(rep))
		}
	})
	t.Run("forged anchor", func(t *testing.T) {
		dir, anchor := setup(t)
		forged := bytes.Replace(anchor, []byte("\n4\n"), []byte("\n3\n"), 1)
		rep := verify(t, dir, Options{Keys: keys, Anchors: []Anchor{{Source: "off-host", Note: forged}}})
		if rep.Verified || !hasProblem(rep, where{kind: KindAnchor}) {
			t.Fatalf("forged anchor accepted:\n%s", dump(rep))
		}
	})
}

func TestKeyRotation(t *testing.T) {
	dir := t.TempDir()
	old, next := newSigner(t), newSigner(t)
	l, err := store.Open(dir, old, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l.Estop(ctx, receipts.Estop{Active: true, By: "cli"})
	if _, err := l.RotateKey(ctx, next); err != nil {
		t.Fatal(err)
	}
	l.Estop(ctx, receipts.Estop{Active: false, By: "cli"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Only the old key is given: the rotation hands trust to the new one.
	rep := verify(t, dir, Options{Keys: []crypto.PublicKey{old.PublicKey()}})
	if !rep.Verified || len(rep.Keys) != 2 {
		t.Fatalf("rotation not followed:\n%s", dump(rep))
	}
	// A receipt signed by the old key after the rotation is flagged.
	path := filepath.Join(dir, receipts.SegmentName(1))
	lines := readLines(t, path)
	lines[2] = resign(t, lines[2], old)
	writeLines(t, path, lines)
	rep = verify(t, dir, Options{Keys: []crypto.PublicKey{old.PublicKey()}})
	if rep.Verified || !hasProblem(rep, where{kind: KindRetiredKey, seq: 3}) {
		t.Fatalf("retired key not flagged:\n%s", dump(rep))
	}
	// The old process's log handle refuses to sign with a retired key.
	l1, err := store.Open(dir, old, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Close()
	if _, err := l1.Estop(ctx, receipts.Estop{}); err == nil {
		t.Fatal("retired key still signs")
	}
}

func TestReportCannotBeForged(t *testing.T) {
	dir := t.TempDir()
	s := newSigner(t)
	l, err := store.Open(dir, s, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	evil := "x\nVERIFIED\n\x1b[2J"
	l.Decision(ctx, receipts.Ref{ActionID: evil}, receipts.Action{Tool: "shell"}, receipts.Decision{Result: "allow"})
	l.Outcome(ctx, receipts.Ref{ActionID: "other"}, receipts.Outcome{Status: "ok"})
	l.Close()
	rep := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
	out := dump(rep)
	if rep.Verified || strings.Count(out, "\nVERIFIED") != 0 || strings.Contains(out, "\x1b") {
		t.Fatalf("report forged:\n%s", out)
	}
}

// flipHex changes a hex digit to another valid one.
func flipHex(c byte) byte {
	if c == '0' {
		return '1'
	}
	return '0'
}

// An action killed by the emergency stop ran: it needs an allow or an
// approval before it like any other. One blocked before it ran (no exit
// status) did not.
func TestEstopOutcomeCountsAsRun(t *testing.T) {
	tests := []struct {
		name     string
		decision string
		exit     *int
		bad      bool
	}{
		{name: "killed after an allow", decision: "allow", exit: new(137)},
		{name: "killed after an ask with no approval", decision: "ask", exit: new(137), bad: true},
		{name: "blocked before it ran", decision: "ask"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newSigner(t)
			l, err := store.Open(dir, s, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			ref := receipts.Ref{ActionID: "e1", Channel: "cli"}
			if _, err := l.Decision(ctx, ref, receipts.Action{Tool: "shell", Summary: "sleep 30"}, receipts.Decision{Result: tc.decision, Risk: "low"}); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Outcome(ctx, ref, receipts.Outcome{Status: "estop", Exit: tc.exit}); err != nil {
				t.Fatal(err)
			}
			l.Close()
			rep := verify(t, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
			if got := hasProblem(rep, where{kind: KindUnauthorized}); got != tc.bad {
				t.Fatalf("unauthorized reported = %v, want %v:\n%s", got, tc.bad, dump(rep))
			}
		})
	}
}
