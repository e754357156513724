package textesc

import "unicode/utf8"

// Cut bounds s to n bytes: s itself when it fits, otherwise the longest
// prefix that leaves room for mark, then mark (mark alone when n is
// smaller than mark). The cut never splits a UTF-8 character (see
// [Prefix]). Every place that shortens text for a receipt, a prompt, a
// message or the memory cuts through it, each with its own limit and mark.
func Cut(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n-len(mark)) + mark
}

// Prefix returns the longest prefix of s of at most n bytes (none when n
// is not positive) that does not end inside a UTF-8 character. Bytes that
// are not UTF-8 are single characters here: a cut may fall after any of
// them.
func Prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	// The only character that can straddle the cut starts at the last
	// character start before it, at most UTFMax-1 bytes back.
	for i := n - 1; i >= 0 && i > n-utf8.UTFMax; i-- {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		if r, size := utf8.DecodeRuneInString(s[i:]); i+size > n && !(r == utf8.RuneError && size == 1) {
			return s[:i]
		}
		break
	}
	return s[:n]
}
