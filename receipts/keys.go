package receipts

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// KeyKind names a signing algorithm.
type KeyKind string

// The supported key kinds.
const (
	Ed25519   KeyKind = "ed25519"
	ECDSAP256 KeyKind = "ecdsa-p256"
)

// ErrKMSNotAllowed is returned for every KMS key reference: no KMS scheme
// is on the allowlist yet. sigstore would run an unknown scheme as a plugin
// from $PATH, so references are never passed to it.
var ErrKMSNotAllowed = errors.New("kms keys are not supported: no kms scheme is allowlisted")

// AllowedKMSSchemes is the allowlist of KMS URI schemes. It is empty.
var AllowedKMSSchemes = []string{}

// CheckKMS rejects a KMS reference whose scheme is not allowlisted (all of them, for now).
func CheckKMS(ref string) error {
	scheme, _, ok := strings.Cut(ref, "://")
	if !ok {
		return fmt.Errorf("%w: %q is not a kms uri", ErrKMSNotAllowed, ref)
	}
	for _, s := range AllowedKMSSchemes {
		if s == scheme {
			return nil
		}
	}
	return fmt.Errorf("%w: scheme %q", ErrKMSNotAllowed, scheme)
}

// GenerateKey makes a new private key of the given kind (Ed25519 if empty).
func GenerateKey(kind KeyKind) (crypto.Signer, error) {
	switch kind {
	case Ed25519, "":
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	case ECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	return nil, fmt.Errorf("unknown key kind %q (want ed25519 or ecdsa-p256)", kind)
}

// kdfStrength is the scrypt cost used when encrypting a private key.
var kdfStrength atomic.Uint32

func init() { kdfStrength.Store(uint32(encrypted.Standard)) }

// UseLowCostKDFForTests makes later key encryption use the cheapest scrypt
// parameters the format allows. Only tests may call it.
func UseLowCostKDFForTests() { kdfStrength.Store(uint32(encrypted.Legacy)) }

// MarshalPrivateKey encodes priv as PEM. With a passphrase it is an
// "ENCRYPTED SIGSTORE PRIVATE KEY" (scrypt + secretbox, as cosign writes);
// with an empty passphrase it is an unencrypted PKCS#8 "PRIVATE KEY".
func MarshalPrivateKey(priv crypto.Signer, passphrase []byte) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("failed to encode private key: %w", err)
	}
	if len(passphrase) == 0 {
		return pem.EncodeToMemory(&pem.Block{Type: string(cryptoutils.PrivateKeyPEMType), Bytes: der}), nil
	}
	enc, err := encrypted.EncryptWithCustomKDFParameters(der, passphrase, encrypted.KDFParameterStrength(kdfStrength.Load()))
	if err != nil {
		return nil, fmt.Errorf("failed to encrypt private key: %w", err)
	}
	return cryptoutils.PEMEncode(cryptoutils.EncryptedSigstorePrivateKeyPEMType, enc), nil
}

// ErrPassphraseNeeded is returned by ParsePrivateKey for an encrypted key
// when no passphrase function was given.
var ErrPassphraseNeeded = errors.New("private key is encrypted and no passphrase was given")

// IsEncryptedKey reports whether pemBytes holds an encrypted private key.
func IsEncryptedKey(pemBytes []byte) bool {
	b, _ := pem.Decode(pemBytes)
	return b != nil && (b.Type == string(cryptoutils.EncryptedSigstorePrivateKeyPEMType) || b.Type == "ENCRYPTED COSIGN PRIVATE KEY")
}

// ParsePrivateKey decodes a PEM private key written by MarshalPrivateKey
// (or cosign). passphrase is called only for an encrypted key.
func ParsePrivateKey(pemBytes []byte, passphrase func() ([]byte, error)) (crypto.Signer, error) {
	if len(pemBytes) > 64<<10 {
		return nil, errors.New("private key file too large")
	}
	var pf cryptoutils.PassFunc = cryptoutils.SkipPassword
	if IsEncryptedKey(pemBytes) {
		if passphrase == nil {
			return nil, ErrPassphraseNeeded
		}
		pf = func(bool) ([]byte, error) { return passphrase() }
	}
	k, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, pf)
	if err != nil {
		return nil, fmt.Errorf("failed to read private key: %w", err)
	}
	switch k := k.(type) {
	case ed25519.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("unsupported ecdsa curve (want P-256)")
		}
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", k)
}

// MarshalPublicKey encodes pub as a PEM "PUBLIC KEY".
func MarshalPublicKey(pub crypto.PublicKey) ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(pub)
}

// ParsePublicKey decodes PEM public keys (Ed25519 or ECDSA P-256). A file
// may hold several; all are returned.
func ParsePublicKeys(pemBytes []byte) ([]crypto.PublicKey, error) {
	if len(pemBytes) > 1<<20 {
		return nil, errors.New("public key file too large")
	}
	var out []crypto.PublicKey
	rest := bytes.TrimSpace(pemBytes)
	for len(rest) > 0 {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("not a PEM public key")
		}
		if b.Type != string(cryptoutils.PublicKeyPEMType) {
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("failed to parse public key: %w", err)
		}
		if err := checkPublic(pub); err != nil {
			return nil, err
		}
		out = append(out, pub)
		rest = bytes.TrimSpace(rest)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM public key found")
	}
	return out, nil
}

