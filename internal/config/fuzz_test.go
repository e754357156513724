package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawsec/claw/internal/redact"
)

// FuzzParse checks that Parse never panics and that every error it reports
// has a position inside the document.
func FuzzParse(f *testing.F) {
	f.Add(Template())
	files, err := filepath.Glob(filepath.Join("testdata", "*.toml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"", "=", "[", "[[a]]\n[[a]]\nb = 1", "a.b.c = {d = [1, [2, {e = 3}]]}",
		"security = {forbidden_paths = [\"x\", 1]}", "\"quoted.key\" = 1", "x = 1979-05-27T07:32:00Z",
		"[security]\nallowed_domains = [[\"a\"]]", "sandbox.http_ports = [1, 2.5, \"x\"]",
		"[channels.discord]\n[channels.bridge]\nlisten = \"127.0.0.1:0\"\nsessions = [\"s1\"]\nsources = { s1 = \"discord:2\" }",
		"[channels.bridge]\nlisten = \"127.0.0.1:0\"\nsessions = [\"s1\"]\n[channels.bridge.sources]\ns1 = \"discord:0\"",
		"[delegate.external.c]\ncommand = [\"claude\", \"-p\"]\nsettings_flag = \"--settings\"\nhosts = [\"a:1\"]\nsecrets = [\"K\"]\nenv = [\"A=b\"]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.toml", "/h")
		if err != nil {
			var errs *Errors
			if !errors.As(err, &errs) || len(errs.List) == 0 {
				t.Fatalf("Parse error is not a non-empty *Errors: %T %v", err, err)
			}
			lines := strings.Count(string(data), "\n") + 1
			for _, e := range errs.List {
				if e.Line < 1 || e.Col < 1 || e.Line > lines {
					t.Fatalf("error without a valid position (%d lines): %+v", lines, e)
				}
				if e.File != "f.toml" || e.Msg == "" {
					t.Fatalf("malformed error: %+v", e)
				}
			}
			return
		}
		// a bridge source that parses names a listed session and a
		// Discord channel of a [channels.discord] that is there
		for sess, src := range c.Channels[ChannelBridge].Sources {
			_, discord := c.Channels[ChannelDiscord]
			id, ok := strings.CutPrefix(src, "discord:")
			if !slices.Contains(c.Channels[ChannelBridge].Sessions, sess) || !ok || !discordIDRe.MatchString(id) || !discord {
				t.Fatalf("source %q = %q accepted", sess, src)
			}
		}
		if err := c.Expand(testEnv); err != nil {
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Expand error is not *Errors: %T %v", err, err)
			}
			for _, e := range errs.List {
				if e.Line < 1 && !strings.HasSuffix(e.Msg, "(default value)") {
					t.Fatalf("Expand error without a position: %+v", e)
				}
			}
		}
		m := c.Masked()
		if err := m.WriteTOML(discard{}); err != nil {
			t.Fatalf("WriteTOML: %v", err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzCredentialHeader checks that every header name redact.SecretField
// hides is refused in a provider's headers, and that the classifier sees
// through case and separators.
func FuzzCredentialHeader(f *testing.F) {
	for _, s := range []string{
		"authorization", "Proxy-Authorization", "x-api-key", "api-key", "Cookie", "X-Auth-Token",
		"anthropic-version", "openai-organization", "x-request-id", "user-agent", "accept",
		"pass", "p_w_d", "\u212aey", "\xff", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := credentialHeader(name)
		if redact.SecretField(name) && !got {
			t.Fatalf("redact.SecretField(%q) but credentialHeader is false", name)
		}
		for _, v := range []string{strings.ToUpper(name), strings.ReplaceAll(name, "-", "_"), strings.ReplaceAll(name, "_", "-")} {
			if got && !credentialHeader(v) {
				t.Fatalf("credentialHeader(%q) but not %q", name, v)
			}
		}
	})
}

// FuzzEnvNames checks EnvNames on any text: sorted, once each, variable
// names only, HOME and CLAW_HOME always; and on a config whose paths are
// written as the fuzzer's text in literal strings (no escapes), that
// every variable the config's expansion asks for is listed, as the hook's
// source id needs.
func FuzzEnvNames(f *testing.F) {
	f.Add(Template(), "$A/${B}/x")
	f.Add([]byte("# $NOT\nx = '$YES' # $ALSO\n"), "$$X$Y")
	f.Add([]byte("a = \"\\u0024X\""), "~/${_a1}$b")
	f.Add([]byte("$"), "${")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		names := EnvNames(data)
		if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
			t.Fatalf("EnvNames(%q) = %q: not sorted once each", data, names)
		}
		for _, n := range names {
			if !isVarName(n) {
				t.Fatalf("EnvNames(%q) lists %q, not a variable name", data, n)
			}
		}
		if !slices.Contains(names, "HOME") || !slices.Contains(names, "CLAW_HOME") {
			t.Fatalf("EnvNames(%q) = %q: HOME or CLAW_HOME missing", data, names)
		}
		if strings.ContainsAny(path, "'\n\r") {
			return
		}
		doc := []byte("workspace_dir = '" + path + "'\n[security]\nread_paths = ['" + path + "']\n")
		asked := map[string]bool{}
		_, _ = FromSource(doc, "config.toml", "/h/.claw", func(k string) string {
			asked[k] = true
			return "/v"
		})
		names = EnvNames(doc)
		for k := range asked {
			if !slices.Contains(names, k) {
				t.Fatalf("the config %q uses $%s; EnvNames lists %q", doc, k, names)
			}
		}
	})
}
