package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawsec/claw/gate"
)

// cheapArgon2id keeps the tests fast; the format is the same.
var cheapArgon2id = Argon2idParams{Memory: 64, Time: 1, Threads: 1}

const plantedPass = "sk-test-PLANTED-0123456789abcdef"

// typedPass answers every passphrase prompt with the same text.
type typedPass struct {
	mu    sync.Mutex
	pass  string
	asked int
}

func (p *typedPass) AskPassphrase(context.Context, Request) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	return p.pass, nil
}

// silentHuman never answers: it waits for the deadline.
type silentHuman struct{}

func (silentHuman) AskPassphrase(ctx context.Context, _ Request) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func (silentHuman) Approve(ctx context.Context, _ Request) (Answer, error) {
	<-ctx.Done()
	return Answer{}, ctx.Err()
}

// passRig is a broker whose gate asks for the passphrase before mkdir.
func passRig(t *testing.T, hash string, asker PassphraseAsker, state string, now func() time.Time) *rig {
	t.Helper()
	return newRigWith(t, "full", func(p *gate.Policy) {
		p.ForbiddenCommands = append(p.ForbiddenCommands, "mkdir")
		p.PassphraseEnabled = true
		p.PassphraseFor = []string{"cmd.forbidden"}
	}, func(c *Config) {
		c.Passphrase = asker
		c.PassphraseHash = hash
		c.StateFile = state
		c.Now = now
		c.ApprovalTimeout = 200 * time.Millisecond
	})
}

func hashOf(t *testing.T, pass string) string {
	t.Helper()
	h, err := HashPassphrase(pass, cheapArgon2id)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHashPassphrase(t *testing.T) {
	h, err := HashPassphrase(plantedPass, DefaultArgon2id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") || strings.Contains(h, plantedPass) {
		t.Fatalf("hash = %q", h)
	}
	for _, tt := range []struct {
		name string
		pass string
		want bool
	}{
		{name: "right", pass: plantedPass, want: true},
		{name: "wrong", pass: plantedPass + "x", want: false},
		{name: "empty", pass: "", want: false},
		{name: "too long", pass: strings.Repeat("a", 2000), want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := VerifyPassphrase(h, tt.pass)
			if err != nil || ok != tt.want {
				t.Fatalf("VerifyPassphrase = %v, %v; want %v", ok, err, tt.want)
			}
		})
	}
	if _, err := HashPassphrase("short", cheapArgon2id); err == nil {
		t.Fatal("a 5-character passphrase was accepted")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=4,t=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=64,t=1,p=1,x=2$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=64,t=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA",
		"$argon2id$v=19$m=64,t=1,p=1$c2Fs$AAAAAAAAAAAAAAAAAAAAAA",
	} {
		if _, err := VerifyPassphrase(bad, plantedPass); err == nil {
			t.Errorf("malformed hash %q accepted", bad)
		}
	}
}

