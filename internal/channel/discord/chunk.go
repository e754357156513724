package discord

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxChunk is the most a reply message holds, in UTF-16 code units (how
// Discord counts its 2,000 characters, and never fewer than code points),
// with room to spare.
const MaxChunk = 1990

// fence is the code fence a chunk closes and the next one reopens.
const fence = "```"

// split cuts text into messages of at most limit UTF-16 units each, on
// line boundaries where it can (a longer line is cut at its last space,
// else anywhere between characters). A code block cut in two is closed at
// the end of one message and reopened, with its language, at the start of
// the next, so each message renders on its own. Blank messages are left
// out.
func split(text string, limit int) []string {
	var (
		out     []string
		cur     strings.Builder
		curLen  int
		opener  string // the fence line of the open code block, "" outside one
		reserve = units("\n" + fence)
	)
	flush := func() {
		s := cur.String()
		if opener != "" {
			s += "\n" + fence
		}
		if strings.TrimSpace(stripFences(s)) != "" {
			out = append(out, s)
		}
		cur.Reset()
		curLen = 0
		if opener != "" {
			cur.WriteString(opener)
			curLen = units(opener)
		}
	}
	add := func(line string) {
		if curLen > 0 {
			cur.WriteByte('\n')
			curLen++
		}
		cur.WriteString(line)
		curLen += units(line)
	}
	room := func() int {
		r := limit - curLen
		if curLen > 0 {
			r-- // the newline before the line
		}
		return r - reserve // always room to close a fence
	}
	for _, line := range strings.Split(text, "\n") {
		isFence := strings.HasPrefix(strings.TrimLeft(line, " "), fence)
		for units(line) > room() {
			if curLen > units(opener) {
				flush()
				continue
			}
			// a line longer than a message: cut it
			head, rest := cutUnits(line, room())
			add(head)
			flush()
			line = rest
		}
		add(line)
		if isFence {
			if opener == "" {
				opener = strings.TrimLeft(line, " ")
				if units(opener) > limit/4 {
					opener = fence // an absurd info string is not repeated
				}
			} else {
				opener = ""
			}
		}
	}
	opener = "" // a block the text leaves open stays as the text wrote it
	flush()
	return out
}

// cutUnits splits s after at most n UTF-16 units, at the last space if
// there is one in the second half, and never inside a character.
func cutUnits(s string, n int) (head, rest string) {
	n = max(n, 1)
	i, u := 0, 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		ru := utf16.RuneLen(r)
		if ru < 0 {
			ru = 1
		}
		if u+ru > n {
			break
		}
		u += ru
		i += size
	}
	if i == 0 { // n is smaller than one character: take it anyway
		_, i = utf8.DecodeRuneInString(s)
	}
	if sp := strings.LastIndexByte(s[:i], ' '); sp > i/2 && i < len(s) {
		i = sp + 1
	}
	return s[:i], s[i:]
}

// units is the length of s in UTF-16 code units.
func units(s string) int {
	n := 0
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += l
		} else {
			n++
		}
	}
	return n
}

// stripFences removes the fence lines of s.
func stripFences(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), fence) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
