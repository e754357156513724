package runtime

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/clawsec/claw/internal/broker"

	"github.com/clawsec/claw/receipts"
)

// The receipt signing key and its public key, in the keys directory.
const (
	ReceiptKeyName = "receipt.key"
	ReceiptPubName = "receipt.pub"
)

// KeyStep names the step of key handling an error comes from, so that a
// command can say what to do about it.
type KeyStep int

const (
	KeyMissing KeyStep = iota + 1 // no signing key file
	KeyRead                       // the signing key file could not be read
	KeyParse                      // not a key, or the wrong passphrase
	KeyKind                       // an unknown key kind
	KeyExists                     // a key file is in the way; keys are never overwritten
	KeyRecord                     // the rotation could not be recorded in the log
)

// KeyError is an error of one step of key handling. Path is the file the
// step was about (for KeyRecord, where the new key waits).
type KeyError struct {
	Step KeyStep
	Path string
	Err  error
}

func (e *KeyError) Error() string { return e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// ReceiptHome is the claw home for the receipt commands: flag (--home),
// then $CLAW_HOME, then ~/.claw.
func ReceiptHome(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if h := os.Getenv("CLAW_HOME"); h != "" {
		return h, nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", WithCode(ExitError, fmt.Errorf("cannot find the home directory: %w", err), "set CLAW_HOME or pass --home")
	}
	return filepath.Join(u, ".claw"), nil
}

// ReceiptKeyDir is the keys directory of the claw home ReceiptHome(flag)
// finds.
func ReceiptKeyDir(flag string) (string, error) { return inReceiptHome(flag, "keys") }

// ReceiptLogDir is the receipts directory of the claw home
// ReceiptHome(flag) finds.
func ReceiptLogDir(flag string) (string, error) { return inReceiptHome(flag, "receipts") }

func inReceiptHome(flag, dir string) (string, error) {
	h, err := ReceiptHome(flag)
	if err != nil {
		return "", err
	}
	return filepath.Join(h, dir), nil
}

// ReadSmall reads the file at path, which must not be larger than limit.
func ReadSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is too large", path)
	}
	return b, nil
}

// KeyPassphraseFile is the file the receipt key's passphrase is read
// from: flag (--passphrase-file), else $CLAW_KEY_PASSPHRASE_FILE; "" for
// none (a terminal prompt, or no passphrase).
func KeyPassphraseFile(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv("CLAW_KEY_PASSPHRASE_FILE")
}

// KeyPassphraseFromFile reads the receipt key's passphrase from the file
// KeyPassphraseFile names for flag; ok is false when it names none.
func KeyPassphraseFromFile(flag string) (pass []byte, ok bool, err error) {
	path := KeyPassphraseFile(flag)
	if path == "" {
		return nil, false, nil
	}
	if pass, err = ReadPassphraseFile(path); err != nil {
		return nil, true, WithCode(ExitError, err)
	}
	return pass, true, nil
}

// ReadPassphraseFile reads a key passphrase from the first 4 KiB of the
// file at path, without its line end.
func ReadPassphraseFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read passphrase file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return nil, fmt.Errorf("failed to read passphrase file: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return nil, fmt.Errorf("passphrase file %s is empty", path)
	}
	return b, nil
}

// LoadReceiptSigner reads the private signing key from the keys directory
// dir; passphrase is called when the key is encrypted, and its error is
// returned as it is.
func LoadReceiptSigner(dir string, passphrase func() ([]byte, error)) (*receipts.Signer, error) {
	path := filepath.Join(dir, ReceiptKeyName)
	pemBytes, err := ReadSmall(path, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &KeyError{Step: KeyMissing, Path: path, Err: fmt.Errorf("no receipt signing key at %s", path)}
	}
	if err != nil {
		return nil, err
	}
	var perr error
	priv, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) {
		p, err := passphrase()
		perr = err
		return p, err
	})
	if perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, &KeyError{Step: KeyParse, Path: path, Err: fmt.Errorf("%s: %w", path, err)}
	}
	return receipts.NewSigner(priv)
}

