package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/sys/unix"
)

// PassphraseAsker asks a human for the passphrase. It returns the typed
// passphrase, or an error when nobody could be asked or nobody answered
// before ctx ended (the broker records that as a timeout). The passphrase
// is only compared with the configured hash: it never reaches a receipt,
// a log or an error.
type PassphraseAsker interface {
	AskPassphrase(ctx context.Context, r Request) (string, error)
}

// Defaults of the passphrase gate.
const (
	DefaultMaxFailures = 5
	DefaultLockout     = 15 * time.Minute
	// MinPassphraseLen is the shortest passphrase HashPassphrase accepts.
	MinPassphraseLen = 8
	// maxPassphraseLen bounds what is hashed; longer input is refused.
	maxPassphraseLen = 1024
)

// Argon2idParams are the cost parameters of a passphrase hash.
type Argon2idParams struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// DefaultArgon2id are the parameters of new hashes: 64 MiB, 3 passes, 2
// lanes (RFC 9106's second recommended option, with two lanes).
var DefaultArgon2id = Argon2idParams{Memory: 64 * 1024, Time: 3, Threads: 2}

// Reason ids the broker adds to a passphrase decision it denies.
const (
	ReasonPassphraseUnset   = "passphrase.unset"
	ReasonPassphraseLocked  = "passphrase.locked"
	ReasonPassphraseInvalid = "passphrase.invalid_hash"
	ReasonPassphraseState   = "passphrase.state_unreadable"
)