// FuzzParsePHC: the hash comes from a config file; it must never panic.
func FuzzParsePHC(f *testing.F) {
	f.Add("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA")
	f.Add("$argon2id$v=19$m=65536,t=3,p=2$c29tZXNhbHQ$AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	f.Add("$argon2id$v=19$m=99999999999,t=1,p=1$$")
	f.Fuzz(func(t *testing.T, h string) {
		p, salt, key, err := parsePHC(h)
		if err == nil && (p.Memory < 8*uint32(p.Threads) || p.Memory > 4<<20 || len(salt) < 8 || len(key) < 16) {
			t.Fatalf("accepted %q: %+v", h, p)
		}
	})
}

func TestPassphraseGate(t *testing.T) {
	hash := func(t *testing.T) string { return hashOf(t, plantedPass) }
	tests := []struct {
		name       string
		hash       func(*testing.T) string
		asker      PassphraseAsker
		sandbox    bool // the action runs
		wantStatus string
		wantTypes  string
		wantReason string
	}{
		{name: "right passphrase runs", hash: hash, asker: &typedPass{pass: plantedPass}, sandbox: true,
			wantStatus: StatusOK, wantTypes: "decision approval:approved outcome:ok"},
		{name: "wrong passphrase is rejected", hash: hash, asker: &typedPass{pass: "not-the-passphrase"},
			wantStatus: StatusRejected, wantTypes: "decision approval:rejected outcome:denied"},
		{name: "no hash is denied", hash: func(*testing.T) string { return "" }, asker: &typedPass{pass: plantedPass},
			wantStatus: StatusDenied, wantTypes: "decision outcome:denied", wantReason: ReasonPassphraseUnset},
		{name: "malformed hash is denied", hash: func(*testing.T) string { return "$argon2id$nope" }, asker: &typedPass{pass: plantedPass},
			wantStatus: StatusDenied, wantTypes: "decision outcome:denied", wantReason: ReasonPassphraseInvalid},
		{name: "nobody to ask", hash: hash,
			wantStatus: StatusNeedsApproval, wantTypes: "decision outcome:denied"},
		{name: "no answer is a timeout", hash: hash, asker: silentHuman{},
			wantStatus: StatusApprovalTO, wantTypes: "decision approval:timeout outcome:denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.sandbox {
				requireSandbox(t)
			}
			r := passRig(t, tt.hash(t), tt.asker, "", nil)
			out, err := r.b.Invoke(context.Background(), sh("mkdir made"), "")
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			if out.Decision.Decision != gate.Passphrase {
				t.Fatalf("gate decided %s, want passphrase", out.Decision.Decision)
			}
			if out.Status != tt.wantStatus {
				t.Fatalf("status = %s (%v), want %s", out.Status, out.Err, tt.wantStatus)
			}
			if got := types(r.bodies(t, out.ActionID)); got != tt.wantTypes {
				t.Fatalf("receipts = %q, want %q", got, tt.wantTypes)
			}
			if tt.wantReason != "" && !hasReason(out, tt.wantReason) {
				t.Fatalf("reasons %v lack %s", out.Decision.RuleIDs(), tt.wantReason)
			}
			_, serr := os.Stat(filepath.Join(r.ws, "made"))
			if ran := serr == nil; ran != (tt.wantStatus == StatusOK) {
				t.Fatalf("ran = %v", ran)
			}
			for _, b := range r.bodies(t, out.ActionID) {
				if b.Approval != nil && b.Approval.By != "passphrase" {
					t.Fatalf("approval by %q, want passphrase", b.Approval.By)
				}
			}
			assertNotLeaked(t, r, out)
		})
	}
}

func hasReason(out *Outcome, id string) bool {
	for _, r := range out.Decision.Reasons {
		if r.ID == id {
			return true
		}
	}
	return false
}

// assertNotLeaked searches the receipts, the state and the outcome for the
// planted passphrase.
func assertNotLeaked(t *testing.T, r *rig, out *Outcome) {
	t.Helper()
	filepath.WalkDir(r.root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), plantedPass) {
			t.Errorf("the passphrase leaked into %s", p)
		}
		return nil
	})
	if out != nil && out.Err != nil && strings.Contains(out.Err.Error(), plantedPass) {
		t.Errorf("the passphrase leaked into the error: %v", out.Err)
	}
}

