package receipts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/clawsec/claw/receipts"
)

const sampleLine = `{"body":{"v":1,"log":"claw/h/1","seq":1,"ts":"2026-11-22T02:31:00.123456Z","type":"decision","action_id":"a1","action":{"tool":"shell","summary":"ls"},"decision":{"result":"allow"},"prev":"sha256:0000000000000000000000000000000000000000000000000000000000000000"},"kid":"00112233445566778899aabbccddeeff","sig":"AAAA"}`

// FuzzParseLine: the line parser never panics, and whatever it accepts is
// exactly the JSON object encoding/json sees, with the same body bytes.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(sampleLine))
	f.Add([]byte(`{"body":{},"kid":"k","sig":"AAAA"}`))
	f.Add([]byte(`{"body":{"a":",\"kid\":\"x"},"kid":"k","sig":"AAAA"}`))
	f.Add([]byte(`{"body":{"kid":"k","sig":"AAAA"},"kid":"k","sig":"AAAA"}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := receipts.ParseLine(line)
		if err != nil {
			return
		}
		var env struct {
			Body json.RawMessage `json:"body"`
			KID  string          `json:"kid"`
			Sig  []byte          `json:"sig"`
		}
		if err := json.Unmarshal(line, &env); err != nil {
			t.Fatalf("accepted a line encoding/json rejects: %v", err)
		}
		if !bytes.Equal(env.Body, l.Body) || env.KID != l.KID || !bytes.Equal(env.Sig, l.Sig) {
			t.Fatalf("split differs from encoding/json: %q vs %q", l.Body, env.Body)
		}
		again := receipts.EncodeLine(l.Body, l.KID, l.Sig)
		if !bytes.Equal(again, line) {
			t.Fatalf("re-encoding differs: %q", again)
		}
	})
}

// FuzzCheckpoint: the checkpoint parsers never panic and round-trip.
func FuzzCheckpoint(f *testing.F) {
	f.Add("claw/h/1\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\nts 2026-11-22T02:31:00.123456Z\n")
	f.Add("claw/h/1\n0\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— k AAAA\n")
	f.Add("x\n01\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		receipts.CheckpointTextUnverified([]byte(s))
		c, err := receipts.ParseCheckpointText(s)
		if err != nil {
			return
		}
		c2, err := receipts.ParseCheckpointText(c.Text())
		if err != nil || c2.Size != c.Size || !bytes.Equal(c2.Root, c.Root) || c2.Origin != c.Origin {
			t.Fatalf("round trip: %v %+v %+v", err, c, c2)
		}
	})
}

func TestDeterministicBody(t *testing.T) {
	exit := 0
	b := receipts.Body{V: 1, Log: "claw/h/1", Seq: 42, TS: "2026-11-22T02:31:00.123456Z", Type: receipts.TypeOutcome,
		ActionID: "a1", Outcome: &receipts.Outcome{Status: "ok", Exit: &exit, MS: 12, Sandbox: &receipts.Sandbox{LandlockABI: 7, Seccomp: true}},
		Prev: receipts.GenesisPrev}
	got, err := receipts.MarshalBody(&b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"log":"claw/h/1","seq":42,"ts":"2026-11-22T02:31:00.123456Z","type":"outcome","action_id":"a1","outcome":{"status":"ok","exit":0,"ms":12,"sandbox":{"landlock_abi":7,"seccomp":true}},"prev":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}`
	if string(got) != want {
		t.Fatalf("body encoding changed:\n got %s\nwant %s", got, want)
	}
}

func TestKeysRoundTrip(t *testing.T) {
	for _, kind := range []receipts.KeyKind{receipts.Ed25519, receipts.ECDSAP256} {
		for _, pass := range [][]byte{nil, []byte("correct horse")} {
			t.Run(fmt.Sprintf("%s/encrypted=%v", kind, pass != nil), func(t *testing.T) {
				k, err := receipts.GenerateKey(kind)
				if err != nil {
					t.Fatal(err)
				}
				pemBytes, err := receipts.MarshalPrivateKey(k, pass)
				if err != nil {
					t.Fatal(err)
				}
				if receipts.IsEncryptedKey(pemBytes) != (pass != nil) {
					t.Fatal("encryption flag")
				}
				if pass != nil {
					if _, err := receipts.ParsePrivateKey(pemBytes, nil); err == nil {
						t.Fatal("encrypted key parsed without passphrase")
					}
					if _, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) { return []byte("wrong"), nil }); err == nil {
						t.Fatal("wrong passphrase accepted")
					}
				}
				k2, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) { return pass, nil })
				if err != nil {
					t.Fatal(err)
				}
				s, _ := receipts.NewSigner(k2)
				pub, _ := receipts.MarshalPublicKey(k.Public())
				pubs, err := receipts.ParsePublicKeys(pub)
				if err != nil {
					t.Fatal(err)
				}
				ring, _ := receipts.NewKeyRing(pubs...)
				msg := receipts.SignedMessage([]byte(`{"v":1}`))
				sig, err := s.Sign(msg)
				if err != nil {
					t.Fatal(err)
				}
				if err := ring.Verify(s.KeyID(), msg, sig); err != nil {
					t.Fatal(err)
				}
				if err := ring.Verify(s.KeyID(), append(msg, 'x'), sig); err == nil {
					t.Fatal("bad signature accepted")
				}
				cp, err := receipts.SignCheckpoint(&receipts.CheckpointBody{Origin: "o", Size: 1, Root: make([]byte, 32)}, s)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := receipts.OpenCheckpoint(cp, ring); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestKMSRefused(t *testing.T) {
	for _, ref := range []string{"awskms://x", "gcpkms://y", "hashivault://z", "evil://p", "nonsense"} {
		if err := receipts.CheckKMS(ref); err == nil {
			t.Errorf("%s accepted", ref)
		}
	}
}
