package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

func benchAppend(b *testing.B, writers int) {
	s, _ := newSigner(b)
	l, err := store.Open(b.TempDir(), s, store.Options{CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	var n atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; n.Add(1) <= int64(b.N); i++ {
				_, err := l.Decision(ctx, receipts.Ref{ActionID: fmt.Sprintf("%d-%d", w, i), Channel: "cli"},
					receipts.Action{Tool: "shell", ArgsSHA256: receipts.Digest([]byte("x")), Summary: "go test ./..."},
					receipts.Decision{Result: "allow", Risk: "low", Reasons: []string{"cmd.go.test"}, Autonomy: "supervised", PolicyDigest: receipts.Digest([]byte("p"))})
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
}

// BenchmarkAppend is a durable append (fsync before returning) by one writer.
func BenchmarkAppend(b *testing.B) { benchAppend(b, 1) }

// BenchmarkAppend8 is 8 concurrent writers sharing fsyncs (group commit).
func BenchmarkAppend8(b *testing.B) { benchAppend(b, 8) }
