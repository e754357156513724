package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawsec/claw/internal/runtime"
)

// receiptHome is the claw home for the receipt commands: --home, then
// $CLAW_HOME, then ~/.claw.
func receiptHome(g *globals) (string, error) { return runtime.ReceiptHome(g.home) }

func receiptKeyDir(g *globals) (string, error) { return runtime.ReceiptKeyDir(g.home) }

func receiptDir(g *globals) (string, error) { return runtime.ReceiptLogDir(g.home) }

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
	if b, ok, err := runtime.KeyPassphraseFromFile(o.passphraseFile); ok {
		return b, err
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

// keyError adds the exit status and the hint for the step of key handling
// err comes from.
var keyError = runtime.KeyHint

// loadReceiptSigner reads the private signing key from the keys directory.
func loadReceiptSigner(g *globals, o *keyOptions) (*runtime.Signer, error) {
	return runtime.ReceiptSigner(o.kms, func() (string, error) { return receiptKeyDir(g) },
		func() ([]byte, error) { return o.passphrase(g, false) })
}

// signerOf is loadReceiptSigner as a function to call once the key is
// needed.
func signerOf(g *globals, o *keyOptions) func() (*runtime.Signer, error) {
	return func() (*runtime.Signer, error) { return loadReceiptSigner(g, o) }
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
				return withCode(exitUsage, runtime.CheckKMS(o.kms), "use a local key for now")
			}
			if unencrypted && o.passphraseFile != "" {
				return usageErrorf("--unencrypted and --passphrase-file cannot be used together")
			}
			var pass func() ([]byte, error)
			if !unencrypted {
				pass = func() ([]byte, error) { return o.passphrase(g, true) }
			}
			ki, err := runtime.NewReceiptKey(func() (string, error) { return receiptKeyDir(g) }, kind, pass)
			if err != nil {
				return err
			}
			keyPath, pubPath := ki.Private, ki.Public
			if asJSON {
				return writeJSON(g.stdout, ki)
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
			ki, err := runtime.ShowReceiptKey(dir)
			if err != nil {
				return keyError(err)
			}
			if asJSON {
				return writeJSON(g.stdout, ki)
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
				return withCode(exitUsage, runtime.CheckKMS(o.kms))
			}
			dir, err := receiptKeyDir(g)
			if err != nil {
				return err
			}
			rdir, err := receiptDir(g)
			if err != nil {
				return err
			}
			rot, err := runtime.RotateReceiptKey(c.Context(), dir, rdir, kind, func() ([]byte, error) { return o.passphrase(g, false) })
			if err != nil {
				return keyError(err)
			}
			res := map[string]any{"old_kid": rot.OldKID, "new_kid": rot.NewKID, "seq": rot.Seq, "retired_key_file": rot.Retired}
			if asJSON {
				return writeJSON(g.stdout, res)
			}
			infof(g.stderr, "rotated the receipt key at seq %d; the old key is kept as %s", rot.Seq, rot.Retired)
			fmt.Fprintf(g.stdout, "kid %s\n", rot.NewKID)
			return nil
		},
	}
	o.addFlags(c)
	c.Flags().StringVar(&kind, "kind", "", "kind of the new key (default: same as the old one)")
	addOutputFlag(c, &asJSON)
	return c
}
