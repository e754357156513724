package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/clawsec/claw/internal/atomicfile"

	"github.com/clawsec/claw/agent/provider"
	"github.com/clawsec/claw/internal/config"
)

// OnboardAnswers is what the person chose in claw onboard.
type OnboardAnswers struct {
	Kind, Name, BaseURL, KeyEnv, Model, Autonomy string
}

var (
	providerNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`) })
	envVarRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`) })
	modelRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$`) })
)

// OnboardKinds are the provider kinds claw onboard offers, the first
// the suggested one.
var OnboardKinds = []string{provider.KindMock, provider.KindOpenAI, provider.KindAnthropic}

// OnboardRemote reports whether a provider of kind is reached over the
// network, with a base URL and a key.
func OnboardRemote(kind string) bool { return kind != provider.KindMock }

// OnboardDefaults are the suggested answers for each provider kind.
var OnboardDefaults = map[string]OnboardAnswers{
	provider.KindMock:      {Name: "local", Model: "mock"},
	provider.KindOpenAI:    {Name: "openai", BaseURL: provider.DefaultOpenAIBaseURL, KeyEnv: "OPENAI_API_KEY", Model: "gpt-4.1"},
	provider.KindAnthropic: {Name: "claude", BaseURL: provider.DefaultAnthropicBaseURL, KeyEnv: "ANTHROPIC_API_KEY", Model: "claude-sonnet-4-5"},
}

// CheckProviderName checks the name of a new provider.
func CheckProviderName(v string) error {
	if !providerNameRE().MatchString(v) {
		return errors.New("use lowercase letters, digits, - and _ (like openai or work-claude)")
	}
	return nil
}

// CheckKeyEnv checks the name of the environment variable that holds a
// provider key; empty means none. The error never repeats v: it may be a
// pasted key.
func CheckKeyEnv(v string) error {
	if v == "" || envVarRE().MatchString(v) {
		return nil
	}
	return errors.New("that is not a variable name; claw never stores keys: type the NAME of the variable, like OPENAI_API_KEY, and export the key in it")
}

// CheckModel checks a model name.
func CheckModel(v string) error {
	if !modelRE().MatchString(v) {
		return errors.New("a model name is letters, digits and . _ : / @ + -")
	}
	return nil
}

// CheckBaseURL checks a provider base URL: http or https with a host, no
// credentials, query or fragment.
func CheckBaseURL(v string) error {
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

// ApplyOnboard edits the config text: default_provider, default_model,
// security.autonomy and the [providers.NAME] keys. Comments and every
// other key are kept.
func ApplyOnboard(doc []byte, a OnboardAnswers) ([]byte, error) {
	s := string(doc)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	s = SetTOMLKey(s, "", "default_provider", a.Name)
	s = SetTOMLKey(s, "", "default_model", a.Model)
	s = SetTOMLKey(s, "security", "autonomy", a.Autonomy)
	table := "providers." + a.Name
	s = SetTOMLKey(s, table, "kind", a.Kind)
	for _, kv := range [][2]string{{"base_url", a.BaseURL}, {"api_key_env", a.KeyEnv}, {"model", a.Model}} {
		if kv[1] == "" || a.Kind == provider.KindMock {
			s = deleteTOMLKey(s, table, kv[0])
			continue
		}
		s = SetTOMLKey(s, table, kv[0], kv[1])
	}
	return []byte(s), nil
}

var tableHeaderRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_.\-" ]+?)\s*\]\]?\s*(#.*)?$`)
})

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

