package redact

import "strings"

// secretWords name a secret wherever they appear in an argument's name
// (lower case, without - and _); secretNames only as the whole name.
var (
	secretWords = []string{"secret", "token", "password", "passwd", "passphrase", "apikey", "accesskey", "privatekey", "credential", "authorization", "cookie"}
	secretNames = []string{"pass", "pwd", "auth"}
)

// SecretField reports whether the name of a field (a JSON key in a
// tool's arguments, an HTTP header) says its value is a secret: an
// Authorization or Cookie header, an api_key, a token, a password or
// passphrase. Such a value is hidden whole, whatever its form, since no
// pattern would recognise it. It is narrower than [SecretName], which
// judges environment variables (any name with KEY or AUTH in it): a
// field called "keyword" or "author" is something the person approving
// must still see.
func SecretField(name string) bool {
	k := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	for _, w := range secretNames {
		if k == w {
			return true
		}
	}
	return false
}
