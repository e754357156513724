// Command receiptsgen writes a receipt log of N decision receipts for
// benchmarks, with many concurrent writers so group commit batches them.
// It prints the public key PEM to the file named by -pub.
//
//	go run ./bench/receiptsgen -dir /tmp/log -pub /tmp/log.pub -n 1000000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawsec/claw/receipts"
	"github.com/clawsec/claw/receipts/store"
)

func main() {
	dir := flag.String("dir", "", "receipt directory to create")
	pub := flag.String("pub", "", "write the public key PEM here")
	n := flag.Int("n", 1000000, "number of receipts")
	writers := flag.Int("writers", 128, "concurrent writers")
	flag.Parse()
	if *dir == "" || *pub == "" {
		flag.Usage()
		os.Exit(2)
	}
	k, err := receipts.GenerateKey(receipts.Ed25519)
	check(err)
	s, err := receipts.NewSigner(k)
	check(err)
	pem, err := receipts.MarshalPublicKey(s.PublicKey())
	check(err)
	check(os.WriteFile(*pub, pem, 0o644))
	l, err := store.Open(*dir, s, store.Options{CheckpointInterval: -1})
	check(err)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(*n) {
					return
				}
				_, err := l.Decision(context.Background(), receipts.Ref{ActionID: fmt.Sprintf("a%d", i), Channel: "cli"},
					receipts.Action{Tool: "shell", ArgsSHA256: receipts.Digest([]byte("x")), Summary: "go test ./..."},
					receipts.Decision{Result: "deny", Risk: "low", Reasons: []string{"cmd.example"}, Autonomy: "supervised"})
				check(err)
			}
		}()
	}
	wg.Wait()
	check(l.Close())
	d := time.Since(start)
	fmt.Printf("wrote %d receipts in %.1fs (%.0f/s, %d writers)\n", *n, d.Seconds(), float64(*n)/d.Seconds(), *writers)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "receiptsgen:", err)
		os.Exit(1)
	}
}
