package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

// actionPair is an action's decision and outcome receipts.
func actionPair(id string) []receipts.Body {
	ref := receipts.Ref{ActionID: id, Channel: "test"}
	return []receipts.Body{
		store.DecisionBody(ref, receipts.Action{Tool: "shell", Summary: "true"}, receipts.Decision{Result: "deny"}),
		store.OutcomeBody(ref, receipts.Outcome{Status: "denied"}),
	}
}

// bodies returns the receipts in the log, in file order.
func bodies(t testing.TB, dir string) []receipts.Body {
	t.Helper()
	var out []receipts.Body
	err := receipts.Walk(context.Background(), dir, func(r receipts.Record) error {
		if r.Err != nil {
			return fmt.Errorf("%s:%d: %w", r.File, r.N, r.Err)
		}
		out = append(out, r.Line.Decoded)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// openLog opens a new log in a temporary directory.
func openLog(t testing.TB, opts store.Options) (*store.Log, *receipts.Signer, string) {
	t.Helper()
	dir := t.TempDir()
	s, _ := newSigner(t)
	l, err := store.Open(dir, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l, s, dir
}

// TestAppendAll: the bodies of one call are consecutive lines of the log,
// in order, made durable by one fdatasync, and the log verifies.
func TestAppendAll(t *testing.T) {
	l, s, dir := openLog(t, store.Options{CheckpointInterval: -1})
	ctx := context.Background()
	if _, err := l.Estop(ctx, receipts.Estop{Active: true}); err != nil {
		t.Fatal(err)
	}
	before := l.Syncs()
	bs := append(actionPair("a1"), actionPair("a2")...)
	es, err := l.AppendAll(ctx, bs...)
	if err != nil {
		t.Fatal(err)
	}
	if n := l.Syncs() - before; n != 1 {
		t.Fatalf("%d fdatasyncs for one AppendAll, want 1", n)
	}
	if len(es) != len(bs) {
		t.Fatalf("%d entries for %d bodies", len(es), len(bs))
	}
	for i, e := range es {
		if e.Seq != es[0].Seq+uint64(i) || (i > 0 && e.Offset <= es[i-1].Offset) {
			t.Fatalf("entries %+v are not consecutive", es)
		}
	}
	if bs[0].Seq != 0 {
		t.Errorf("AppendAll filled in the caller's bodies (seq %d)", bs[0].Seq)
	}
	l.Close()
	var got []string
	for _, b := range bodies(t, dir) {
		got = append(got, fmt.Sprintf("%d:%s:%s", b.Seq, b.Type, b.ActionID))
	}
	first := es[0].Seq
	want := []string{"1:estop:", fmt.Sprintf("%d:decision:a1", first), fmt.Sprintf("%d:outcome:a1", first+1),
		fmt.Sprintf("%d:decision:a2", first+2), fmt.Sprintf("%d:outcome:a2", first+3)}
	if len(got) < len(want) || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
		t.Fatalf("log holds %v, want %v first", got, want)
	}
	mustVerify(t, dir, s.PublicKey())
}

// TestAppendAllNoneOrAll: a body that is refused, or that cannot be
// built, fails the whole call and none of its bodies is written; the
// chain goes on from the last receipt written.
func TestAppendAllNoneOrAll(t *testing.T) {
	l, s, dir := openLog(t, store.Options{CheckpointInterval: -1})
	ctx := context.Background()
	ok := actionPair("ok")
	huge := store.OutcomeBody(receipts.Ref{ActionID: "huge"}, receipts.Outcome{Status: "denied", Error: strings.Repeat("x", receipts.MaxLineBytes)})
	for name, bs := range map[string][]receipts.Body{
		"refused":   {ok[0], {Type: receipts.TypeCheckpoint}},
		"no id":     {ok[0], {Type: receipts.TypeOutcome}},
		"too large": {ok[0], ok[1], huge},
	} {
		before := l.Syncs()
		if es, err := l.AppendAll(ctx, bs...); err == nil {
			t.Fatalf("%s: AppendAll = %+v, want an error", name, es)
		}
		if n := l.Syncs() - before; n != 0 {
			t.Errorf("%s: %d fdatasyncs for a batch that failed", name, n)
		}
	}
	if got := bodies(t, dir); len(got) != 0 {
		t.Fatalf("failed batches wrote %d receipts", len(got))
	}
	es, err := l.AppendAll(ctx, ok...)
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Seq != 1 {
		t.Fatalf("next batch starts at seq %d, want 1", es[0].Seq)
	}
	l.Close()
	mustVerify(t, dir, s.PublicKey())
}

// TestAppendAllConcurrent: batches from several goroutines, mixed with
// single appends, stay whole: each batch's receipts are consecutive.
func TestAppendAllConcurrent(t *testing.T) {
	l, s, dir := openLog(t, store.Options{CheckpointEvery: 7, CheckpointInterval: -1, SegmentBytes: 16 << 10})
	const writers, n = 6, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				id := fmt.Sprintf("%d-%d", w, i)
				if w%3 == 0 {
					if _, err := l.Decision(context.Background(), receipts.Ref{ActionID: id}, receipts.Action{Tool: "shell"}, receipts.Decision{Result: "deny"}); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				es, err := l.AppendAll(context.Background(), actionPair(id)...)
				if err != nil {
					t.Error(err)
					return
				}
				if es[1].Seq != es[0].Seq+1 {
					t.Errorf("batch %s at seqs %d and %d", id, es[0].Seq, es[1].Seq)
					return
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	bs := bodies(t, dir)
	for i, b := range bs {
		if b.Type == receipts.TypeDecision && strings.Contains("1245", b.ActionID[:1]) {
			if i+1 >= len(bs) || bs[i+1].Type != receipts.TypeOutcome || bs[i+1].ActionID != b.ActionID {
				t.Fatalf("decision of %s (seq %d) is not followed by its outcome", b.ActionID, b.Seq)
			}
		}
	}
	rep := mustVerify(t, dir, s.PublicKey())
	if want := writers * n; rep.ByType["decision"] != want {
		t.Fatalf("decisions %d, want %d", rep.ByType["decision"], want)
	}
}

// TestCommitPanicLeavesLogUsable: the caller that commits for an idle log
// does so on its own goroutine; when the commit panics and the caller
// recovers, the next append still commits (it would wait for ever on a
// log left "writing"), and the log verifies.
func TestCommitPanicLeavesLogUsable(t *testing.T) {
	var panicking sync.Mutex
	boom := false
	l, s, dir := openLog(t, store.Options{CheckpointInterval: -1, Now: func() time.Time {
		panicking.Lock()
		defer panicking.Unlock()
		if boom {
			boom = false
			panic("clock failed")
		}
		return time.Now()
	}})
	ctx := context.Background()
	if _, err := l.AppendAll(ctx, actionPair("a1")...); err != nil {
		t.Fatal(err)
	}
	panicking.Lock()
	boom = true
	panicking.Unlock()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the commit did not panic")
			}
		}()
		l.AppendAll(ctx, actionPair("a2")...)
	}()
	done := make(chan error, 1)
	go func() {
		_, err := l.AppendAll(ctx, actionPair("a3")...)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an append after a recovered panic never committed")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, dir, s.PublicKey())
	var ids []string
	for _, b := range bodies(t, dir) {
		if b.ActionID != "" {
			ids = append(ids, b.ActionID)
		}
	}
	if got := strings.Join(ids, " "); got != "a1 a1 a3 a3" {
		t.Errorf("actions in the log: %s, want a1 a1 a3 a3", got)
	}
}