func TestPassphraseLockout(t *testing.T) {
	hash := hashOf(t, plantedPass)
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	wrong := &typedPass{pass: plantedPass + "-wrong"}
	state := filepath.Join(t.TempDir(), "passphrase.state")
	r := passRig(t, hash, wrong, state, now)
	for i := 1; i <= DefaultMaxFailures; i++ {
		out, err := r.b.Invoke(context.Background(), sh("mkdir made"), "")
		if err != nil || out.Status != StatusRejected {
			t.Fatalf("attempt %d: %s %v", i, out.Status, err)
		}
		if i == DefaultMaxFailures && !strings.Contains(out.Err.Error(), "locked until") {
			t.Fatalf("last failure does not say the gate is locked: %v", out.Err)
		}
	}
	fi, err := os.Stat(state)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}

	// The right passphrase does not help now, and is not even asked for.
	right := &typedPass{pass: plantedPass}
	r.b.cfg.Passphrase = right
	out, err := r.b.Invoke(context.Background(), sh("mkdir made"), "")
	if err != nil || out.Status != StatusDenied || !hasReason(out, ReasonPassphraseLocked) {
		t.Fatalf("locked gate: %s %v %v", out.Status, err, out.Decision.RuleIDs())
	}
	if right.asked != 0 {
		t.Fatal("asked for the passphrase while locked")
	}
	if got := types(r.bodies(t, out.ActionID)); got != "decision outcome:denied" {
		t.Fatalf("receipts = %q", got)
	}

	// The lockout survives a restart: a new broker on the same state file.
	r2 := passRig(t, hash, right, state, now)
	out, err = r2.b.Invoke(context.Background(), sh("mkdir made"), "")
	if err != nil || out.Status != StatusDenied || !hasReason(out, ReasonPassphraseLocked) {
		t.Fatalf("after restart: %s %v %v", out.Status, err, out.Decision.RuleIDs())
	}

	// When the lockout ends, the count starts again.
	clock = clock.Add(DefaultLockout + time.Second)
	r2.b.cfg.Passphrase = wrong
	out, err = r2.b.Invoke(context.Background(), sh("mkdir made"), "")
	if err != nil || out.Status != StatusRejected {
		t.Fatalf("after the lockout: %s %v", out.Status, err)
	}
	data, _ := os.ReadFile(state)
	if !strings.Contains(string(data), `"failures":1`) {
		t.Fatalf("state = %s", data)
	}
	assertNotLeaked(t, r, nil)
	assertNotLeaked(t, r2, nil)
	if strings.Contains(string(data), plantedPass) {
		t.Fatal("the passphrase leaked into the state file")
	}
}

func TestPassphraseStateMalformed(t *testing.T) {
	state := filepath.Join(t.TempDir(), "passphrase.state")
	if err := os.WriteFile(state, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	asker := &typedPass{pass: plantedPass}
	r := passRig(t, hashOf(t, plantedPass), asker, state, nil)
	out, err := r.b.Invoke(context.Background(), sh("mkdir made"), "")
	if err != nil || out.Status != StatusDenied || !hasReason(out, ReasonPassphraseState) || asker.asked != 0 {
		t.Fatalf("malformed state: %s %v %v asked=%d", out.Status, err, out.Decision.RuleIDs(), asker.asked)
	}
}

func TestApprovalTimeout(t *testing.T) {
	r := newRigWith(t, "supervised", nil, func(c *Config) {
		c.Approver = silentHuman{}
		c.ApprovalTimeout = 100 * time.Millisecond
	})
	out, err := r.b.Invoke(context.Background(), sh("rm -rf gone; touch made"), "")
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusApprovalTO || out.Approval == nil || out.Approval.Result != "timeout" {
		t.Fatalf("status %s, approval %+v", out.Status, out.Approval)
	}
	if got := types(r.bodies(t, out.ActionID)); got != "decision approval:timeout outcome:denied" {
		t.Fatalf("receipts = %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "made")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("ran without an approval")
	}
}

// FuzzDecodeState: the state file sits in the claw home; a corrupt one
// must be an error (the gate then stays locked), never a panic or a
// negative count.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"failures":3}`))
	f.Add([]byte(`{"failures":5,"locked_until":"2026-11-23T12:15:00Z"}` + "\n"))
	f.Add([]byte(`{"failures":-1}`))
	f.Add([]byte(`{"failures":1}{"failures":0}`))
	f.Add([]byte(`{"failures":1,"extra":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState(data)
		if err == nil && st.Failures < 0 {
			t.Fatalf("negative count accepted from %q", data)
		}
	})
}

func BenchmarkVerifyPassphrase(b *testing.B) {
	h, err := HashPassphrase(plantedPass, DefaultArgon2id)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if ok, err := VerifyPassphrase(h, plantedPass); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
