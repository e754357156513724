package config

import (
	"regexp"
	"strings"
	"testing"
)

// discordIDRe is a Discord id (a snowflake: no leading zero), as the
// fuzz tests check what the config accepts.
var discordIDRe = regexp.MustCompile(`^[1-9][0-9]{0,19}$`)

// The regular expressions the shapes stand for: the oracle of the shapes'
// tests. Each pair must agree on every string.
var shapeOracles = []struct {
	name  string
	match func(string) bool
	re    *regexp.Regexp
}{
	{"label", labelShape.MatchString, regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)},
	{"command", commandShape.MatchString, regexp.MustCompile(`^[A-Za-z0-9._+-][A-Za-z0-9._+@:-]*$`)},
	{"provider", providerShape.MatchString, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)},
	{"env name", envNameShape.MatchString, regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)},
	{"header", headerShape.MatchString, regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")},
	{"discord id", discordShape.MatchString, discordIDRe},
	{"session", sessionShape.MatchString, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)},
	{"approver", approverShape.MatchString, regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,64}$`)},
	{"run_as", runAsName, regexp.MustCompile(`^([a-z_][a-z0-9_-]{0,30}\$?|[0-9]{1,10})$`)},
	{"size", func(v string) bool { _, _, ok := splitSize(v); return ok }, regexp.MustCompile(`^([0-9]{1,19})([KMGT]?)$`)},
}

// shapeSeeds are strings at the edges of every shape: each byte alone
// and between valid ones, and valid runs one short of, at and one past
// each length bound.
func shapeSeeds() []string {
	var out []string
	for b := 0; b < 256; b++ {
		c := string([]byte{byte(b)})
		out = append(out, c, "a"+c, c+"a", "a"+c+"a", "1"+c, c+"1", "1"+c+"1", "a"+c+"$", "1"+c+"K")
	}
	for _, n := range []int{0, 1, 2, 9, 10, 11, 18, 19, 20, 21, 30, 31, 32, 33, 61, 62, 63, 64, 65, 127, 128, 129} {
		for _, unit := range []string{"a", "1", "A", "_", "-", "."} {
			s := strings.Repeat(unit, n)
			out = append(out, s, s+"$", s+"K", "a"+s, "a"+s+"a", "a"+s+"-", "1"+s, "1"+s+"$")
		}
	}
	return append(out, "nobody", "nobody$", "nobody$$", "$", "0", "01", "512M", "1G", "K", "1KB", "é", "a\n", "a\x00", "\xffa")
}

func checkShapes(t *testing.T, s string) {
	t.Helper()
	for _, o := range shapeOracles {
		if got, want := o.match(s), o.re.MatchString(s); got != want {
			t.Errorf("%s(%q) = %v, the regular expression says %v", o.name, s, got, want)
		}
	}
}

// Each shape accepts exactly what its regular expression accepts.
func TestShapesMatchTheirExpressions(t *testing.T) {
	for _, s := range shapeSeeds() {
		checkShapes(t, s)
	}
}

func FuzzShapes(f *testing.F) {
	for _, s := range shapeSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkShapes(t, s) })
}
