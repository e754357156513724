// Package brokertest opens receipt logs for the tests of the packages
// that record through the broker (the broker's callers, the daemon, the
// MCP proxy, the channels): a real log, signed by a fresh Ed25519 key,
// with no timed checkpoints, closed when the test ends. It does not
// import the testing package, so that no production code can pull it in
// by accident.
package brokertest

import (
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/receipts"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// NewSigner is a receipt signer with a new Ed25519 key.
func NewSigner(t TB) *receipts.Signer {
	t.Helper()
	priv, err := receipts.GenerateKey(receipts.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipts.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

// NewLog opens (creating) the receipt log in dir, signed by a new key,
// and closes it when the test ends.
func NewLog(t TB, dir string) *broker.Log {
	t.Helper()
	log, err := broker.OpenLog(dir, NewSigner(t), broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log
}
