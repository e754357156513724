package textesc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	cases := []struct {
		name, s, mark string
		n             int
		want          string
	}{
		{name: "fits", s: "abc", n: 3, mark: "…", want: "abc"},
		{name: "ascii", s: "abcdefgh", n: 6, mark: "…", want: "abc…"},
		{name: "no mark", s: "abcdefgh", n: 3, want: "abc"},
		{name: "inside a two-byte character", s: "aéé", n: 2, want: "a"},
		{name: "after a two-byte character", s: "aéé", n: 3, want: "aé"},
		{name: "inside a four-byte character", s: "a😀b", n: 4, want: "a"},
		{name: "after a four-byte character", s: "a😀b", n: 5, want: "a😀"},
		{name: "mark longer than the limit", s: "abcdef", n: 2, mark: "[cut]", want: "[cut]"},
		{name: "stray continuation bytes", s: "\x80\x80\x80\x80\x80\x80", n: 4, want: "\x80\x80\x80\x80"},
		{name: "truncated sequence before the cut", s: "ab\xe2\x82xyz", n: 4, want: "ab\xe2\x82"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Cut(c.s, c.n, c.mark); got != c.want {
				t.Errorf("Cut(%q, %d, %q) = %q, want %q", c.s, c.n, c.mark, got, c.want)
			}
		})
	}
}

// FuzzCut checks what every caller relies on: the result fits, is s when
// s fits, keeps a prefix of s as long as possible, and splits no
// character of s.
func FuzzCut(f *testing.F) {
	f.Add("héllo wörld", 5, "…")
	f.Add("😀😀😀", 5, "")
	f.Add("\xf0\x9f\x98", 2, "[cut]")
	f.Add("a\x80\x80\x80\x80b", 3, "…")
	f.Fuzz(func(t *testing.T, s string, n int, mark string) {
		n = n % 64
		got := Cut(s, n, mark)
		if len(s) <= n {
			if got != s {
				t.Fatalf("Cut(%q, %d) = %q, want s whole", s, n, got)
			}
			return
		}
		kept, ok := strings.CutSuffix(got, mark)
		if !ok || !strings.HasPrefix(s, kept) {
			t.Fatalf("Cut(%q, %d, %q) = %q: not a prefix of s and the mark", s, n, mark, got)
		}
		if len(got) > max(n, len(mark)) {
			t.Fatalf("Cut(%q, %d, %q) = %q: %d bytes", s, n, mark, got, len(got))
		}
		if room := n - len(mark); room > 0 && len(kept) <= room-utf8.UTFMax {
			t.Fatalf("Cut(%q, %d, %q) kept %d bytes of %d possible", s, n, mark, len(kept), room)
		}
		// Every character of the prefix is a whole character of s.
		for i := 0; i < len(kept); {
			r, size := utf8.DecodeRuneInString(kept[i:])
			rs, sizes := utf8.DecodeRuneInString(s[i:])
			if r != rs || size != sizes {
				t.Fatalf("Cut(%q, %d, %q) = %q splits the character at byte %d", s, n, mark, got, i)
			}
			i += size
		}
	})
}
