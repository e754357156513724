package audit

import (
	"context"
	"crypto"
	"os"
	"testing"

	"github.com/clawsec/claw/receipts"
)

func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	k, _ := receipts.GenerateKey(receipts.Ed25519)
	s, _ := receipts.NewSigner(k)
	l, err := receipts.Open(dir, s, receipts.Options{CheckpointEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if _, err := l.Decision(ctx, receipts.Ref{ActionID: "a"}, receipts.Action{Tool: "shell", Summary: "ls"}, receipts.Decision{Result: "allow"}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Outcome(ctx, receipts.Ref{ActionID: "a"}, receipts.Outcome{Status: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l, err = receipts.Open(dir, s, receipts.Options{CheckpointEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	l.Estop(ctx, receipts.Estop{Active: true})
	l.Close()
	rep, err := Verify(ctx, dir, Options{Keys: []crypto.PublicKey{s.PublicKey()}})
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteText(os.Stdout)
	b, _ := os.ReadFile(dir + "/000001.jsonl")
	os.Stdout.Write(b[:600])
}
