package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawsec/claw/internal/config"
	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
)

func init() { registerCommand("init", newInitCommand) }

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
}

func newInitCommand(g *globals) *cobra.Command {
	var (
		workspace string
		asJSON    bool
	)
	c := &cobra.Command{
		Use:   "init",
		Short: "Create the claw home, its config file and the workspace",
		Long: `Create the claw home (--home, $CLAW_HOME or ~/.claw; mode 0700) with a
commented config.toml (0600), policies/ for user policies, keys/ and
receipts/ (0700 each), and the workspace directory the config names.

init never overwrites anything: an existing config file is kept unchanged
and reported, and existing directories are left as they are. Running it
twice is harmless.

EXIT STATUS
  0 ok (also when everything already existed), 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
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
			if !created && workspace != "" {
				warnf(g.stderr, "--workspace ignored: the existing config's workspace_dir is %s", cfg.WorkspaceDir)
			}

			dirs := []string{
				filepath.Join(home, "policies"),
				filepath.Dir(cfg.Receipts.Key),
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

			if asJSON {
				return writeConfigJSON(g, res)
			}
			for _, l := range lines {
				fmt.Fprintln(g.stdout, l)
			}
			return nil
		},
	}
	c.Flags().StringVar(&workspace, "workspace", "", "workspace directory to write into a new config (default ~/claw-workspace)")
	addOutputFlag(c, &asJSON)
	return c
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
