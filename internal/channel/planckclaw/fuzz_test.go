package planckclaw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseToolLine: a line of claw_in is refused, or is one of the two
// discovery words, or a call whose name is bounded and whose input is a
// compact JSON object.
func FuzzParseToolLine(f *testing.F) {
	for _, s := range []string{"list_tools", "__list_tools__", "list_tools\r", "time\t{}", "shell\t{\"command\":\"ls\"}", "x\t[1]",
		"\t{}", "a\tb\tc", "name\t", "shell\t {\"a\" : 1 } ", "n\t{\"a\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := ParseToolLine(line)
		if err != nil {
			return
		}
		if req.List {
			if w := string(bytes.TrimSuffix(line, []byte("\r"))); w != "list_tools" && w != "__list_tools__" {
				t.Fatalf("%q listed the tools", line)
			}
			return
		}
		if !toolNameRe().MatchString(req.Name) || !bytes.HasPrefix(line, []byte(req.Name+"\t")) {
			t.Fatalf("name %q from %q", req.Name, line)
		}
		var obj map[string]any
		if err := json.Unmarshal(req.Input, &obj); err != nil || obj == nil {
			t.Fatalf("input %q is not an object", req.Input)
		}
		var b bytes.Buffer
		json.Compact(&b, req.Input)
		if !bytes.Equal(b.Bytes(), req.Input) {
			t.Fatalf("input %q is not compact", req.Input)
		}
	})
}

// FuzzInteract: Escape and Unescape are inverse; an encoded reply is one
// line that parses back to its id and text; a line of interact_in is
// refused or has a bounded numeric id.
func FuzzInteract(f *testing.F) {
	for _, s := range []string{"hello", "two\nlines", "tab\there", `back\slash`, `\n literal`, "\\", "é\x00", "\xff"} {
		f.Add("1234567890123456789", s)
	}
	f.Add("12a", "x")
	f.Fuzz(func(t *testing.T, id, text string) {
		if got := Unescape(Escape(text)); got != text {
			t.Fatalf("Unescape(Escape(%q)) = %q", text, got)
		}
		line := EncodeInteract(id, text)
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			if !strings.Contains(id, "\n") {
				t.Fatalf("reply %q is not one line", line)
			}
		}
		pid, ptext, err := ParseInteractLine(line[:len(line)-1])
		if channelIDRe().MatchString(id) {
			if want := strings.ToValidUTF8(text, "\uFFFD"); err != nil || pid != id || ptext != want {
				t.Fatalf("round trip of %q %q: %q %q %v", id, text, pid, ptext, err)
			}
		}
		// any line: refused, or a bounded id and valid text
		raw := []byte(id + "\t" + text)
		if pid, ptext, err := ParseInteractLine(raw); err == nil {
			if !channelIDRe().MatchString(pid) || !utf8.ValidString(ptext) {
				t.Fatalf("parsed %q to %q %q", raw, pid, ptext)
			}
		}
	})
}

// FuzzEncodeResult: a result frame is valid UTF-8, bounded, and ends in
// its only blank line.
func FuzzEncodeResult(f *testing.F) {
	for _, s := range []string{"", "ok", "a\n\nb", "\n\n\n", "x\r\n\r\ny", "\xff\xfe", strings.Repeat("é", MaxResult)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out := EncodeResult(text)
		if !utf8.Valid(out) || len(out) > MaxResult+64 {
			t.Fatalf("frame of %d bytes, valid %v", len(out), utf8.Valid(out))
		}
		if !bytes.HasSuffix(out, []byte("\n\n")) || bytes.Count(out, []byte("\n\n")) != 1 || bytes.HasPrefix(out, []byte("\n")) {
			t.Fatalf("frame %q", out)
		}
	})
}