// WriteKeyFile creates path with O_EXCL so a key is never overwritten.
func WriteKeyFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return &KeyError{Step: KeyExists, Path: path, Err: fmt.Errorf("%s already exists; keys are never overwritten", path)}
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// GenerateReceiptKey writes a new signing key of kind to dir/receipt.key
// (0600; encrypted when pass is not empty) and its public key to
// dir/receipt.pub, never replacing either.
func GenerateReceiptKey(dir string, kind receipts.KeyKind, pass []byte) (KeyInfo, error) {
	priv, err := receipts.GenerateKey(kind)
	if err != nil {
		return KeyInfo{}, &KeyError{Step: KeyKind, Err: err}
	}
	privPEM, err := receipts.MarshalPrivateKey(priv, pass)
	if err != nil {
		return KeyInfo{}, err
	}
	pubPEM, err := receipts.MarshalPublicKey(priv.Public())
	if err != nil {
		return KeyInfo{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return KeyInfo{}, err
	}
	keyPath, pubPath := filepath.Join(dir, ReceiptKeyName), filepath.Join(dir, ReceiptPubName)
	if err := WriteKeyFile(keyPath, privPEM, 0o600); err != nil {
		return KeyInfo{}, err
	}
	if err := WriteKeyFile(pubPath, pubPEM, 0o644); err != nil {
		return KeyInfo{}, err
	}
	ki, err := DescribeKey(priv.Public())
	if err != nil {
		return KeyInfo{}, err
	}
	ki.Private, ki.Public, ki.Encrypted = keyPath, pubPath, len(pass) > 0
	return ki, nil
}

// TrustedReceiptKeys loads every *.pub in the keys directory dir (the
// current key and retired ones), for verifying on the host itself.
func TrustedReceiptKeys(dir string) ([]crypto.PublicKey, []string, error) {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.pub"))
	sort.Strings(matches)
	var keys []crypto.PublicKey
	for _, m := range matches {
		ks, err := LoadPublicKeyFile(m)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, ks...)
	}
	return keys, matches, nil
}

// LoadPublicKeyFile reads the public keys in the PEM file at path.
func LoadPublicKeyFile(path string) ([]crypto.PublicKey, error) {
	b, err := ReadSmall(path, 1<<20)
	if err != nil {
		return nil, err
	}
	ks, err := receipts.ParsePublicKeys(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ks, nil
}

// KeyInfo describes a receipt signing key, as claw keys prints it.
type KeyInfo struct {
	KID         string `json:"kid"`
	Kind        string `json:"kind"`
	Public      string `json:"public_key_file,omitempty"`
	Private     string `json:"private_key_file,omitempty"`
	Encrypted   bool   `json:"encrypted"`
	NoteKey     string `json:"note_verifier_key,omitempty"`
	PublicKey   string `json:"public_key"`
	RetiredFrom string `json:"retired_from,omitempty"`
}

// DescribeKey is the KeyInfo of pub, without its files.
func DescribeKey(pub crypto.PublicKey) (KeyInfo, error) {
	kid, err := receipts.KeyID(pub)
	if err != nil {
		return KeyInfo{}, err
	}
	pem, err := receipts.MarshalPublicKey(pub)
	if err != nil {
		return KeyInfo{}, err
	}
	ki := KeyInfo{KID: kid, Kind: string(receipts.ECDSAP256), PublicKey: string(pem)}
	if ed, ok := pub.(ed25519.PublicKey); ok {
		ki.Kind = string(receipts.Ed25519)
		ki.NoteKey, _ = receipts.NoteVerifierKey(ed)
	}
	return ki, nil
}

// ShowReceiptKey describes the public key in the keys directory dir, with
// its files and whether the private key is encrypted. The private key
// file is left out when it cannot be read.
func ShowReceiptKey(dir string) (KeyInfo, error) {
	pubPath := filepath.Join(dir, ReceiptPubName)
	if _, err := os.Stat(pubPath); errors.Is(err, os.ErrNotExist) {
		return KeyInfo{}, &KeyError{Step: KeyMissing, Path: pubPath, Err: fmt.Errorf("no receipt public key at %s", pubPath)}
	}
	ks, err := LoadPublicKeyFile(pubPath)
	if err != nil {
		return KeyInfo{}, err
	}
	ki, err := DescribeKey(ks[0])
	if err != nil {
		return KeyInfo{}, err
	}
	ki.Public = pubPath
	ki.Private = filepath.Join(dir, ReceiptKeyName)
	if b, err := ReadSmall(ki.Private, 64<<10); err == nil {
		ki.Encrypted = receipts.IsEncryptedKey(b)
	} else {
		ki.Private = ""
	}
	return ki, nil
}

// Rotation is what a key rotation did.
type Rotation struct {
	OldKID, NewKID string
	Seq            uint64 // of the key_rotated receipt
	Retired        string // the old key's file
}

// RotateReceiptKey replaces the signing key in the keys directory dir
// with a new one of kind (the old key's kind when empty), recorded in the
// receipt log logDir by a key_rotated receipt signed by both keys. The
// new key is encrypted with the old key's passphrase (asked by passphrase
// when the old key is encrypted). The old key files are kept as
// receipt-<kid>.key and receipt-<kid>.pub.
func RotateReceiptKey(ctx context.Context, dir, logDir, kind string, passphrase func() ([]byte, error)) (Rotation, error) {
	keyPath, pubPath := filepath.Join(dir, ReceiptKeyName), filepath.Join(dir, ReceiptPubName)
	oldPEM, err := ReadSmall(keyPath, 64<<10)
	if err != nil {
		return Rotation{}, &KeyError{Step: KeyRead, Path: keyPath, Err: err}
	}
	var pass []byte
	if receipts.IsEncryptedKey(oldPEM) {
		if pass, err = passphrase(); err != nil {
			return Rotation{}, err
		}
	}
	oldPriv, err := receipts.ParsePrivateKey(oldPEM, func() ([]byte, error) { return pass, nil })
	if err != nil {
		return Rotation{}, &KeyError{Step: KeyParse, Path: keyPath, Err: fmt.Errorf("%s: %w", keyPath, err)}
	}
	oldS, err := receipts.NewSigner(oldPriv)
	if err != nil {
		return Rotation{}, err
	}
	if kind == "" {
		kind = string(oldS.Kind())
	}
	newPriv, err := receipts.GenerateKey(receipts.KeyKind(kind))
	if err != nil {
		return Rotation{}, &KeyError{Step: KeyKind, Err: err}
	}
	newS, err := receipts.NewSigner(newPriv)
	if err != nil {
		return Rotation{}, err
	}
	newPEM, err := receipts.MarshalPrivateKey(newPriv, pass)
	if err != nil {
		return Rotation{}, err
	}
	newPub, err := receipts.MarshalPublicKey(newPriv.Public())
	if err != nil {
		return Rotation{}, err
	}
	// The new key is on disk before the log names it.
	pendingKey, pendingPub := keyPath+".new", pubPath+".new"
	if err := WriteKeyFile(pendingKey, newPEM, 0o600); err != nil {
		return Rotation{}, err
	}
	if err := WriteKeyFile(pendingPub, newPub, 0o644); err != nil {
		return Rotation{}, err
	}
	l, err := broker.OpenLog(logDir, oldS, broker.LogOptions{CheckpointInterval: -1})
	if err != nil {
		return Rotation{}, err
	}
	e, err := l.RotateKey(ctx, newS)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Rotation{}, &KeyError{Step: KeyRecord, Path: pendingKey, Err: fmt.Errorf("failed to record the key rotation: %w", err)}
	}
	retiredKey := filepath.Join(dir, "receipt-"+oldS.KeyID()+".key")
	retiredPub := filepath.Join(dir, "receipt-"+oldS.KeyID()+".pub")
	for _, mv := range [][2]string{{keyPath, retiredKey}, {pubPath, retiredPub}, {pendingKey, keyPath}, {pendingPub, pubPath}} {
		if _, err := os.Stat(mv[1]); err == nil {
			return Rotation{}, fmt.Errorf("%s already exists; keys are never overwritten", mv[1])
		}
		if err := os.Rename(mv[0], mv[1]); err != nil {
			return Rotation{}, err
		}
	}
	return Rotation{OldKID: oldS.KeyID(), NewKID: newS.KeyID(), Seq: e.Seq, Retired: retiredKey}, nil
}