func checkPublic(pub crypto.PublicKey) error {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return errors.New("bad ed25519 public key size")
		}
		return nil
	case *ecdsa.PublicKey:
		if p.Curve != elliptic.P256() {
			return errors.New("unsupported ecdsa curve (want P-256)")
		}
		return nil
	}
	return fmt.Errorf("unsupported public key type %T", pub)
}

// KeyID is the stable fingerprint of a public key: the first 16 bytes of
// SHA-256 over its DER SubjectPublicKeyInfo, in hex.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("failed to encode public key: %w", err)
	}
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:16]), nil
}

// Signer signs receipts and checkpoints with one private key through
// sigstore's signature package.
type Signer struct {
	sv   signature.SignerVerifier
	pub  crypto.PublicKey
	kid  string
	kind KeyKind
}

// NewSigner wraps a private key from GenerateKey or ParsePrivateKey.
func NewSigner(priv crypto.Signer) (*Signer, error) {
	var (
		sv   signature.SignerVerifier
		err  error
		kind KeyKind
	)
	switch k := priv.(type) {
	case ed25519.PrivateKey:
		sv, err = signature.LoadED25519SignerVerifier(k)
		kind = Ed25519
	case *ecdsa.PrivateKey:
		sv, err = signature.LoadECDSASignerVerifier(k, crypto.SHA256)
		kind = ECDSAP256
	default:
		return nil, fmt.Errorf("unsupported private key type %T", priv)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to load signer: %w", err)
	}
	pub := priv.Public()
	if err := checkPublic(pub); err != nil {
		return nil, err
	}
	kid, err := KeyID(pub)
	if err != nil {
		return nil, err
	}
	return &Signer{sv: sv, pub: pub, kid: kid, kind: kind}, nil
}

// KeyID returns the signer's key id.
func (s *Signer) KeyID() string { return s.kid }

// Kind returns the signer's algorithm.
func (s *Signer) Kind() KeyKind { return s.kind }

// PublicKey returns the signer's public key.
func (s *Signer) PublicKey() crypto.PublicKey { return s.pub }

// Sign signs msg (Ed25519 over the message; ECDSA P-256 over its SHA-256).
func (s *Signer) Sign(msg []byte) ([]byte, error) {
	return s.sv.SignMessage(bytes.NewReader(msg))
}

// ErrUnknownKey and ErrBadSignature are returned by KeyRing.Verify.
var (
	ErrUnknownKey   = errors.New("signed by an unknown key")
	ErrBadSignature = errors.New("bad signature")
)

// KeyRing holds the public keys a verifier trusts, by key id. It is safe
// for concurrent use once built; Add must not run concurrently with Verify.
type KeyRing struct {
	keys map[string]*ringKey
}

type ringKey struct {
	pub crypto.PublicKey
	v   signature.Verifier
	ed  ed25519.PublicKey
}

// NewKeyRing returns a key ring holding pubs.
func NewKeyRing(pubs ...crypto.PublicKey) (*KeyRing, error) {
	r := &KeyRing{keys: map[string]*ringKey{}}
	for _, p := range pubs {
		if _, err := r.Add(p); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add trusts pub and returns its key id.
func (r *KeyRing) Add(pub crypto.PublicKey) (string, error) {
	if err := checkPublic(pub); err != nil {
		return "", err
	}
	kid, err := KeyID(pub)
	if err != nil {
		return "", err
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("failed to load verifier: %w", err)
	}
	k := &ringKey{pub: pub, v: v}
	if ed, ok := pub.(ed25519.PublicKey); ok {
		k.ed = ed
	}
	r.keys[kid] = k
	return kid, nil
}

// Has reports whether kid is in the ring.
func (r *KeyRing) Has(kid string) bool { _, ok := r.keys[kid]; return ok }

// KeyIDs lists the ring's key ids.
func (r *KeyRing) KeyIDs() []string {
	out := make([]string, 0, len(r.keys))
	for k := range r.keys {
		out = append(out, k)
	}
	return out
}

// PublicKey returns the key for kid, or nil.
func (r *KeyRing) PublicKey(kid string) crypto.PublicKey {
	if k, ok := r.keys[kid]; ok {
		return k.pub
	}
	return nil
}

// Verify checks sig over msg by the key kid.
func (r *KeyRing) Verify(kid string, msg, sig []byte) error {
	k, ok := r.keys[kid]
	if !ok {
		return fmt.Errorf("%w %s", ErrUnknownKey, kid)
	}
	if k.ed != nil {
		// Same check sigstore's ED25519Verifier makes, without copying msg
		// through an io.Reader: verification is the hot path of audit.
		if !ed25519.Verify(k.ed, msg, sig) {
			return ErrBadSignature
		}
		return nil
	}
	if err := k.v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(msg)); err != nil {
		return ErrBadSignature
	}
	return nil
}

// RotationMessage is what the new key signs in a key_rotated receipt.
func RotationMessage(logID, prev, oldKID, newKID string) []byte {
	return []byte("claw-key-rotated-v1\n" + logID + "\n" + prev + "\n" + oldKID + "\n" + newKID + "\n")
}

// Clone returns a copy of r that can be extended without affecting r.
func (r *KeyRing) Clone() *KeyRing {
	c := &KeyRing{keys: make(map[string]*ringKey, len(r.keys))}
	for k, v := range r.keys {
		c.keys[k] = v
	}
	return c
}
