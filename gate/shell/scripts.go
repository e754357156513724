package shell

import (
	"strings"
)

// sedScript looks through a sed program for the commands that run programs
// (e, s///e) or touch files (w, W, s///w, r, R).
func (b *build) sedScript(s string) {
	scanSed(s, func(kind, arg string) {
		switch kind {
		case "e":
			b.mark(MarkExecFlag, "sed e")
			if arg != "" {
				b.lenientString(field{val: arg}, "sed e")
			}
		case "s///e":
			b.mark(MarkExecFlag, "sed s///e")
		case "w":
			if arg != "/dev/stdout" && arg != "/dev/stderr" {
				b.mark(MarkExecFlag, "sed w")
				b.write(field{val: arg})
			}
		case "r":
			b.path(field{val: arg})
		}
	})
}

// scanSed walks a GNU sed script and reports e, s///e, w and r commands.
// It stops at anything it does not understand.
func scanSed(s string, on func(kind, arg string)) {
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		out := s[i : i+j]
		i += j
		return strings.TrimSpace(out)
	}
	skipBlank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited skips a /regex/-style part starting after its delimiter.
	delimited := func(d byte) bool {
		for i < len(s) {
			c := s[i]
			i++
			if c == '\\' {
				i++
				continue
			}
			if c == d {
				return true
			}
		}
		return false
	}
	for n := 0; i < len(s) && n < 10000; n++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', ';', '}':
			i++
			continue
		case '#':
			restOfLine()
			continue
		}
		// addresses: 1, $, /re/, \cREc, first~step, a,b, +N, ~N, then !
		for i < len(s) {
			c = s[i]
			switch {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+':
				i++
			case c == '/':
				i++
				if !delimited('/') {
					return
				}
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case c == '\\' && i+1 < len(s):
				d := s[i+1]
				i += 2
				if !delimited(d) {
					return
				}
			case c == ' ' || c == '\t' || c == '!':
				i++
			default:
				goto cmd
			}
		}
		return
	cmd:
		i++
		switch c {
		case '{', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			skipBlank()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c':
			for i < len(s) {
				j := strings.IndexByte(s[i:], '\n')
				if j < 0 {
					i = len(s)
					break
				}
				i += j + 1
				if i < 2 || s[i-2] != '\\' {
					break
				}
			}
		case 'r', 'R':
			skipBlank()
			on("r", restOfLine())
		case 'w', 'W':
			skipBlank()
			on("w", restOfLine())
		case 'e':
			skipBlank()
			on("e", restOfLine())
		case 's', 'y':
			if i >= len(s) {
				return
			}
			d := s[i]
			i++
			if d == '\n' || d == '\\' || !delimited(d) || !delimited(d) {
				return
			}
			if c == 'y' {
				continue
			}
			for i < len(s) {
				f := s[i]
				switch {
				case f == 'e':
					on("s///e", "")
					i++
					continue
				case f == 'w':
					i++
					skipBlank()
					on("w", restOfLine())
				case strings.IndexByte("gpiImM0123456789", f) >= 0:
					i++
					continue
				}
				break
			}
		default:
			return
		}
	}
}

var (
	reAwkSystem  = lazyRegexp(`\bsystem\s*\(`)
	reAwkSysLit  = lazyRegexp(`\bsystem\s*\(\s*"((?:[^"\\]|\\.)*)"`)
	reAwkGetline = lazyRegexp(`"((?:[^"\\]|\\.)*)"\s*\|&?\s*getline`)
	reAwkPipeTo  = lazyRegexp(`\|&?\s*"((?:[^"\\]|\\.)*)"`)
	reAwkPipe    = lazyRegexp(`[^|]\|&?[^|]|\|&`)
	reAwkPrintTo = lazyRegexp(`\bprintf?\b[^;}\n]*?[^>]>>?\s*"((?:[^"\\]|\\.)*)"`)
)

// awkProgram marks an awk program that runs commands (system(), pipes to
// or from commands) and records the files it prints to.
func (b *build) awkProgram(prog string) {
	runs := false
	if reAwkSystem().MatchString(prog) {
		runs = true
		b.mark(MarkExecFlag, "awk system()")
		for _, m := range reAwkSysLit().FindAllStringSubmatch(prog, -1) {
			b.lenientString(field{val: awkUnquote(m[1])}, "awk system()")
		}
	}
	if reAwkPipe().MatchString(" " + prog + " ") {
		runs = true
		if strings.Contains(prog, "getline") {
			b.mark(MarkExecFlag, "awk |getline")
		}
		b.mark(MarkExecFlag, "awk pipe")
		for _, m := range reAwkGetline().FindAllStringSubmatch(prog, -1) {
			b.lenientString(field{val: awkUnquote(m[1])}, "awk pipe")
		}
		for _, m := range reAwkPipeTo().FindAllStringSubmatch(prog, -1) {
			b.lenientString(field{val: awkUnquote(m[1])}, "awk pipe")
		}
	}
	if runs {
		b.mark(MarkInlineCode, b.name+" program")
	}
	for _, m := range reAwkPrintTo().FindAllStringSubmatch(prog, -1) {
		b.mark(MarkExecFlag, "awk print >")
		if f := awkUnquote(m[1]); f != "/dev/stdout" && f != "/dev/stderr" && f != "-" {
			b.write(field{val: f})
		}
	}
}

func awkUnquote(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			default:
				sb.WriteByte(s[i])
			}
			continue
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}