// SetTOMLKey sets key = value (a string) in table, replacing the line that
// sets it, or adding one: after the table's header, before the first
// header for the top level, or in a new table at the end.
func SetTOMLKey(doc, table, key, value string) string {
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

// CheckOnboarded reports whether c says what the person chose: the text
// edit is line-based, so its result is checked, not trusted.
func CheckOnboarded(c *config.Config, a OnboardAnswers) error {
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

// EditError is a config edit that was not written because the result
// would have been wrong; the file is unchanged. Misplaced means the edit
// did not land where it had to (a hand-made layout the line-based edit
// cannot follow), rather than making the config invalid.
type EditError struct {
	Err       error
	Misplaced bool
}

func (e *EditError) Error() string { return e.Err.Error() }
func (e *EditError) Unwrap() error { return e.Err }

// ReplaceConfig validates data as the config at path, checks it with
// verify, and then replaces the file atomically (a temporary file in the
// same directory, fsynced, renamed), keeping mode 0600. An invalid result
// is not written: the error is an *EditError.
func ReplaceConfig(path, home string, data []byte, verify func(*config.Config) error) error {
	err := atomicfile.WriteFileCheck(path, data, 0o600, func(tmp string) error {
		c, err := config.Load(tmp, home)
		if err == nil {
			err = verify(c)
		}
		return err
	})
	var bad *atomicfile.CheckError
	switch {
	case errors.As(err, &bad):
		err = bad.Err
		var errs *config.Errors
		if errors.As(err, &errs) && len(errs.List) > 0 {
			err = errs.List[0]
		}
		return &EditError{Err: fmt.Errorf("the updated config would be invalid, so %s was not changed: %v", path, err)}
	case err != nil:
		return fmt.Errorf("failed to replace %s: %w", path, err)
	}
	return nil
}

// OnboardConfig reads the config file at path for claw onboard: its bytes
// (nil when there is none) and the autonomy it sets (supervised when
// there is no file, or it does not parse).
func OnboardConfig(home, path string) (existing []byte, autonomy string, err error) {
	autonomy = config.AutonomySupervised
	existing, err = os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, autonomy, nil
	case err != nil:
		return nil, "", WithCode(ExitError, fmt.Errorf("failed to read %s: %w", path, err))
	}
	if c, err := config.Parse(existing, path, home); err == nil {
		autonomy = c.Security.Autonomy
	}
	return existing, autonomy, nil
}

// WriteOnboard writes the answers a into the config file at path, whose
// bytes are existing; when there is none (nil), init first creates the
// claw home and the file like claw init. The result is validated and
// checked before it replaces the file.
func WriteOnboard(home, path string, existing []byte, a OnboardAnswers, init func() error) error {
	if existing == nil {
		if err := init(); err != nil {
			return err
		}
		var err error
		if existing, err = os.ReadFile(path); err != nil {
			return WithCode(ExitError, fmt.Errorf("failed to read %s: %w", path, err))
		}
	}
	updated, err := ApplyOnboard(existing, a)
	if err != nil {
		return WithCode(ExitError, err)
	}
	err = ReplaceConfig(path, home, updated, func(c *config.Config) error { return CheckOnboarded(c, a) })
	if ee := (*EditError)(nil); errors.As(err, &ee) {
		return WithCode(ExitError, err, "run 'claw config validate' and fix the file by hand")
	}
	return err
}

// OnboardAsk asks one question of claw onboard: def is taken for an empty
// answer, and an answer check refuses is asked again.
type OnboardAsk func(question, def string, check func(string) error) (string, error)

// OneOf accepts only the answers opts.
func OneOf(opts ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(opts, v) {
			return nil
		}
		return fmt.Errorf("choose one of: %s", strings.Join(opts, ", "))
	}
}

// AskOnboard asks the questions of claw onboard with ask: the provider's
// kind and name, for a remote one its base URL and the variable holding
// its key, the model, and the autonomy (autonomy by default).
func AskOnboard(ask OnboardAsk, autonomy string) (OnboardAnswers, error) {
	var a OnboardAnswers
	var err error
	if a.Kind, err = ask("provider kind ("+strings.Join(OnboardKinds, ", ")+")", OnboardKinds[0], OneOf(OnboardKinds...)); err != nil {
		return a, err
	}
	def := OnboardDefaults[a.Kind]
	if a.Name, err = ask("name of this provider", def.Name, CheckProviderName); err != nil {
		return a, err
	}
	if OnboardRemote(a.Kind) {
		if a.BaseURL, err = ask("base URL", def.BaseURL, CheckBaseURL); err != nil {
			return a, err
		}
		if a.KeyEnv, err = ask("NAME of the environment variable holding the key (not the key; empty: none)", def.KeyEnv, CheckKeyEnv); err != nil {
			return a, err
		}
	}
	if a.Model, err = ask("model", def.Model, CheckModel); err != nil {
		return a, err
	}
	a.Autonomy, err = ask("autonomy (readonly, supervised, full)", autonomy, OneOf(config.Autonomies...))
	return a, err
}
