package config

import "strings"

// shape is a pattern ^[first][rest]*$ over ASCII, with the last byte
// (when there are two or more) from last if it is set, and the length in
// [min, max] bytes (max 0: no bound). It is checked byte by byte: the
// validation of every config load compiled about ten regular expressions
// for patterns of this form, 0.3 ms of each claw process that reads a
// config (a hook call through claw serve among them). shape_test.go holds
// each shape to the regular expression it stands for.
type shape struct {
	first, rest, last charset
	min, max          int
}

// MatchString reports whether s has the shape.
func (p shape) MatchString(s string) bool {
	n := len(s)
	if n < p.min || (p.max > 0 && n > p.max) || n == 0 {
		return false
	}
	if !p.first.has(s[0]) {
		return false
	}
	end := n
	if n > 1 && p.last != (charset{}) {
		if !p.last.has(s[n-1]) {
			return false
		}
		end = n - 1
	}
	for i := 1; i < end; i++ {
		if !p.rest.has(s[i]) {
			return false
		}
	}
	return true
}

// charset is a set of ASCII bytes.
type charset [2]uint64

func (c charset) has(b byte) bool { return b < 128 && c[b/64]&(1<<(b%64)) != 0 }

// chars is the set a bracket expression's contents name: single bytes and
// ranges like a-z; a '-' first or last is itself.
func chars(spec string) charset {
	var c charset
	for i := 0; i < len(spec); i++ {
		lo, hi := spec[i], spec[i]
		if i+2 < len(spec) && spec[i+1] == '-' {
			hi = spec[i+2]
			i += 2
		}
		for b := lo; b <= hi && b < 128; b++ {
			c[b/64] |= 1 << (b % 64)
		}
	}
	return c
}

// Shapes of names and ids in the config. ruleIDRe, with its dotted
// segments, stays a regular expression; it is only compiled for a
// passphrase_for entry that is not a risk level.
var (
	labelShape    = shape{first: chars("a-z0-9"), rest: chars("a-z0-9-"), last: chars("a-z0-9"), min: 1, max: 63}
	commandShape  = shape{first: chars("A-Za-z0-9._+-"), rest: chars("A-Za-z0-9._+@:-"), min: 1}
	providerShape = shape{first: chars("A-Za-z0-9"), rest: chars("A-Za-z0-9_-"), min: 1, max: 63}
	envNameShape  = shape{first: chars("A-Za-z_"), rest: chars("A-Za-z0-9_"), min: 1, max: 128}
	headerShape   = shape{first: chars(headerChars), rest: chars(headerChars), min: 1, max: 128}
	discordShape  = shape{first: chars("1-9"), rest: chars("0-9"), min: 1, max: 20} // a snowflake: no leading zero
	sessionShape  = shape{first: chars("A-Za-z0-9"), rest: chars("A-Za-z0-9._:-"), min: 1, max: 128}
	approverShape = shape{first: chars("A-Za-z0-9._:@-"), rest: chars("A-Za-z0-9._:@-"), min: 1, max: 64}
	userShape     = shape{first: chars("a-z_"), rest: chars("a-z0-9_-"), min: 1, max: 31}
	uidShape      = shape{first: chars("0-9"), rest: chars("0-9"), min: 1, max: 10}
	digitsShape   = shape{first: chars("0-9"), rest: chars("0-9"), min: 1, max: 19}
)

// headerChars are the bytes of an HTTP header name (RFC 9110 token).
const headerChars = "!#$%&'*+.^_`|~0-9A-Za-z-"

// runAsName reports whether v names a run_as user: a user name (with
// the trailing $ of a machine account allowed) or a numeric uid.
func runAsName(v string) bool {
	return uidShape.MatchString(v) || userShape.MatchString(strings.TrimSuffix(v, "$"))
}

// splitSize splits a size like 512M into its digits and its unit (K, M,
// G, T or none); ok is false when v is not of that form.
func splitSize(v string) (digits, unit string, ok bool) {
	digits = v
	if n := len(v); n > 0 && strings.IndexByte("KMGT", v[n-1]) >= 0 {
		digits, unit = v[:n-1], v[n-1:]
	}
	return digits, unit, digitsShape.MatchString(digits)
}