// HashPassphrase derives an argon2id hash of pass with a random salt and
// returns it as a PHC string:
//
//	$argon2id$v=19$m=65536,t=3,p=2$<base64 salt>$<base64 key>
func HashPassphrase(pass string, p Argon2idParams) (string, error) {
	if len(pass) < MinPassphraseLen {
		return "", fmt.Errorf("the passphrase must be at least %d characters", MinPassphraseLen)
	}
	if len(pass) > maxPassphraseLen {
		return "", fmt.Errorf("the passphrase must be at most %d bytes", maxPassphraseLen)
	}
	if p.Memory < 8*uint32(p.Threads) || p.Time == 0 || p.Threads == 0 {
		return "", errors.New("argon2id parameters are too weak")
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pass), salt, p.Time, p.Memory, p.Threads, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// errBadHash is returned for a hash that is not an argon2id PHC string.
var errBadHash = errors.New("the passphrase hash is not an argon2id hash in PHC form")

// VerifyPassphrase reports whether pass matches the PHC hash. The derived
// keys are compared in constant time. An error means the hash itself is
// malformed; it never contains the passphrase.
func VerifyPassphrase(hash, pass string) (bool, error) {
	p, salt, key, err := parsePHC(hash)
	if err != nil {
		return false, err
	}
	if len(pass) > maxPassphraseLen {
		return false, nil
	}
	got := argon2.IDKey([]byte(pass), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

func parsePHC(h string) (p Argon2idParams, salt, key []byte, err error) {
	parts := strings.Split(h, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v=19" {
		return p, nil, nil, errBadHash
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || seen[k] {
			return p, nil, nil, errBadHash
		}
		seen[k] = true
		var n uint64
		switch k {
		case "m":
			n, err = strconv.ParseUint(v, 10, 32)
			p.Memory = uint32(n)
		case "t":
			n, err = strconv.ParseUint(v, 10, 32)
			p.Time = uint32(n)
		case "p":
			n, err = strconv.ParseUint(v, 10, 8)
			p.Threads = uint8(n)
		default:
			return p, nil, nil, errBadHash
		}
		if err != nil || n == 0 {
			return p, nil, nil, errBadHash
		}
	}
	if len(seen) != 3 || p.Memory < 8*uint32(p.Threads) || p.Memory > 4<<20 || p.Time > 64 {
		return p, nil, nil, errBadHash
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, errBadHash
	}
	return p, salt, key, nil
}

// passphraseState is the lockout counter, kept in Config.StateFile so that
// a restart does not reset it.
type passphraseState struct {
	Failures    int       `json:"failures"`
	LockedUntil time.Time `json:"locked_until,omitzero"`
}

// stateGuard serialises the lockout counter inside a process; the flock on
// the state file serialises it between processes.
type stateGuard struct{ mu sync.Mutex }

// updateState reads the state file under an exclusive lock, lets f change
// it, and writes it back (fsynced, mode 0600) when f says so. A missing
// file is a fresh state; an unreadable or malformed one is an error (the
// caller fails closed). With no state file the state lives only in memory.
func (b *Broker) updateState(f func(*passphraseState) bool) error {
	b.state.mu.Lock()
	defer b.state.mu.Unlock()
	path := b.cfg.StateFile
	if path == "" {
		f(&b.memState)
		return nil
	}
	fd, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the passphrase state: %w", err)
	}
	defer fd.Close()
	if err := unix.Flock(int(fd.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking the passphrase state: %w", err)
	}
	fd.Chmod(0o600)
	data, err := io.ReadAll(io.LimitReader(fd, 4096))
	if err != nil {
		return fmt.Errorf("reading the passphrase state: %w", err)
	}
	st, err := decodeState(data)
	if err != nil {
		return fmt.Errorf("the passphrase state %s is malformed; remove it to reset the lockout", path)
	}
	if !f(&st) {
		return nil
	}
	out, err := json.Marshal(st)
	if err != nil {
		return err
	}
	out = append(out, '\n')
	// Write over, then cut: a crash in between leaves a file that does not
	// parse (the gate stays closed), never an empty one (a fresh count).
	if _, err := fd.WriteAt(out, 0); err != nil {
		return fmt.Errorf("writing the passphrase state: %w", err)
	}
	if err := fd.Truncate(int64(len(out))); err != nil {
		return fmt.Errorf("writing the passphrase state: %w", err)
	}
	if err := fd.Sync(); err != nil {
		return fmt.Errorf("writing the passphrase state: %w", err)
	}
	return nil
}

// decodeState parses the state file; empty is a fresh state.
func decodeState(data []byte) (passphraseState, error) {
	var st passphraseState
	if len(data) == 0 {
		return st, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return passphraseState{}, err
	}
	if dec.More() {
		return passphraseState{}, errors.New("trailing data")
	}
	if st.Failures < 0 {
		return passphraseState{}, errors.New("negative failure count")
	}
	return st, nil
}

// PassphraseLock reads a passphrase state file without changing it and
// returns the end of the lockout in force, or the zero time. A missing
// file is no lockout; a malformed one is an error (the broker then denies
// passphrase actions).
func PassphraseLock(stateFile string) (time.Time, error) {
	f, err := os.Open(stateFile)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return time.Time{}, err
	}
	st, err := decodeState(data)
	if err != nil {
		return time.Time{}, fmt.Errorf("the passphrase state %s is malformed", stateFile)
	}
	if time.Now().Before(st.LockedUntil) {
		return st.LockedUntil, nil
	}
	return time.Time{}, nil
}

// lockedUntil returns the end of the current lockout, or the zero time.
func (b *Broker) lockedUntil() (time.Time, error) {
	var until time.Time
	err := b.updateState(func(st *passphraseState) bool {
		if b.now().Before(st.LockedUntil) {
			until = st.LockedUntil
		}
		return false
	})
	return until, err
}

// recordAttempt counts a right or wrong passphrase. It returns the lockout
// in force after the attempt: a right passphrase typed while another
// attempt locked the gate does not count.
func (b *Broker) recordAttempt(ok bool) (time.Time, error) {
	var until time.Time
	err := b.updateState(func(st *passphraseState) bool {
		now := b.now()
		if now.Before(st.LockedUntil) {
			until = st.LockedUntil
			return false
		}
		if !st.LockedUntil.IsZero() { // an expired lockout starts a fresh count
			st.Failures, st.LockedUntil = 0, time.Time{}
		}
		if ok {
			if st.Failures == 0 {
				return false
			}
			st.Failures = 0
			return true
		}
		st.Failures++
		if st.Failures >= b.cfg.MaxFailures {
			st.LockedUntil = now.Add(b.cfg.Lockout).UTC()
			until = st.LockedUntil
		}
		return true
	})
	return until, err
}

func (b *Broker) now() time.Time {
	if b.cfg.Now != nil {
		return b.cfg.Now()
	}
	return time.Now()
}

// gateResult is what the passphrase gate concluded: a broker denial
// (deny, a reason id), nobody to ask (answer nil), or an answer to record.
type gateResult struct {
	deny   string
	msg    string
	answer *Answer
}

// passphraseGate asks for the passphrase and checks it, counting failures
// and honouring the lockout. The passphrase never leaves this function.
func (b *Broker) passphraseGate(ctx context.Context, req Request) gateResult {
	c := b.cfg
	if c.PassphraseHash == "" {
		return gateResult{deny: ReasonPassphraseUnset, msg: "no passphrase set; run 'claw passphrase set'"}
	}
	if _, _, _, err := parsePHC(c.PassphraseHash); err != nil {
		return gateResult{deny: ReasonPassphraseInvalid, msg: err.Error() + "; set it again with 'claw passphrase set'"}
	}
	if c.Passphrase == nil {
		return gateResult{msg: "this action needs the passphrase, and this channel cannot ask for it"}
	}
	if r, locked := b.checkLock(); locked {
		return r
	}
	actx, cancel := context.WithTimeout(ctx, c.ApprovalTimeout)
	pass, err := c.Passphrase.AskPassphrase(actx, req)
	expired := actx.Err() != nil
	cancel()
	if err != nil || expired {
		return gateResult{answer: &Answer{Result: "timeout", By: "passphrase"}, msg: "no passphrase was given in time"}
	}
	ok, err := VerifyPassphrase(c.PassphraseHash, pass)
	if err != nil {
		return gateResult{deny: ReasonPassphraseInvalid, msg: err.Error()}
	}
	until, err := b.recordAttempt(ok)
	switch {
	case err != nil && ok:
		return gateResult{deny: ReasonPassphraseState, msg: err.Error()}
	case !until.IsZero() && ok:
		return lockedResult(until)
	case ok:
		return gateResult{answer: &Answer{Result: "approved", By: "passphrase"}}
	}
	msg := "wrong passphrase"
	if !until.IsZero() {
		msg += "; the passphrase gate is locked until " + until.UTC().Format(time.RFC3339)
	}
	return gateResult{answer: &Answer{Result: "rejected", By: "passphrase"}, msg: msg}
}

// checkLock reports whether the gate is locked (or its state cannot be
// read, which counts as locked).
func (b *Broker) checkLock() (gateResult, bool) {
	until, err := b.lockedUntil()
	if err != nil {
		return gateResult{deny: ReasonPassphraseState, msg: err.Error()}, true
	}
	if !until.IsZero() {
		return lockedResult(until), true
	}
	return gateResult{}, false
}

func lockedResult(until time.Time) gateResult {
	return gateResult{deny: ReasonPassphraseLocked, msg: "the passphrase gate is locked after too many wrong passphrases, until " + until.UTC().Format(time.RFC3339)}
}
