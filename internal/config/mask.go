package config

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/clawsec/claw/internal/textesc"
	"github.com/pelletier/go-toml/v2"
)

// Mask replaces a secret value in [Config.Masked] output.
const Mask = "********"

// Masked returns a deep copy of c in which secrets are replaced by [Mask]:
// passphrase_hash, any key named like a secret (token, password, …) and
// any provider header named like a credential (Authorization, api-key, …)
// when non-empty, and any string value that looks like a credential (a
// provider API key, a cloud access key, a JWT, a PEM block).
func (c *Config) Masked() *Config {
	m := *c
	maskValue("", reflect.ValueOf(&m).Elem())
	return &m
}

func maskValue(path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == durationType {
			return
		}
		for name, i := range tomlFields(v.Type()) {
			maskValue(joinKey(path, name), v.Field(i))
		}
	case reflect.String:
		if s := v.String(); s != "" && (secretKey(path) || looksSecret(s)) {
			v.SetString(Mask)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		// Validation refuses credential headers; an old config that was
		// accepted before must still not print one.
		headers := leafKey(path) == "headers"
		cp := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			k := iter.Key().String()
			maskValue(joinKey(path, k), e)
			if headers && e.Kind() == reflect.String && e.String() != "" && credentialHeader(k) {
				e.SetString(Mask)
			}
			cp.SetMapIndex(iter.Key(), e)
		}
		v.Set(cp)
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		cp := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(cp, v)
		v.Set(cp)
		for i := range v.Len() {
			maskValue(path, v.Index(i))
		}
	}
}

// leafKey is the last key of a dotted path, without an index.
func leafKey(path string) string {
	leaf := path
	if i := strings.LastIndexByte(leaf, '.'); i >= 0 {
		leaf = leaf[i+1:]
	}
	if i := strings.IndexByte(leaf, '['); i >= 0 {
		leaf = leaf[:i]
	}
	return leaf
}

// secretKey reports whether a key path names a secret.
func secretKey(path string) bool {
	leaf := strings.ToLower(leafKey(path))
	if leaf == "passphrase" {
		return true
	}
	// A key naming a file or a variable holds where the secret is, not
	// the secret (token_file, api_key_env); its value is still masked
	// when it looks like a credential.
	if strings.HasSuffix(leaf, "_file") || strings.HasSuffix(leaf, "_env") {
		return false
	}
	for _, w := range []string{"passphrase_hash", "password", "passwd", "secret", "token", "api_key", "apikey", "private_key", "credential"} {
		if strings.Contains(leaf, w) {
			return true
		}
	}
	return false
}

// Words that make an HTTP header name a credential: anywhere in the name
// (headerSecretWords) or as the whole name (headerSecretNames), compared
// in lower case with everything but letters and digits removed. They are
// wider than the field names redact.SecretField hides (a test holds that
// every name it flags is refused here): a provider header is sent with
// every request, and the key has its own place, api_key_env.
var (
	headerSecretWords = []string{
		"auth", "token", "secret", "key", "password", "passwd", "passphrase",
		"credential", "cookie", "session",
	}
	headerSecretNames = []string{"pass", "pwd"}
)

// credentialHeader reports whether a header called name may carry a
// credential: Authorization, Proxy-Authorization, X-Api-Key, Api-Key,
// Cookie, and any name containing auth, token, secret, key, password,
// credential, cookie or session, in any case and with any separators.
// Anthropic-Version, OpenAI-Organization, X-Request-Id, User-Agent and
// Accept are not.
func credentialHeader(name string) bool {
	k := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.ToLower(name))
	for _, w := range headerSecretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return slices.Contains(headerSecretNames, k)
}

// secretPrefixes start well-known credential formats.
var secretPrefixes = []string{
	"sk-", "sk_live_", "sk_test_", "rk_live_", "pk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
	"github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "xapp-", "hf_", "npm_", "pypi-",
	"AKIA", "ASIA", "AIza", "ya29.", "eyJ", "-----BEGIN", "$argon2", "$2a$", "$2b$", "$scrypt$",
}

// looksSecret reports whether a value looks like a credential: a known
// prefix followed by enough characters, or a long string with the character
// mix and entropy of a random token.
func looksSecret(s string) bool {
	for _, p := range secretPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+8 {
			return true
		}
	}
	if len(s) < 32 || strings.ContainsAny(s[:1], "/~$.") {
		return false
	}
	var upper, lower, digit bool
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.IndexByte("-_+/=.", c) >= 0:
		default:
			return false
		}
	}
	return upper && lower && digit && entropy(s) >= 4.5
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	h := 0.0
	for _, k := range n {
		if k > 0 {
			p := float64(k) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// show quotes a value for an error message, or hides it when it is (or
// looks like) a secret.
func show(path, v string) string {
	if secretKey(path) || looksSecret(v) {
		return "(value hidden)"
	}
	return strconv.Quote(textesc.Cut(v, 80+len("…"), "…"))
}

// WriteTOML writes c as a TOML document, tables in the order of the
// struct. Call it on [Config.Masked] to print a config.
func (c *Config) WriteTOML(w io.Writer) error {
	out := c
	if c.expanded {
		// Expanded paths are literal: escape "$" so that the output,
		// loaded again, means the same.
		cp := *c
		esc := func(s string) string { return strings.ReplaceAll(s, "$", "$$") }
		cp.WorkspaceDir, cp.Receipts.Dir, cp.Receipts.Key = esc(c.WorkspaceDir), esc(c.Receipts.Dir), esc(c.Receipts.Key)
		cp.Security.ForbiddenPaths = escAll(c.Security.ForbiddenPaths, esc)
		cp.Security.ReadPaths = escAll(c.Security.ReadPaths, esc)
		out = &cp
	}
	enc := toml.NewEncoder(w)
	enc.SetIndentTables(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("failed to encode config: %w", err)
	}
	return nil
}

// scrub hides the words of a message that look like secrets.
func scrub(msg string) string {
	words := strings.Fields(msg)
	changed := false
	for i, w := range words {
		if looksSecret(strings.Trim(w, "\"'`,.:;()[]{}")) {
			words[i], changed = "(value hidden)", true
		}
	}
	if !changed {
		return msg
	}
	return strings.Join(words, " ")
}

func escAll(vs []string, esc func(string) string) []string {
	if vs == nil {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = esc(v)
	}
	return out
}
