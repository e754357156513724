package main

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawsec/claw/receipts"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// receiptHome is the claw home for the receipt commands: --home, then
// $CLAW_HOME, then ~/.claw.
func receiptHome(g *globals) (string, error) {
	if g.home != "" {
		return g.home, nil
	}
	if h := os.Getenv("CLAW_HOME"); h != "" {
		return h, nil
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", withCode(exitError, fmt.Errorf("cannot find the home directory: %w", err), "set CLAW_HOME or pass --home")
	}
	return filepath.Join(u, ".claw"), nil
}

func receiptKeyDir(g *globals) (string, error) {
	h, err := receiptHome(g)
	if err != nil {
		return "", err
	}
	return filepath.Join(h, "keys"), nil
}

func receiptDir(g *globals) (string, error) {
	h, err := receiptHome(g)
	if err != nil {
		return "", err
	}
	return filepath.Join(h, "receipts"), nil
}

const (
	receiptKeyName = "receipt.key"
	receiptPubName = "receipt.pub"
)

// keyOptions are the flags that locate and unlock the receipt signing key.
type keyOptions struct {
	passphraseFile string
	kms            string
}

func (o *keyOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.passphraseFile, "passphrase-file", "", "read the key passphrase from this file (or $CLAW_KEY_PASSPHRASE_FILE)")
	c.Flags().StringVar(&o.kms, "kms", "", "KMS key reference (no scheme is allowlisted yet; always refused)")
}

// passphrase returns the key passphrase from --passphrase-file,
// $CLAW_KEY_PASSPHRASE_FILE or a terminal prompt, never from argv.
func (o *keyOptions) passphrase(g *globals, confirm bool) ([]byte, error) {
	path := o.passphraseFile
	if path == "" {
		path = os.Getenv("CLAW_KEY_PASSPHRASE_FILE")
	}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, withCode(exitError, fmt.Errorf("failed to read passphrase file: %w", err))
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		if err != nil {
			return nil, withCode(exitError, fmt.Errorf("failed to read passphrase file: %w", err))
		}
		b = bytes.TrimRight(b, "\r\n")
		if len(b) == 0 {
			return nil, withCode(exitError, fmt.Errorf("passphrase file %s is empty", path))
		}
		return b, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !term.IsTerminal(int(tty.Fd())) {
		if tty != nil {
			tty.Close()
		}
		return nil, withCode(exitNeedsHuman, errors.New("the receipt key needs a passphrase and there is no terminal to ask"),
			"pass --passphrase-file FILE or set CLAW_KEY_PASSPHRASE_FILE",
			"for a service, 'claw keys generate --unencrypted' writes a 0600 key without a passphrase")
	}
	defer tty.Close()
	fmt.Fprint(tty, "claw: receipt key passphrase: ")
	p, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, withCode(exitError, fmt.Errorf("failed to read passphrase: %w", err))
	}
	if len(p) == 0 {
		return nil, withCode(exitUsage, errors.New("empty passphrase"), "use --unencrypted for a key without a passphrase")
	}
	if confirm {
		fmt.Fprint(tty, "claw: confirm passphrase: ")
		q, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(tty)
		if err != nil {
			return nil, withCode(exitError, fmt.Errorf("failed to read passphrase: %w", err))
		}
		if !bytes.Equal(p, q) {
			return nil, withCode(exitUsage, errors.New("passphrases do not match"))
		}
	}
	return p, nil
}

// loadReceiptSigner reads the private signing key from the keys directory.
func loadReceiptSigner(g *globals, o *keyOptions) (*receipts.Signer, error) {
	if o.kms != "" {
		return nil, withCode(exitUsage, receipts.CheckKMS(o.kms))
	}
	dir, err := receiptKeyDir(g)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, receiptKeyName)
	pemBytes, err := readSmall(path, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil, withCode(exitError, fmt.Errorf("no receipt signing key at %s", path), "create one with 'claw keys generate'")
	}
	if err != nil {
		return nil, withCode(exitError, err)
	}
	var perr error
	priv, err := receipts.ParsePrivateKey(pemBytes, func() ([]byte, error) {
		p, err := o.passphrase(g, false)
		perr = err
		return p, err
	})
	if perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, withCode(exitError, fmt.Errorf("%s: %w", path, err), "wrong passphrase?")
	}
	return receipts.NewSigner(priv)
}

