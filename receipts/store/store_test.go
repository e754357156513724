package store_test

import (
	"bufio"
	"context"
	"crypto"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawsec/claw/audit"
	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

// The test binary doubles as a writer process for the crash and
// multi-process tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CLAW_RECEIPTS_TEST_WRITER"); dir != "" {
		os.Exit(writerMain(dir))
	}
	receipts.UseLowCostKDFForTests()
	os.Exit(m.Run())
}

// writerMain appends receipts and prints "ack SEQ" after each durable one.
func writerMain(dir string) int {
	pemBytes, err := os.ReadFile(os.Getenv("CLAW_RECEIPTS_TEST_KEY"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	priv, err := receipts.ParsePrivateKey(pemBytes, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s, _ := receipts.NewSigner(priv)
	n, _ := strconv.Atoi(os.Getenv("CLAW_RECEIPTS_TEST_N"))
	every, _ := strconv.Atoi(os.Getenv("CLAW_RECEIPTS_TEST_EVERY"))
	l, err := store.Open(dir, s, store.Options{CheckpointEvery: every, CheckpointInterval: -1, SegmentBytes: 64 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	for i := 0; n == 0 || i < n; i++ {
		id := fmt.Sprintf("p%d-%d", os.Getpid(), i)
		e, err := l.Decision(ctx, receipts.Ref{ActionID: id}, receipts.Action{Tool: "shell", Summary: "true"}, receipts.Decision{Result: "deny"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(out, "ack %d\n", e.Seq)
		out.Flush()
	}
	if err := l.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func newSigner(t testing.TB) (*receipts.Signer, string) {
	t.Helper()
	k, err := receipts.GenerateKey(receipts.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	s, err := receipts.NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := receipts.MarshalPrivateKey(k, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return s, path
}

func mustVerify(t testing.TB, dir string, pub crypto.PublicKey) *audit.Report {
	t.Helper()
	rep, err := audit.Verify(context.Background(), dir, audit.Options{Keys: []crypto.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Verified {
		var b strings.Builder
		rep.WriteText(&b)
		t.Fatalf("log does not verify:\n%s", b.String())
	}
	return rep
}

// seqs returns the sequence numbers in the log, in file order.
func seqs(t testing.TB, dir string) []uint64 {
	t.Helper()
	var out []uint64
	err := receipts.Walk(context.Background(), dir, func(r receipts.Record) error {
		if r.Err != nil {
			return fmt.Errorf("%s:%d: %w", r.File, r.N, r.Err)
		}
		out = append(out, r.Line.Decoded.Seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFilePermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "receipts")
	s, _ := newSigner(t)
	l, err := store.Open(dir, s, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Estop(context.Background(), receipts.Estop{Active: true})
	l.Close()
	check := func(p string, want os.FileMode) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	check(dir, 0o700)
	check(filepath.Join(dir, receipts.SegmentName(1)), 0o600)
	check(filepath.Join(dir, "checkpoint"), 0o600)
}

func TestAppendValidates(t *testing.T) {
	s, _ := newSigner(t)
	l, err := store.Open(t.TempDir(), s, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	for _, b := range []receipts.Body{
		{Type: receipts.TypeCheckpoint},
		{Type: receipts.TypeRecovery},
		{Type: receipts.TypeKeyRotated},
		{Type: "bogus"},
		{Type: receipts.TypeDecision},
	} {
		if _, err := l.Append(ctx, b); err == nil {
			t.Errorf("Append(%q) accepted", b.Type)
		}
	}
}

func TestTornTailRecovery(t *testing.T) {
	dir := t.TempDir()
	s, _ := newSigner(t)
	l, err := store.Open(dir, s, store.Options{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		if _, err := l.Estop(ctx, receipts.Estop{Active: true}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	seg := filepath.Join(dir, receipts.SegmentName(1))
	f, _ := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	torn := `{"body":{"v":1,"log":"x","seq":5,"ts":"2026-`
	f.WriteString(torn)
	f.Close()

	// Verify reports the torn tail as a warning only.
	rep, err := audit.Verify(ctx, dir, audit.Options{Keys: []crypto.PublicKey{s.PublicKey()}})
	if err != nil || !rep.Verified || rep.WarningCount != 1 || rep.Warnings[0].Kind != audit.WarnTornTail {
		t.Fatalf("torn tail: err %v, report %+v", err, rep)
	}
	l, err = store.Open(dir, s, store.Options{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	var rec *receipts.Recovery
	receipts.Walk(ctx, dir, func(r receipts.Record) error {
		if r.Err == nil && r.Line.Decoded.Type == receipts.TypeRecovery {
			rec = r.Line.Decoded.Recovery
		}
		return nil
	})
	if rec == nil || rec.Bytes != int64(len(torn)) || rec.SHA256 != receipts.Digest([]byte(torn)) {
		t.Fatalf("recovery receipt: %+v", rec)
	}
	mustVerify(t, dir, s.PublicKey())
}

func TestSegmentsAndReopen(t *testing.T) {
	dir := t.TempDir()
	s, _ := newSigner(t)
	opts := store.Options{CheckpointEvery: 7, CheckpointInterval: -1, SegmentBytes: 4 << 10}
	ctx := context.Background()
	for round := range 5 {
		l, err := store.Open(dir, s, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if _, err := l.PolicyLoaded(ctx, receipts.Policy{Digest: fmt.Sprintf("sha256:%d-%d", round, i)}); err != nil {
				t.Fatal(err)
			}
		}
		l.Close()
	}
	segs, _ := receipts.Segments(dir)
	if len(segs) < 3 {
		t.Fatalf("want several segments, got %v", segs)
	}
	rep := mustVerify(t, dir, s.PublicKey())
	if rep.ByType["policy_loaded"] != 100 {
		t.Fatalf("counts %v", rep.ByType)
	}
}

// TestConcurrentGoroutines: 8 goroutines × 500 appends on one Log share
// fsyncs and leave one gap-free chain.
func TestConcurrentGoroutines(t *testing.T) {
	dir := t.TempDir()
	s, _ := newSigner(t)
	l, err := store.Open(dir, s, store.Options{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := 500
	if testing.Short() {
		n = 50
	}
	var wg sync.WaitGroup
	got := make(chan uint64, 8*n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				e, err := l.Decision(context.Background(), receipts.Ref{ActionID: fmt.Sprintf("%d-%d", w, i)},
					receipts.Action{Tool: "shell"}, receipts.Decision{Result: "deny"})
				if err != nil {
					t.Error(err)
					return
				}
				got <- e.Seq
			}
		}()
	}
	wg.Wait()
	l.Close()
	close(got)
	seen := map[uint64]bool{}
	for s := range got {
		if seen[s] {
			t.Fatalf("seq %d acknowledged twice", s)
		}
		seen[s] = true
	}
	rep := mustVerify(t, dir, s.PublicKey())
	if rep.ByType["decision"] != 8*n {
		t.Fatalf("decisions %d", rep.ByType["decision"])
	}
}

func startWriter(t *testing.T, dir, key string, n, every int) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CLAW_RECEIPTS_TEST_WRITER="+dir, "CLAW_RECEIPTS_TEST_KEY="+key,
		"CLAW_RECEIPTS_TEST_N="+strconv.Itoa(n), "CLAW_RECEIPTS_TEST_EVERY="+strconv.Itoa(every))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// TestConcurrentProcesses: 8 processes × 500 appends → one intact chain,
// no duplicate seq.
func TestConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	s, key := newSigner(t)
	n := 500
	if testing.Short() {
		n = 50
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[uint64]bool{}
	for range 8 {
		cmd, sc := startWriter(t, dir, key, n, 64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sc.Scan() {
				seq, _ := strconv.ParseUint(strings.TrimPrefix(sc.Text(), "ack "), 10, 64)
				mu.Lock()
				if acked[seq] {
					t.Errorf("seq %d acknowledged twice", seq)
				}
				acked[seq] = true
				mu.Unlock()
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("writer: %v", err)
			}
		}()
	}
	wg.Wait()
	if len(acked) != 8*n {
		t.Fatalf("%d acknowledged, want %d", len(acked), 8*n)
	}
	rep := mustVerify(t, dir, s.PublicKey())
	if rep.ByType["decision"] != 8*n {
		t.Fatalf("decisions %d, want %d", rep.ByType["decision"], 8*n)
	}
	for i, q := range seqs(t, dir) {
		if q != uint64(i+1) {
			t.Fatalf("line %d has seq %d", i+1, q)
		}
	}
}

// TestCrash kills a writer with SIGKILL at random points, sometimes leaves
// a torn line as a power cut would, then reopens: recovery and verify pass
// and every acknowledged receipt is there.
func TestCrash(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 10
	}
	dir := t.TempDir()
	s, key := newSigner(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var maxAck uint64
	for run := range runs {
		cmd, sc := startWriter(t, dir, key, 0, 1+rng.IntN(20))
		lines := make(chan uint64, 1024)
		go func() {
			for sc.Scan() {
				seq, _ := strconv.ParseUint(strings.TrimPrefix(sc.Text(), "ack "), 10, 64)
				lines <- seq
			}
			close(lines)
		}()
		// Wait for a random number of acknowledgements, then kill.
		want := 1 + rng.IntN(30)
		for i := 0; i < want; i++ {
			seq, ok := <-lines
			if !ok {
				t.Fatalf("run %d: writer exited", run)
			}
			maxAck = max(maxAck, seq)
		}
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for seq := range lines {
			maxAck = max(maxAck, seq)
		}
		cmd.Wait()
		if rng.IntN(4) == 0 {
			segs, _ := receipts.Segments(dir)
			f, _ := os.OpenFile(filepath.Join(dir, segs[len(segs)-1]), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(`{"body":{"v":1,"seq":`[:1+rng.IntN(20)])
			f.Close()
		}
	}
	// Reopen: recovery, then everything verifies and no ack was lost.
	l, err := store.Open(dir, s, store.Options{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	rep := mustVerify(t, dir, s.PublicKey())
	if rep.LastSeq < maxAck {
		t.Fatalf("last seq %d < acknowledged %d", rep.LastSeq, maxAck)
	}
	for i, q := range seqs(t, dir) {
		if q != uint64(i+1) {
			t.Fatalf("line %d has seq %d", i+1, q)
		}
	}
}

// Two writers that open a new log before either has written share one log
// id, so the log they write verifies.
func TestFreshLogSharesOneID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "receipts")
	signer, _ := newSigner(t)
	a, err := store.Open(dir, signer, store.Options{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.Open(dir, signer, store.Options{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if a.LogID() != b.LogID() {
		t.Fatalf("log ids %q and %q", a.LogID(), b.LogID())
	}
	ctx := context.Background()
	for i, l := range []*store.Log{b, a, b} {
		if _, err := l.Decision(ctx, receipts.Ref{ActionID: fmt.Sprint(i)}, receipts.Action{Tool: "shell", Summary: "true"}, receipts.Decision{Result: "deny"}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b.Close()
	mustVerify(t, dir, signer.PublicKey())
}
