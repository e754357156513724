package receipts_test

import (
	"crypto/ed25519"
	"fmt"

	"github.com/clawsec/claw/receipts"
)

// A receipt line is {"body":…,"kid":…,"sig":…}; the signature covers the
// exact bytes of body, and the next receipt's prev is the entry hash.
func ExampleParseLine() {
	body := []byte(`{"v":1,"log":"claw/h/1","seq":1,"ts":"2026-11-22T02:31:00.123456Z","type":"estop","estop":{"active":true},"prev":"` + receipts.GenesisPrev + `"}`)
	seed := make([]byte, ed25519.SeedSize)
	s, _ := receipts.NewSigner(ed25519.NewKeyFromSeed(seed))
	sig, _ := s.Sign(receipts.SignedMessage(body))
	line := receipts.EncodeLine(body, s.KeyID(), sig)

	l, err := receipts.ParseLine(line)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Decoded.Seq, l.Decoded.Type, l.KID)
	fmt.Println("next prev:", receipts.EntryHash(l.Body))
	// Output:
	// 1 estop 339e2ff917630507b6a423b5ce084e28
	// next prev: sha256:d9383832b64c6290506aed4981bbd4e9ced39b9789eab3cf6cd148ad76c0e3bc
}