func readSmall(path string, limit int64) ([]byte, error) {
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

// writeKeyFile creates path with O_EXCL so a key is never overwritten.
func writeKeyFile(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return withCode(exitError, fmt.Errorf("%s already exists; keys are never overwritten", path), "use 'claw keys rotate' to replace the signing key")
		}
		return withCode(exitError, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return withCode(exitError, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return withCode(exitError, err)
	}
	return f.Close()
}

// generateReceiptKey writes a new signing key of kind to dir/receipt.key
// (0600; encrypted when pass is not empty) and its public key to
// dir/receipt.pub, never replacing either.
func generateReceiptKey(dir string, kind receipts.KeyKind, pass []byte) (keyInfo, error) {
	priv, err := receipts.GenerateKey(kind)
	if err != nil {
		return keyInfo{}, withCode(exitUsage, err)
	}
	privPEM, err := receipts.MarshalPrivateKey(priv, pass)
	if err != nil {
		return keyInfo{}, withCode(exitError, err)
	}
	pubPEM, err := receipts.MarshalPublicKey(priv.Public())
	if err != nil {
		return keyInfo{}, withCode(exitError, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return keyInfo{}, withCode(exitError, err)
	}
	keyPath, pubPath := filepath.Join(dir, receiptKeyName), filepath.Join(dir, receiptPubName)
	if err := writeKeyFile(keyPath, privPEM, 0o600); err != nil {
		return keyInfo{}, err
	}
	if err := writeKeyFile(pubPath, pubPEM, 0o644); err != nil {
		return keyInfo{}, err
	}
	ki, err := describeKey(priv.Public())
	if err != nil {
		return keyInfo{}, withCode(exitError, err)
	}
	ki.Private, ki.Public, ki.Encrypted = keyPath, pubPath, len(pass) > 0
	return ki, nil
}

// trustedReceiptKeys loads every *.pub in the keys directory (the current
// key and retired ones), for verifying on the host itself.
func trustedReceiptKeys(g *globals) ([]crypto.PublicKey, []string, error) {
	dir, err := receiptKeyDir(g)
	if err != nil {
		return nil, nil, err
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.pub"))
	sort.Strings(matches)
	var keys []crypto.PublicKey
	for _, m := range matches {
		ks, err := loadPublicKeyFile(m)
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, ks...)
	}
	return keys, matches, nil
}

func loadPublicKeyFile(path string) ([]crypto.PublicKey, error) {
	b, err := readSmall(path, 1<<20)
	if err != nil {
		return nil, withCode(exitError, err)
	}
	ks, err := receipts.ParsePublicKeys(b)
	if err != nil {
		return nil, withCode(exitError, fmt.Errorf("%s: %w", path, err))
	}
	return ks, nil
}

type keyInfo struct {
	KID         string `json:"kid"`
	Kind        string `json:"kind"`
	Public      string `json:"public_key_file,omitempty"`
	Private     string `json:"private_key_file,omitempty"`
	Encrypted   bool   `json:"encrypted"`
	NoteKey     string `json:"note_verifier_key,omitempty"`
	PublicKey   string `json:"public_key"`
	RetiredFrom string `json:"retired_from,omitempty"`
}

func describeKey(pub crypto.PublicKey) (keyInfo, error) {
	kid, err := receipts.KeyID(pub)
	if err != nil {
		return keyInfo{}, err
	}
	pem, err := receipts.MarshalPublicKey(pub)
	if err != nil {
		return keyInfo{}, err
	}
	ki := keyInfo{KID: kid, Kind: string(receipts.ECDSAP256), PublicKey: string(pem)}
	if ed, ok := pub.(ed25519.PublicKey); ok {
		ki.Kind = string(receipts.Ed25519)
		ki.NoteKey, _ = receipts.NoteVerifierKey(ed)
	}
	return ki, nil
}

func newKeysCommand(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "keys",
		Short: "Manage the receipt signing key",
		Long: `Manage the key that signs receipts and checkpoints.

The private key is HOME/keys/receipt.key (mode 0600), encrypted with a
passphrase (scrypt + secretbox, the format cosign uses) unless it was made
with --unencrypted for a service. The passphrase comes from
--passphrase-file, $CLAW_KEY_PASSPHRASE_FILE or a terminal prompt, never
from the command line. The public key is HOME/keys/receipt.pub; give a copy
to whoever audits the log.

EXIT STATUS
  0 ok, 1 error, 2 usage, 6 a passphrase is needed and there is no terminal.`,
	}
	c.AddCommand(newKeysGenerateCommand(g), newKeysShowCommand(g), newKeysRotateCommand(g))
	return c
}

func newKeysGenerateCommand(g *globals) *cobra.Command {
	var (
		o           keyOptions
		kind        string
		unencrypted bool
		asJSON      bool
	)
	c := &cobra.Command{
		Use:   "generate",
		Short: "Create the receipt signing key (never overwrites)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.kms != "" {
				return withCode(exitUsage, receipts.CheckKMS(o.kms), "use a local key for now")
			}
			if unencrypted && o.passphraseFile != "" {
				return usageErrorf("--unencrypted and --passphrase-file cannot be used together")
			}
			if _, err := receipts.GenerateKey(receipts.KeyKind(kind)); err != nil {
				return withCode(exitUsage, err) // a bad --kind, before any prompt
			}
			dir, err := receiptKeyDir(g)
			if err != nil {
				return err
			}
			keyPath := filepath.Join(dir, receiptKeyName)
			if _, err := os.Stat(keyPath); err == nil {
				return withCode(exitError, fmt.Errorf("%s already exists; keys are never overwritten", keyPath), "use 'claw keys rotate' to replace the signing key")
			}
			var pass []byte
			if !unencrypted {
				if pass, err = o.passphrase(g, true); err != nil {
					return err
				}
			}
			ki, err := generateReceiptKey(dir, receipts.KeyKind(kind), pass)
			if err != nil {
				return err
			}
			keyPath, pubPath := ki.Private, ki.Public
			if asJSON {
				return writeReceiptJSON(g, ki)
			}
			if unencrypted {
				warnf(g.stderr, "%s is not encrypted; protect it with file permissions only", keyPath)
			}
			infof(g.stderr, "wrote %s and %s", keyPath, pubPath)
			fmt.Fprintf(g.stdout, "kid %s\n", ki.KID)
			return nil
		},
	}
	o.addFlags(c)
	c.Flags().StringVar(&kind, "kind", "ed25519", "key kind: ed25519 or ecdsa-p256")
	c.Flags().BoolVar(&unencrypted, "unencrypted", false, "write the private key without a passphrase (for a service; mode 0600)")
	addOutputFlag(c, &asJSON)
	return c
}

