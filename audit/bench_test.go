package audit

import (
	"context"
	"crypto"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

var benchLog struct {
	once sync.Once
	dir  string
	s    *receipts.Signer
}

// makeBenchLog writes n decision receipts with 64 concurrent writers.
func makeBenchLog(b *testing.B, dir string, s *receipts.Signer, n int) {
	l, err := store.Open(dir, s, store.Options{CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	per := n / 64
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if _, err := l.Decision(context.Background(), receipts.Ref{ActionID: fmt.Sprintf("%d-%d", w, i)},
					receipts.Action{Tool: "shell", Summary: "go test ./..."}, receipts.Decision{Result: "deny", Risk: "low"}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
}

func benchVerify(b *testing.B, fast bool) {
	const n = 64 * 800
	benchLog.once.Do(func() {
		dir, err := os.MkdirTemp("", "claw-audit-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchLog.dir = dir
		benchLog.s = newSigner(b)
		makeBenchLog(b, benchLog.dir, benchLog.s, n)
	})
	b.ResetTimer()
	var total uint64
	for b.Loop() {
		rep, err := Verify(context.Background(), benchLog.dir, Options{Keys: []crypto.PublicKey{benchLog.s.PublicKey()}, Fast: fast})
		if err != nil || !rep.Verified {
			b.Fatalf("%v %v", err, rep.Problems)
		}
		total += rep.Receipts
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "receipts/s")
}

// BenchmarkVerify checks every signature (in parallel on all cores).
func BenchmarkVerify(b *testing.B) { benchVerify(b, false) }

// BenchmarkVerifyFast skips per-receipt signatures.
func BenchmarkVerifyFast(b *testing.B) { benchVerify(b, true) }

func TestMain(m *testing.M) {
	code := m.Run()
	if benchLog.dir != "" {
		os.RemoveAll(benchLog.dir)
	}
	os.Exit(code)
}
