package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/redact"
	"github.com/clawsec/claw/receipts"
)

// policiesReadme is written to HOME/policies/README.txt.
const policiesReadme = `User policies for claw
======================

Rego files in this directory (*.rego, with their tests in *_test.rego) are
loaded together with claw's built-in policies.

Each file's package must be claw.user.<name>, for example:

    package claw.user.nodeploy

    # METADATA
    # title: no deploys from the agent
    # custom:
    #   id: user.nodeploy
    #   severity: high
    deny contains reason if {
        some cmd in input.parsed.commands
        cmd.name == "kubectl"
        reason := {"id": "user.nodeploy", "severity": "high",
                   "msg": "kubectl is not for the agent"}
    }

A user policy may add reasons to deny, ask and passphrase (sets of
{id, severity, msg}); deny beats passphrase beats ask beats allow. It cannot
turn a built-in deny into an allow.

Try a policy with a dry run, and run its tests:

    claw gate test shell 'kubectl apply -f x.yaml'
    claw gate test --rego
`

// InitResult is what claw init did.
type InitResult struct {
	Home      string   `json:"home"`
	Config    string   `json:"config"`
	Workspace string   `json:"workspace,omitempty"`
	Created   []string `json:"created"`
	Existed   []string `json:"existed"`
	Warnings  []string `json:"warnings,omitempty"`
	Next      string   `json:"next"` // the command to run next
	Lines     []string `json:"-"`    // "created P" or "exists  P", in the order of the work
}

func (r *InitResult) note(p string, created bool) {
	if created {
		r.Created = append(r.Created, p)
		r.Lines = append(r.Lines, "created "+p)
	} else {
		r.Existed = append(r.Existed, p)
		r.Lines = append(r.Lines, "exists  "+p)
	}
}

// InitOptions say where claw init works and give it what it needs from
// the composition root.
type InitOptions struct {
	Home, Path string // the claw home and its config file
	KeyDir     string // the receipt keys directory
	// Workspace is the workspace_dir of a new config ("": the default);
	// WorkspaceSet says it was asked for (it is ignored, with a warning,
	// when the config exists).
	Workspace    string
	WorkspaceSet bool
	// Passphrase, when not nil, gives the passphrase of a new signing key.
	Passphrase func() ([]byte, error)
	// Warnf and Infof say what happens while it happens; Problems shows
	// the problems of an invalid existing config.
	Warnf, Infof func(format string, args ...any)
	Problems     func(line string)
}

// initTemplateError is a --workspace the config template cannot take.
type initTemplateError struct{ Err error }

func (e *initTemplateError) Error() string { return e.Err.Error() }
func (e *initTemplateError) Unwrap() error { return e.Err }

// Init creates the claw home with its config file, policies/, keys/ with
// the receipt signing key, receipts/, the serve token, the memory database
// and the workspace, never overwriting anything. A --workspace the config
// cannot take is a usage error; the problems of an invalid existing
// config go to o.Problems, one per line; a key that cannot be made has
// the hint of its step (see [KeyHint]).
func Init(ctx context.Context, o InitOptions) (*InitResult, error) {
	res, err := initHome(ctx, o)
	var errs *config.Errors
	var te *initTemplateError
	switch {
	case errors.As(err, &te):
		return nil, Usagef("%v", err)
	case errors.As(err, &errs):
		return nil, InvalidConfig(o.Path, errs, o.Problems, "fix it, or move it away and run 'claw init' again")
	case err != nil:
		return nil, KeyHint(err)
	}
	return res, nil
}

// initHome is Init before its errors are given exit statuses; an invalid
// existing config is returned as its *config.Errors.
func initHome(ctx context.Context, o InitOptions) (*InitResult, error) {
	home, path, workspace := o.Home, o.Path, o.Workspace
	res := &InitResult{Home: home, Config: path, Created: []string{}, Existed: []string{}}
	created, err := EnsureDir(home)
	if err != nil {
		return nil, err
	}
	res.note(home, created)
	if !created {
		warnLoosePerms(o.Warnf, home)
	}

	if _, err := os.Stat(path); workspace == "" && errors.Is(err, fs.ErrNotExist) {
		if workspace, err = defaultWorkspace(ctx, home, path); err != nil {
			return nil, err
		}
	}
	tmpl, err := initTemplate(workspace)
	if err != nil {
		return nil, &initTemplateError{err}
	}
	if _, err := EnsureDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	created, err = WriteNew(path, tmpl)
	if err != nil {
		return nil, err
	}
	res.note(path, created)
	if !created {
		o.Infof("%s already exists; kept it unchanged", path)
	}

	cfg, err := config.Load(path, home)
	if err != nil {
		return nil, err
	}
	if !created && o.WorkspaceSet {
		o.Warnf("--workspace ignored: the existing config's workspace_dir is %s", cfg.WorkspaceDir)
	}
	if err := initDirs(res, o, cfg); err != nil {
		return nil, err
	}
	if err := initFiles(res, o, cfg); err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, initProblems(ctx, home, cfg)...)
	res.Next = "claw doctor"
	return res, nil
}