func newKeysShowCommand(g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the receipt public key and its key id",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			dir, err := receiptKeyDir(g)
			if err != nil {
				return err
			}
			pubPath := filepath.Join(dir, receiptPubName)
			if _, err := os.Stat(pubPath); errors.Is(err, os.ErrNotExist) {
				return withCode(exitError, fmt.Errorf("no receipt public key at %s", pubPath), "create one with 'claw keys generate'")
			}
			ks, err := loadPublicKeyFile(pubPath)
			if err != nil {
				return err
			}
			ki, err := describeKey(ks[0])
			if err != nil {
				return withCode(exitError, err)
			}
			ki.Public = pubPath
			ki.Private = filepath.Join(dir, receiptKeyName)
			if b, err := readSmall(ki.Private, 64<<10); err == nil {
				ki.Encrypted = receipts.IsEncryptedKey(b)
			} else {
				ki.Private = ""
			}
			if asJSON {
				return writeReceiptJSON(g, ki)
			}
			fmt.Fprintf(g.stdout, "kid: %s\nkind: %s\n", ki.KID, ki.Kind)
			if ki.NoteKey != "" {
				fmt.Fprintf(g.stdout, "note verifier key: %s\n", ki.NoteKey)
			}
			fmt.Fprint(g.stdout, ki.PublicKey)
			return nil
		},
	}
	addOutputFlag(c, &asJSON)
	return c
}

