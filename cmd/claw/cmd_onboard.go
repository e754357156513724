package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/clawsec/claw/internal/runtime"
)

func newOnboardCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "onboard",
		Short: "Set up claw interactively: model provider, key variable, model, autonomy",
		Long: `Ask, on the terminal, for the model provider (mock, openai-compatible or
anthropic), its base URL, the NAME of the environment variable holding its
key, the model and the autonomy level, then write them to the config file:
a [providers.NAME] section, default_provider, default_model and
security.autonomy. Everything else in the file, comments included, is kept.

Without a config file, onboard first creates the claw home like 'claw init'.
The key itself is never asked for and never written: export it in the
environment variable you name. Nothing is written until you confirm, and
the result is validated before it replaces the file. Last, onboard offers
to set the passphrase for high-risk actions (as 'claw passphrase set').

onboard needs a terminal; in a script, edit config.toml instead.

EXIT STATUS
  0 written (or nothing to do), 1 error or cancelled, 2 no terminal or
  usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f, ok := g.stdin.(*os.File)
			if !ok || !term.IsTerminal(int(f.Fd())) {
				return withCode(exitUsage, errors.New("claw onboard asks questions and needs a terminal"),
					"in a script, edit config.toml: see the [providers.NAME] examples in it and 'claw config validate'")
			}
			tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("claw onboard needs a terminal: %w", err),
					"in a script, edit config.toml and run 'claw config validate'")
			}
			defer tty.Close()
			return runOnboard(g, bufio.NewReader(tty), tty)
		},
	}
}

// errOnboardCancelled ends onboard without writing anything.
var errOnboardCancelled = errors.New("onboard cancelled; nothing was written")

// runOnboard asks the questions on in/out and updates the config.
func runOnboard(g *globals, in *bufio.Reader, out io.Writer) error {
	home, path, err := configPaths(g)
	if err != nil {
		return err
	}
	existing, current, err := runtime.OnboardConfig(home, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "claw onboard: set up the model provider in %s\n", path)
	fmt.Fprintln(out, "(press Enter to take the value in brackets; nothing is written until the end)")

	ask := func(question, def string, check func(string) error) (string, error) {
		for tries := 0; tries < 3; tries++ {
			if def != "" {
				fmt.Fprintf(out, "%s [%s]: ", question, def)
			} else {
				fmt.Fprintf(out, "%s: ", question)
			}
			line, err := in.ReadString('\n')
			if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
				fmt.Fprintln(out)
				return "", withCode(exitError, errOnboardCancelled)
			}
			v := strings.TrimSpace(line)
			if v == "" {
				v = def
			}
			if cerr := check(v); cerr != nil {
				fmt.Fprintf(out, "  %v\n", cerr)
				continue
			}
			return v, nil
		}
		return "", withCode(exitUsage, fmt.Errorf("no valid answer to %q; nothing was written", question))
	}
	a, err := runtime.AskOnboard(ask, current)
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "\nprovider  %s (%s)\n", a.Name, a.Kind)
	if a.BaseURL != "" {
		fmt.Fprintf(out, "base URL  %s\n", a.BaseURL)
	}
	if a.KeyEnv != "" {
		fmt.Fprintf(out, "key       from $%s\n", a.KeyEnv)
	}
	fmt.Fprintf(out, "model     %s\nautonomy  %s\n", a.Model, a.Autonomy)
	if yes, err := ask("write this to "+path+"? (y/n)", "y", runtime.OneOf("y", "n", "yes", "no")); err != nil {
		return err
	} else if !strings.HasPrefix(yes, "y") {
		return withCode(exitError, errOnboardCancelled)
	}

	if err := runtime.WriteOnboard(home, path, existing, a, func() error { return onboardInit(g) }); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", path)
	infof(g.stderr, "default provider is now %s; try it with 'claw provider test %s'", a.Name, a.Name)
	if a.KeyEnv != "" && os.Getenv(a.KeyEnv) == "" {
		warnf(g.stderr, "$%s is not set in this environment: export the key in it before 'claw agent'", a.KeyEnv)
	}
	return onboardPassphrase(g, ask, runtime.OneOf("y", "n", "yes", "no"))
}

// onboardPassphrase offers to set the passphrase that gates high-risk
// actions, with claw passphrase set (typed twice without echo). It needs
// standard input to be the terminal; otherwise it only says how.
func onboardPassphrase(g *globals, ask runtime.OnboardAsk, yesNo func(string) error) error {
	later := "to guard high-risk actions with a passphrase, run 'claw passphrase set'"
	f, ok := g.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		infof(g.stderr, "%s", later)
		return nil
	}
	ans, err := ask("set a passphrase for high-risk actions now? (y/n)", "n", yesNo)
	if err != nil || !strings.HasPrefix(ans, "y") {
		infof(g.stderr, "%s", later)
		return nil
	}
	if err := runPassphraseSet(context.Background(), g, false); err != nil {
		return withCode(exitCodeOf(err), fmt.Errorf("the provider settings were written, but the passphrase was not set: %w", err),
			"run 'claw passphrase set' to try again")
	}
	return nil
}

// onboardInit creates the claw home and the config file like claw init,
// with its messages on standard error.
func onboardInit(g *globals) error {
	sub := *g
	sub.stdout = g.stderr
	return runInit(context.Background(), &sub, "", false, "", false)
}
