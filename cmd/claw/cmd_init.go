package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawsec/claw/internal/runtime"
)

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
			return runInit(ctx, g, workspace, c.Flags().Changed("workspace"), passFile, asJSON)
		},
	}
	c.Flags().StringVar(&workspace, "workspace", "", "workspace directory to write into a new config (default ~/claw-workspace)")
	c.Flags().StringVar(&passFile, "passphrase-file", "", "encrypt the new receipt signing key with the passphrase in this file (or $CLAW_KEY_PASSPHRASE_FILE)")
	addOutputFlag(c, &asJSON)
	return c
}

func runInit(ctx context.Context, g *globals, workspace string, workspaceSet bool, passFile string, asJSON bool) error {
	home, path, err := configPaths(g)
	if err != nil {
		return err
	}
	keyDir, err := receiptKeyDir(g)
	if err != nil {
		return err
	}
	o := runtime.InitOptions{
		Home: home, Path: path, KeyDir: keyDir,
		Workspace: workspace, WorkspaceSet: workspaceSet,
		Warnf:    func(f string, a ...any) { warnf(g.stderr, f, a...) },
		Infof:    func(f string, a ...any) { infof(g.stderr, f, a...) },
		Problems: problemLines(g),
	}
	if runtime.KeyPassphraseFile(passFile) != "" {
		k := keyOptions{passphraseFile: passFile}
		o.Passphrase = func() ([]byte, error) { return k.passphrase(g, false) }
	}
	res, err := runtime.Init(ctx, o)
	if err != nil {
		return err
	}
	if asJSON {
		return writeConfigJSON(g, res)
	}
	for _, l := range res.Lines {
		fmt.Fprintln(g.stdout, l)
	}
	for _, w := range res.Warnings {
		warnf(g.stderr, "%s", w)
	}
	fmt.Fprintf(g.stdout, "next: %s\n", res.Next)
	fmt.Fprintf(g.stdout, "then: claw agent -m 'list the files'   (the workspace is %s)\n", res.Workspace)
	return nil
}
