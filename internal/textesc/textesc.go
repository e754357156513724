// Package textesc makes untrusted text safe to show to a person: control
// characters, bidi overrides and other invisible formatting are escaped, so
// an approval prompt or a report shows what will really run. The terminal
// prompts and the chat channels show arguments through it alike.
//
// It also cuts text to a bound in bytes without splitting a character
// ([Cut], [Prefix]), for every package that keeps or shows a bounded
// piece of text.
package textesc

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxArgs bounds the arguments line of an approval prompt, in bytes of
// escaped text. It is generous: what is cut is what the person does not
// see, and padding could push the end of a command out of view.
const MaxArgs = 2000

// String escapes s whole (see [Clip]).
func String(s string) string { return Clip(s, -1) }

// Clip escapes s, cut at max bytes of escaped text (no cut when max is
// negative). An escape is never split, and a cut text ends in "…".
// Escaped are tab and newline (\t, \n), the C0 and C1 controls and DEL
// (\xNN), bytes that are not UTF-8 (\xNN), and every other character that
// does not print: format characters (bidi overrides and isolates, zero
// widths), separators other than the ASCII space, private use, unassigned,
// default-ignorable code points and variation selectors (\uNNNN,
// \UNNNNNNNN).
func Clip(s string, max int) string {
	var b strings.Builder
	var esc []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		esc = esc[:0]
		switch {
		case r == utf8.RuneError && n == 1:
			esc = fmt.Appendf(esc, `\x%02x`, s[i])
		case r == '\t':
			esc = append(esc, `\t`...)
		case r == '\n':
			esc = append(esc, `\n`...)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			esc = fmt.Appendf(esc, `\x%02x`, r)
		case Invisible(r) && r <= 0xffff:
			esc = fmt.Appendf(esc, `\u%04x`, r)
		case Invisible(r):
			esc = fmt.Appendf(esc, `\U%08x`, r)
		default:
			esc = utf8.AppendRune(esc, r)
		}
		if max >= 0 && b.Len()+len(esc) > max {
			b.WriteString("…")
			break
		}
		b.Write(esc)
		i += n
	}
	return b.String()
}

// Invisible reports whether r shows as something other than itself, or as
// nothing: everything but letters, marks, numbers, punctuation, symbols
// and the ASCII space, and the default-ignorable code points among those
// (Hangul fillers, variation selectors).
func Invisible(r rune) bool {
	return !unicode.IsPrint(r) || unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// Args renders the arguments of an approval request (the broker's compact
// JSON, secrets redacted; or its summary when it has none) for a person:
// escaped and cut at [MaxArgs], saying how many escaped bytes were left
// out.
func Args(s string) string {
	full := String(s)
	if len(full) <= MaxArgs {
		return full
	}
	cut := Clip(s, MaxArgs)
	return fmt.Sprintf("%s (%d more bytes not shown)", cut, len(full)-len(strings.TrimSuffix(cut, "…")))
}
