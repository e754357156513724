package receipts_test

import (
	"testing"

	"github.com/clawsec/claw/receipts"
)

func BenchmarkParseLine(b *testing.B) {
	line := []byte(sampleLine)
	for b.Loop() {
		if _, err := receipts.ParseLine(line); err != nil {
			b.Fatal(err)
		}
	}
}