func newKeysRotateCommand(g *globals) *cobra.Command {
	var (
		o      keyOptions
		kind   string
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "rotate",
		Short: "Replace the signing key, recorded by a receipt signed by both keys",
		Long: `Generate a new signing key and hand the receipt log over to it with a
key_rotated receipt signed by the old key, which carries the new public key
and the new key's signature. Verifiers that trust the old key then trust the
new one from that receipt on. The old key files are kept as
receipt-<kid>.key and receipt-<kid>.pub; the new key is encrypted with the
same passphrase as the old one (or left unencrypted if the old one was).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.kms != "" {
				return withCode(exitUsage, receipts.CheckKMS(o.kms))
			}
			dir, err := receiptKeyDir(g)
			if err != nil {
				return err
			}
			keyPath, pubPath := filepath.Join(dir, receiptKeyName), filepath.Join(dir, receiptPubName)
			oldPEM, err := readSmall(keyPath, 64<<10)
			if err != nil {
				return withCode(exitError, err, "create a key with 'claw keys generate'")
			}
			var pass []byte
			if receipts.IsEncryptedKey(oldPEM) {
				if pass, err = o.passphrase(g, false); err != nil {
					return err
				}
			}
			oldPriv, err := receipts.ParsePrivateKey(oldPEM, func() ([]byte, error) { return pass, nil })
			if err != nil {
				return withCode(exitError, fmt.Errorf("%s: %w", keyPath, err), "wrong passphrase?")
			}
			oldS, err := receipts.NewSigner(oldPriv)
			if err != nil {
				return withCode(exitError, err)
			}
			if kind == "" {
				kind = string(oldS.Kind())
			}
			newPriv, err := receipts.GenerateKey(receipts.KeyKind(kind))
			if err != nil {
				return withCode(exitUsage, err)
			}
			newS, err := receipts.NewSigner(newPriv)
			if err != nil {
				return withCode(exitError, err)
			}
			newPEM, err := receipts.MarshalPrivateKey(newPriv, pass)
			if err != nil {
				return withCode(exitError, err)
			}
			newPub, err := receipts.MarshalPublicKey(newPriv.Public())
			if err != nil {
				return withCode(exitError, err)
			}
			// The new key is on disk before the log names it.
			pendingKey, pendingPub := keyPath+".new", pubPath+".new"
			if err := writeKeyFile(pendingKey, newPEM, 0o600); err != nil {
				return err
			}
			if err := writeKeyFile(pendingPub, newPub, 0o644); err != nil {
				return err
			}
			rdir, err := receiptDir(g)
			if err != nil {
				return err
			}
			l, err := receipts.Open(rdir, oldS, receipts.Options{CheckpointInterval: -1})
			if err != nil {
				return withCode(exitError, err)
			}
			e, err := l.RotateKey(c.Context(), newS)
			if cerr := l.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return withCode(exitError, fmt.Errorf("failed to record the key rotation: %w", err), "the new key is in "+pendingKey)
			}
			retiredKey := filepath.Join(dir, "receipt-"+oldS.KeyID()+".key")
			retiredPub := filepath.Join(dir, "receipt-"+oldS.KeyID()+".pub")
			for _, mv := range [][2]string{{keyPath, retiredKey}, {pubPath, retiredPub}, {pendingKey, keyPath}, {pendingPub, pubPath}} {
				if _, err := os.Stat(mv[1]); err == nil {
					return withCode(exitError, fmt.Errorf("%s already exists; keys are never overwritten", mv[1]))
				}
				if err := os.Rename(mv[0], mv[1]); err != nil {
					return withCode(exitError, err)
				}
			}
			res := map[string]any{"old_kid": oldS.KeyID(), "new_kid": newS.KeyID(), "seq": e.Seq, "retired_key_file": retiredKey}
			if asJSON {
				return writeReceiptJSON(g, res)
			}
			infof(g.stderr, "rotated the receipt key at seq %d; the old key is kept as %s", e.Seq, retiredKey)
			fmt.Fprintf(g.stdout, "kid %s\n", newS.KeyID())
			return nil
		},
	}
	o.addFlags(c)
	c.Flags().StringVar(&kind, "kind", "", "kind of the new key (default: same as the old one)")
	addOutputFlag(c, &asJSON)
	return c
}

func writeReceiptJSON(g *globals, v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

var _ = strings.TrimSpace