// initDirs makes the directories of cfg and hands a new workspace to the
// run_as user.
func initDirs(res *InitResult, o InitOptions, cfg *config.Config) error {
	if err := mkdirSearchable(filepath.Dir(cfg.WorkspaceDir)); err != nil {
		return err
	}
	dirs := []string{
		filepath.Join(o.Home, "policies"),
		o.KeyDir,
		cfg.Receipts.Dir,
		cfg.WorkspaceDir,
	}
	for _, d := range dirs {
		if d == o.Home || slices.Contains(res.Created, d) || slices.Contains(res.Existed, d) {
			continue
		}
		created, err := EnsureDir(d)
		if err != nil {
			return err
		}
		res.note(d, created)
	}
	res.Workspace = cfg.WorkspaceDir
	if slices.Contains(res.Created, cfg.WorkspaceDir) {
		if err := HandWorkspaceToRunAs(cfg.WorkspaceDir, cfg.Sandbox.RunAs); err != nil {
			o.Warnf("%v", err)
		}
	}
	return nil
}

// initFiles writes the policies README, the serve token, the signing key
// and the memory database, each unless it exists.
func initFiles(res *InitResult, o InitOptions, cfg *config.Config) error {
	readme := filepath.Join(o.Home, "policies", "README.txt")
	created, err := WriteNew(readme, []byte(policiesReadme))
	if err != nil {
		return err
	}
	res.note(readme, created)

	// The daemon's bearer token: 32 random bytes, hex, 0600, never
	// overwritten.
	if _, err := EnsureDir(filepath.Dir(cfg.Serve.TokenFile)); err != nil {
		return err
	}
	var tok [32]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return err
	}
	created, err = WriteNew(cfg.Serve.TokenFile, []byte(hex.EncodeToString(tok[:])+"\n"))
	if err != nil {
		return err
	}
	res.note(cfg.Serve.TokenFile, created)

	keyPath := filepath.Join(o.KeyDir, ReceiptKeyName)
	created, err = initReceiptKey(o.KeyDir, o.Passphrase)
	if err != nil {
		return err
	}
	res.note(keyPath, created)
	if created && !receiptKeyEncrypted(keyPath) {
		res.Warnings = append(res.Warnings, keyPath+" is not encrypted; protect it with file permissions only (or remove both key files and run 'claw keys generate' for a passphrase)")
	}

	created, err = initMemory(cfg.Agent.MemoryDB)
	if err != nil {
		return err
	}
	res.note(cfg.Agent.MemoryDB, created)
	return nil
}

// initReceiptKey creates the receipt signing key in dir unless there is
// one, encrypted when passphrase is not nil, and reports whether it did.
func initReceiptKey(dir string, passphrase func() ([]byte, error)) (bool, error) {
	for _, name := range []string{ReceiptKeyName, ReceiptPubName} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return false, nil // kept as it is; doctor checks it
		}
	}
	var pass []byte
	if passphrase != nil {
		var err error
		if pass, err = passphrase(); err != nil {
			return false, err
		}
	}
	if _, err := GenerateReceiptKey(dir, receipts.Ed25519, pass); err != nil {
		return false, err
	}
	return true, nil
}

// receiptKeyEncrypted reports whether the key file at path is encrypted.
func receiptKeyEncrypted(path string) bool {
	b, err := ReadSmall(path, 64<<10)
	return err == nil && receipts.IsEncryptedKey(b)
}

// initMemory creates the memory database at path unless it exists.
func initMemory(path string) (bool, error) {
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	}
	st, err := memory.Open(path, memory.WithRedactor(redact.String), memory.WithSecretFields(redact.SecretField))
	if err != nil {
		return false, fmt.Errorf("creating the memory database: %w", err)
	}
	return true, st.Close()
}

// initTemplate is the config template, with workspace_dir set to dir when
// dir is not empty.
func initTemplate(dir string) ([]byte, error) {
	tmpl := config.Template()
	if dir == "" {
		return tmpl, nil
	}
	if !strings.HasPrefix(dir, "~") && !strings.Contains(dir, "$") {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("bad --workspace %q: %w", dir, err)
		}
		dir = abs
	}
	line, err := toml.Marshal(struct {
		W string `toml:"workspace_dir"`
	}{dir})
	if err != nil {
		return nil, fmt.Errorf("bad --workspace %q: %w", dir, err)
	}
	const def = "workspace_dir = \"~/claw-workspace\"\n"
	if !bytes.Contains(tmpl, []byte(def)) {
		return nil, errors.New("config template has no workspace_dir line")
	}
	return bytes.Replace(tmpl, []byte(def), line, 1), nil
}

// EnsureDir creates dir (and missing parents) with mode 0700 and reports
// whether it was created. An existing non-directory is an error.
func EnsureDir(dir string) (bool, error) {
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return false, fmt.Errorf("%s exists and is not a directory", dir)
		}
		return false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("failed to inspect %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	// MkdirAll applies the umask; the mode is part of the contract.
	if err := os.Chmod(dir, 0o700); err != nil {
		return false, fmt.Errorf("failed to set the mode of %s: %w", dir, err)
	}
	return true, nil
}

// mkdirSearchable creates dir and its missing parents with mode 0755
// whatever the umask, so that the run_as user can reach a workspace inside.
func mkdirSearchable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirSearchable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
		return nil // made by someone else meanwhile: not ours to change
	} else if err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	return os.Chmod(dir, 0o755)
}

// WriteNew creates path with mode 0600 and writes data, never replacing an
// existing file (O_EXCL). It reports whether the file was created.
func WriteNew(path string, data []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("failed to create %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return false, fmt.Errorf("failed to write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return false, fmt.Errorf("failed to write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return false, fmt.Errorf("failed to write %s: %w", path, err)
	}
	return true, nil
}

// warnLoosePerms warns when an existing claw home is open to other users.
func warnLoosePerms(warnf func(string, ...any), dir string) {
	st, err := os.Stat(dir)
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		warnf("%s has mode %04o; other users can reach it (chmod 700 %s)", dir, st.Mode().Perm(), dir)
	}
}
