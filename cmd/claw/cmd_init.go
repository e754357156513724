package main

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

	"github.com/clawsec/claw/agent/memory"
	"github.com/clawsec/claw/internal/config"
	"github.com/clawsec/claw/internal/redact"
	"github.com/clawsec/claw/internal/runtime"
	"github.com/clawsec/claw/receipts"
	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
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

// initResult is what claw init did, in -o json form.
type initResult struct {
	Home      string   `json:"home"`
	Config    string   `json:"config"`
	Workspace string   `json:"workspace,omitempty"`
	Created   []string `json:"created"`
	Existed   []string `json:"existed"`
	Warnings  []string `json:"warnings,omitempty"`
	Next      string   `json:"next"` // the command to run next
}

func newInitCommand(g *globals) *cobra.Command {
	var (
		workspace string
		passFile  string
		asJSON    bool
	)
	c := &cobra.Command{
		Use:   "init",
		Short: "Create the claw home, its config file, signing key, memory and workspace",
		Long: `Create the claw home (--home, $CLAW_HOME or ~/.claw; mode 0700) with a
commented config.toml (0600), policies/ for user policies, keys/ with the
receipt signing key (as 'claw keys generate' makes it: encrypted with the
passphrase of --passphrase-file or $CLAW_KEY_PASSPHRASE_FILE, else
unencrypted with mode 0600), receipts/ (0700 each), the memory database,
and the workspace directory the config names.

The workspace is ~/claw-workspace, except for a claw that runs as root and
runs its actions as [sandbox] run_as ("nobody"): when that user cannot
reach ~/claw-workspace (a 0700 home) or it lies in a forbidden path (such
as /root), it is ` + runtime.RootWorkspace + `. A workspace init creates is handed
to that user. init warns about a workspace actions could not use.

init never overwrites anything: an existing config file or key is kept
unchanged and reported, and existing directories are left as they are.
Running it twice is harmless. It ends with the command to run next.

EXIT STATUS
  0 ok (also when everything already existed), 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if ctx == nil { // run directly by claw onboard
				ctx = context.Background()
			}
			home, path, err := configPaths(g)
			if err != nil {
				return err
			}
			res := &initResult{Home: home, Config: path, Created: []string{}, Existed: []string{}}
			var lines []string // in the order of the work
			note := func(p string, created bool) {
				if created {
					res.Created = append(res.Created, p)
					lines = append(lines, "created "+p)
				} else {
					res.Existed = append(res.Existed, p)
					lines = append(lines, "exists  "+p)
				}
			}

			created, err := ensureDir(home)
			if err != nil {
				return withCode(exitError, err)
			}
			note(home, created)
			if !created {
				warnLoosePerms(g, home)
			}

			if _, err := os.Stat(path); workspace == "" && errors.Is(err, fs.ErrNotExist) {
				if workspace, err = defaultWorkspace(ctx, home, path); err != nil {
					return withCode(exitError, err)
				}
			}
			tmpl, err := initTemplate(workspace)
			if err != nil {
				return usageErrorf("%v", err)
			}
			if _, err := ensureDir(filepath.Dir(path)); err != nil {
				return withCode(exitError, err)
			}
			created, err = writeNew(path, tmpl)
			if err != nil {
				return withCode(exitError, err)
			}
			note(path, created)
			if !created {
				infof(g.stderr, "%s already exists; kept it unchanged", path)
			}

			cfg, err := config.Load(path, home)
			var errs *config.Errors
			switch {
			case errors.As(err, &errs):
				for _, e := range errs.List {
					fmt.Fprintln(g.stderr, e)
				}
				return withCode(exitError, fmt.Errorf("%s is invalid: %s", path, configPlural(len(errs.List), "problem")),
					"fix it, or move it away and run 'claw init' again")
			case err != nil:
				return withCode(exitError, err)
			}
			if !created && c.Flags().Changed("workspace") {
				warnf(g.stderr, "--workspace ignored: the existing config's workspace_dir is %s", cfg.WorkspaceDir)
			}

			keyDir, err := receiptKeyDir(g)
			if err != nil {
				return err
			}
			if err := mkdirSearchable(filepath.Dir(cfg.WorkspaceDir)); err != nil {
				return withCode(exitError, err)
			}
			dirs := []string{
				filepath.Join(home, "policies"),
				keyDir,
				cfg.Receipts.Dir,
				cfg.WorkspaceDir,
			}
			for _, d := range dirs {
				if d == home || slices.Contains(res.Created, d) || slices.Contains(res.Existed, d) {
					continue
				}
				created, err := ensureDir(d)
				if err != nil {
					return withCode(exitError, err)
				}
				note(d, created)
			}
			res.Workspace = cfg.WorkspaceDir
			if slices.Contains(res.Created, cfg.WorkspaceDir) {
				if err := handWorkspaceToRunAs(cfg.WorkspaceDir, cfg.Sandbox.RunAs); err != nil {
					warnf(g.stderr, "%v", err)
				}
			}

			readme := filepath.Join(home, "policies", "README.txt")
			created, err = writeNew(readme, []byte(policiesReadme))
			if err != nil {
				return withCode(exitError, err)
			}
			note(readme, created)

			// The daemon's bearer token: 32 random bytes, hex, 0600, never
			// overwritten.
			if _, err := ensureDir(filepath.Dir(cfg.Serve.TokenFile)); err != nil {
				return withCode(exitError, err)
			}
			var tok [32]byte
			if _, err := rand.Read(tok[:]); err != nil {
				return withCode(exitError, err)
			}
			created, err = writeNew(cfg.Serve.TokenFile, []byte(hex.EncodeToString(tok[:])+"\n"))
			if err != nil {
				return withCode(exitError, err)
			}
			note(cfg.Serve.TokenFile, created)

			keyPath := filepath.Join(keyDir, receiptKeyName)
			created, err = initReceiptKey(g, keyDir, passFile)
			if err != nil {
				return err
			}
			note(keyPath, created)
			if created && !receiptKeyEncrypted(keyPath) {
				res.Warnings = append(res.Warnings, keyPath+" is not encrypted; protect it with file permissions only (or remove both key files and run 'claw keys generate' for a passphrase)")
			}

			created, err = initMemory(cfg.Agent.MemoryDB)
			if err != nil {
				return withCode(exitError, err)
			}
			note(cfg.Agent.MemoryDB, created)

			e := &env{home: home, cfg: cfg}
			e.userDir, _ = os.UserHomeDir()
			if problem, fix := workspaceIssue(ctx, e, cfg.WorkspaceDir); problem != "" {
				res.Warnings = append(res.Warnings, problem+"; fix: "+fix)
			}
			if problem, fix := programsProblem(cfg.Sandbox.RunAs, ""); problem != "" {
				res.Warnings = append(res.Warnings, problem+"; fix: "+fix)
			}
			res.Next = "claw doctor"

			if asJSON {
				return writeConfigJSON(g, res)
			}
			for _, l := range lines {
				fmt.Fprintln(g.stdout, l)
			}
			for _, w := range res.Warnings {
				warnf(g.stderr, "%s", w)
			}
			fmt.Fprintf(g.stdout, "next: %s\n", res.Next)
			fmt.Fprintf(g.stdout, "then: claw agent -m 'list the files'   (the workspace is %s)\n", cfg.WorkspaceDir)
			return nil
		},
	}
	c.Flags().StringVar(&workspace, "workspace", "", "workspace directory to write into a new config (default ~/claw-workspace)")
	c.Flags().StringVar(&passFile, "passphrase-file", "", "encrypt the new receipt signing key with the passphrase in this file (or $CLAW_KEY_PASSPHRASE_FILE)")
	addOutputFlag(c, &asJSON)
	return c
}

// defaultWorkspace is the workspace_dir of a new config: "" (the
// template's ~/claw-workspace), or runtime.RootWorkspace when claw runs as root,
// actions run as run_as, and that user cannot reach ~/claw-workspace or it
// lies in a forbidden path.
func defaultWorkspace(ctx context.Context, home, path string) (string, error) {
	cfg, _, err := config.LoadOrDefault(path, home) // the defaults: path does not exist yet
	if err != nil {
		return "", err
	}
	uid, gid, ok, err := runAsIDs(cfg.Sandbox.RunAs)
	if err != nil || !ok {
		return "", err
	}
	ws, err := canonicalDir(cfg.WorkspaceDir)
	if err != nil {
		return "", err
	}
	if unsearchableAbove(ws, uid, gid) != "" {
		return runtime.RootWorkspace, nil
	}
	e := &env{home: home, cfg: cfg}
	e.userDir, _ = os.UserHomeDir()
	if entry, err := workspaceForbidden(ctx, e, ws); err != nil || entry != "" {
		return runtime.RootWorkspace, nil
	}
	return "", nil
}

// initReceiptKey creates the receipt signing key in dir unless there is
// one, encrypted when a passphrase file is given, and reports whether it
// did.
func initReceiptKey(g *globals, dir, passFile string) (bool, error) {
	for _, name := range []string{receiptKeyName, receiptPubName} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return false, nil // kept as it is; doctor checks it
		}
	}
	var pass []byte
	if passFile != "" || os.Getenv("CLAW_KEY_PASSPHRASE_FILE") != "" {
		o := keyOptions{passphraseFile: passFile}
		var err error
		if pass, err = o.passphrase(g, false); err != nil {
			return false, err
		}
	}
	if _, err := generateReceiptKey(dir, receipts.Ed25519, pass); err != nil {
		return false, err
	}
	return true, nil
}

// receiptKeyEncrypted reports whether the key file at path is encrypted.
func receiptKeyEncrypted(path string) bool {
	b, err := readSmall(path, 64<<10)
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

// ensureDir creates dir (and missing parents) with mode 0700 and reports
// whether it was created. An existing non-directory is an error.
func ensureDir(dir string) (bool, error) {
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

// writeNew creates path with mode 0600 and writes data, never replacing an
// existing file (O_EXCL). It reports whether the file was created.
func writeNew(path string, data []byte) (bool, error) {
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
func warnLoosePerms(g *globals, dir string) {
	st, err := os.Stat(dir)
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		warnf(g.stderr, "%s has mode %04o; other users can reach it (chmod 700 %s)", dir, st.Mode().Perm(), dir)
	}
}