// KeyHint gives an error of key handling ([KeyError]) the exit status and
// the hint for its step; other errors, and nil, are returned as they are.
func KeyHint(err error) error {
	var ke *KeyError
	if !errors.As(err, &ke) {
		return err
	}
	switch ke.Step {
	case KeyMissing:
		return WithCode(ExitError, err, "create one with 'claw keys generate'")
	case KeyRead:
		return WithCode(ExitError, err, "create a key with 'claw keys generate'")
	case KeyParse:
		return WithCode(ExitError, err, "wrong passphrase?")
	case KeyKind:
		return WithCode(ExitUsage, err)
	case KeyExists:
		return WithCode(ExitError, err, "use 'claw keys rotate' to replace the signing key")
	case KeyRecord:
		return WithCode(ExitError, err, "the new key is in "+ke.Path)
	}
	return err
}

// ReceiptSigner is the signer of the receipt key in the keys directory
// keyDir names, unlocked with passphrase when it is encrypted; kms, a KMS
// key reference, is refused (no scheme is allowed yet).
func ReceiptSigner(kms string, keyDir func() (string, error), passphrase func() ([]byte, error)) (*receipts.Signer, error) {
	if kms != "" {
		return nil, WithCode(ExitUsage, receipts.CheckKMS(kms))
	}
	dir, err := keyDir()
	if err != nil {
		return nil, err
	}
	s, err := LoadReceiptSigner(dir, passphrase)
	return s, KeyHint(err)
}

// NewReceiptKey makes the receipt signing key of kind in the keys
// directory keyDir names, encrypted with the passphrase that passphrase
// returns (nil: unencrypted). An unknown kind, and a key already there,
// are refused before passphrase is called.
func NewReceiptKey(keyDir func() (string, error), kind string, passphrase func() ([]byte, error)) (KeyInfo, error) {
	if _, err := receipts.GenerateKey(receipts.KeyKind(kind)); err != nil {
		return KeyInfo{}, WithCode(ExitUsage, err)
	}
	dir, err := keyDir()
	if err != nil {
		return KeyInfo{}, err
	}
	keyPath := filepath.Join(dir, ReceiptKeyName)
	if _, err := os.Stat(keyPath); err == nil {
		return KeyInfo{}, WithCode(ExitError, fmt.Errorf("%s already exists; keys are never overwritten", keyPath), "use 'claw keys rotate' to replace the signing key")
	}
	var pass []byte
	if passphrase != nil {
		if pass, err = passphrase(); err != nil {
			return KeyInfo{}, err
		}
	}
	ki, err := GenerateReceiptKey(dir, receipts.KeyKind(kind), pass)
	return ki, KeyHint(err)
}
