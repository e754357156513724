package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/internal/config"
	"github.com/spf13/cobra"
	"golang.org/x/term"
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

// onboardAnswers is what the person chose.
type onboardAnswers struct {
	Kind, Name, BaseURL, KeyEnv, Model, Autonomy string
}

var (
	providerNameRE = lazyRegexp(`^[a-z][a-z0-9_-]{0,31}$`)
	envVarRE       = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	modelRE        = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$`)
)

// onboardDefaults are the suggested answers for each kind.
var onboardDefaults = map[string]onboardAnswers{
	provider.KindMock:      {Name: "local", Model: "mock"},
	provider.KindOpenAI:    {Name: "openai", BaseURL: provider.DefaultOpenAIBaseURL, KeyEnv: "OPENAI_API_KEY", Model: "gpt-4.1"},
	provider.KindAnthropic: {Name: "claude", BaseURL: provider.DefaultAnthropicBaseURL, KeyEnv: "ANTHROPIC_API_KEY", Model: "claude-sonnet-4-5"},
}

// errOnboardCancelled ends onboard without writing anything.
var errOnboardCancelled = errors.New("onboard cancelled; nothing was written")

// runOnboard asks the questions on in/out and updates the config.
func runOnboard(g *globals, in *bufio.Reader, out io.Writer) error {
	home, path, err := configPaths(g)
	if err != nil {
		return err
	}
	var existing []byte
	switch b, err := os.ReadFile(path); {
	case err == nil:
		existing = b
	case errors.Is(err, fs.ErrNotExist):
	default:
		return withCode(exitError, fmt.Errorf("failed to read %s: %w", path, err))
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
	oneOf := func(opts ...string) func(string) error {
		return func(v string) error {
			for _, o := range opts {
				if v == o {
					return nil
				}
			}
			return fmt.Errorf("choose one of: %s", strings.Join(opts, ", "))
		}
	}

	var a onboardAnswers
	if a.Kind, err = ask("provider kind (mock, openai-compatible, anthropic)", provider.KindMock,
		oneOf(provider.KindMock, provider.KindOpenAI, provider.KindAnthropic)); err != nil {
		return err
	}
	def := onboardDefaults[a.Kind]
	if a.Name, err = ask("name of this provider", def.Name, func(v string) error {
		if !providerNameRE().MatchString(v) {
			return errors.New("use lowercase letters, digits, - and _ (like openai or work-claude)")
		}
		return nil
	}); err != nil {
		return err
	}
	if a.Kind != provider.KindMock {
		if a.BaseURL, err = ask("base URL", def.BaseURL, checkBaseURL); err != nil {
			return err
		}
		if a.KeyEnv, err = ask("NAME of the environment variable holding the key (not the key; empty: none)", def.KeyEnv, func(v string) error {
			if v == "" || envVarRE().MatchString(v) {
				return nil
			}
			// Never repeat what was typed: it may be a pasted key.
			return errors.New("that is not a variable name; claw never stores keys: type the NAME of the variable, like OPENAI_API_KEY, and export the key in it")
		}); err != nil {
			return err
		}
	}
	if a.Model, err = ask("model", def.Model, func(v string) error {
		if !modelRE().MatchString(v) {
			return errors.New("a model name is letters, digits and . _ : / @ + -")
		}
		return nil
	}); err != nil {
		return err
	}
	current := config.AutonomySupervised
	if existing != nil {
		if c, err := config.Parse(existing, path, home); err == nil {
			current = c.Security.Autonomy
		}
	}
	if a.Autonomy, err = ask("autonomy (readonly, supervised, full)", current, oneOf(config.Autonomies...)); err != nil {
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
	if yes, err := ask("write this to "+path+"? (y/n)", "y", oneOf("y", "n", "yes", "no")); err != nil {
		return err
	} else if !strings.HasPrefix(yes, "y") {
		return withCode(exitError, errOnboardCancelled)
	}

	if existing == nil {
		if err := onboardInit(g); err != nil {
			return err
		}
		if existing, err = os.ReadFile(path); err != nil {
			return withCode(exitError, fmt.Errorf("failed to read %s: %w", path, err))
		}
	}
	updated, err := applyOnboard(existing, a)
	if err != nil {
		return withCode(exitError, err)
	}
	if err := replaceConfig(path, home, updated, func(c *config.Config) error { return checkOnboarded(c, a) }); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", path)
	infof(g.stderr, "default provider is now %s; try it with 'claw provider test %s'", a.Name, a.Name)
	if a.KeyEnv != "" && os.Getenv(a.KeyEnv) == "" {
		warnf(g.stderr, "$%s is not set in this environment: export the key in it before 'claw agent'", a.KeyEnv)
	}
	return onboardPassphrase(g, ask, oneOf("y", "n", "yes", "no"))
}

// onboardPassphrase offers to set the passphrase that gates high-risk
// actions, with claw passphrase set (typed twice without echo). It needs
// standard input to be the terminal; otherwise it only says how.
func onboardPassphrase(g *globals, ask func(q, def string, check func(string) error) (string, error), yesNo func(string) error) error {
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

func checkBaseURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("a base URL is http:// or https:// with a host, like https://api.openai.com/v1")
	}
	if u.User != nil {
		return errors.New("no credentials in the URL: name the key's environment variable instead")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("a base URL has no query or fragment")
	}
	return nil
}

// onboardInit creates the claw home and the config file like claw init,
// with its messages on standard error.
func onboardInit(g *globals) error {
	sub := *g
	sub.stdout = g.stderr
	c := newInitCommand(&sub)
	c.SetArgs(nil)
	c.SetOut(g.stderr)
	c.SetErr(g.stderr)
	return c.RunE(c, nil)
}

// applyOnboard edits the config text: default_provider, default_model,
// security.autonomy and the [providers.NAME] keys. Comments and every
// other key are kept.
func applyOnboard(doc []byte, a onboardAnswers) ([]byte, error) {
	s := string(doc)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	s = setTOMLKey(s, "", "default_provider", a.Name)
	s = setTOMLKey(s, "", "default_model", a.Model)
	s = setTOMLKey(s, "security", "autonomy", a.Autonomy)
	table := "providers." + a.Name
	s = setTOMLKey(s, table, "kind", a.Kind)
	for _, kv := range [][2]string{{"base_url", a.BaseURL}, {"api_key_env", a.KeyEnv}, {"model", a.Model}} {
		if kv[1] == "" || a.Kind == provider.KindMock {
			s = deleteTOMLKey(s, table, kv[0])
			continue
		}
		s = setTOMLKey(s, table, kv[0], kv[1])
	}
	return []byte(s), nil
}

var tableHeaderRE = lazyRegexp(`^\s*\[\[?\s*([A-Za-z0-9_.\-" ]+?)\s*\]\]?\s*(#.*)?$`)

// tableBounds returns the line range [start, end) of table's keys in lines
// (start is the line after the header; for "" the top level), or -1.
func tableBounds(lines []string, table string) (start, end int) {
	start = -1
	if table == "" {
		start = 0
	}
	for i, l := range lines {
		m := tableHeaderRE().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if start >= 0 {
			return start, i
		}
		if strings.ReplaceAll(m[1], " ", "") == table {
			start = i + 1
		}
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(lines)
}

func keyLineRE(key string) *regexp.Regexp {
	return regexp.MustCompile(`^\s*` + regexp.QuoteMeta(key) + `\s*=`)
}

// setTOMLKey sets key = value (a string) in table, replacing the line that
// sets it, or adding one: after the table's header, before the first
// header for the top level, or in a new table at the end.
func setTOMLKey(doc, table, key, value string) string {
	line := key + " = " + tomlString(value)
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	if doc == "" {
		lines = nil
	}
	start, end := tableBounds(lines, table)
	if start < 0 {
		return strings.TrimRight(doc, "\n") + "\n\n[" + table + "]\n" + line + "\n"
	}
	re := keyLineRE(key)
	for i := start; i < end; i++ {
		if re.MatchString(lines[i]) {
			lines[i] = line
			return strings.Join(lines, "\n") + "\n"
		}
	}
	at := start
	if table == "" {
		at = end
		for at > 0 && strings.TrimSpace(lines[at-1]) == "" {
			at--
		}
	}
	lines = append(lines[:at], append([]string{line}, lines[at:]...)...)
	return strings.Join(lines, "\n") + "\n"
}

// deleteTOMLKey removes the line setting key in table, if any.
func deleteTOMLKey(doc, table, key string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	start, end := tableBounds(lines, table)
	if start < 0 {
		return doc
	}
	re := keyLineRE(key)
	for i := start; i < end; i++ {
		if re.MatchString(lines[i]) {
			lines = append(lines[:i], lines[i+1:]...)
			break
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// tomlString is v as a TOML basic string ("…"), escaping quotes,
// backslashes and control characters.
func tomlString(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkOnboarded reports whether c says what the person chose: the text
// edit is line-based, so its result is checked, not trusted.
func checkOnboarded(c *config.Config, a onboardAnswers) error {
	p, ok := c.Providers[a.Name]
	switch {
	case !ok:
		return fmt.Errorf("[providers.%s] is missing", a.Name)
	case c.DefaultProvider != a.Name, c.DefaultModel != a.Model, c.Security.Autonomy != a.Autonomy:
		return errors.New("default_provider, default_model or autonomy did not take the new value")
	case p.Kind != a.Kind:
		return fmt.Errorf("[providers.%s] kind did not take the new value", a.Name)
	case a.Kind != provider.KindMock && (p.BaseURL != a.BaseURL || p.APIKeyEnv != a.KeyEnv || p.Model != a.Model):
		return fmt.Errorf("[providers.%s] did not take the new values", a.Name)
	}
	return nil
}

// replaceConfig validates data as the config at path, checks it with
// verify, and then replaces the file atomically (a temporary file in the
// same directory, fsynced, renamed), keeping mode 0600. An invalid result
// is not written.
func replaceConfig(path, home string, data []byte, verify func(*config.Config) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".config-*.toml")
	if err != nil {
		return withCode(exitError, fmt.Errorf("failed to write %s: %w", path, err))
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err == nil {
		_, err = tmp.Write(data)
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
	} else {
		tmp.Close()
	}
	if err != nil {
		return withCode(exitError, fmt.Errorf("failed to write %s: %w", path, err))
	}
	c, err := config.Load(tmp.Name(), home)
	if err == nil {
		err = verify(c)
	}
	if err != nil {
		var errs *config.Errors
		if errors.As(err, &errs) && len(errs.List) > 0 {
			err = errs.List[0]
		}
		return withCode(exitError, fmt.Errorf("the updated config would be invalid, so %s was not changed: %v", path, err),
			"run 'claw config validate' and fix the file by hand")
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return withCode(exitError, fmt.Errorf("failed to replace %s: %w", path, err))
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
